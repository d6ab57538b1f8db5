"""Settings of the demo project: scrapy-deboiler on through its add-on."""

BOT_NAME = "demo"
SPIDER_MODULES = ["demo.spiders"]
NEWSPIDER_MODULE = "demo.spiders"

ADDONS = {"scrapy_deboiler.Addon": 100}
# Each site is learned from its first DEBOILER_MIN_PAGES pages (default 20).
# Signature files go to .scrapy/deboiler inside this project (the default).

ROBOTSTXT_OBEY = True
CONCURRENT_REQUESTS = 16
CONCURRENT_REQUESTS_PER_DOMAIN = 8
TWISTED_REACTOR = "twisted.internet.asyncioreactor.AsyncioSelectorReactor"
FEED_EXPORT_ENCODING = "utf-8"
TELNETCONSOLE_ENABLED = False
LOG_LEVEL = "INFO"
