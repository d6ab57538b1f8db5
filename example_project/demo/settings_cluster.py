"""Settings of the demo project for a crawl over many processes: the
scrapy-redis scheduler and dupefilter share one request queue, and
scrapy-deboiler shares one model a site, through the same Redis.

    REDIS_URL=redis://127.0.0.1:6379/0 \\
    SCRAPY_SETTINGS_MODULE=demo.settings_cluster scrapy crawl cluster   # in N processes

The queue and the dupefilter outlive the crawl (SCHEDULER_PERSIST): before
crawling the same sites again with the same Redis, delete them
(``redis-cli del cluster:requests cluster:dupefilter``), or every URL,
start URLs included, is taken for one seen and nothing is crawled.
"""

import os

from .settings import *  # noqa: F401,F403

REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")

# scrapy-redis: one request queue and one dupefilter for all workers. Keep
# them when a worker closes (SCHEDULER_PERSIST), or the first worker to
# finish would delete the queue the others still crawl.
SCHEDULER = "scrapy_redis.scheduler.Scheduler"
DUPEFILTER_CLASS = "scrapy_redis.dupefilter.RFPDupeFilter"
SCHEDULER_PERSIST = True
# A RedisSpider never closes by itself: close a worker idle this long (s),
# counted from its start or its last response. An idle worker looks at the
# queue every 5 s (Scrapy's heartbeat): at 10 s a worker started before the
# start URLs were pushed, or one the others left no request to, closed
# before it had any work.
MAX_IDLE_TIME_BEFORE_CLOSE = int(os.environ.get("MAX_IDLE_TIME_BEFORE_CLOSE", "30"))

# scrapy-deboiler: pool the pages of each site in the same Redis and learn
# one model a site for the whole cluster (README, "Scaling out").
DEBOILER_REDIS_URL = REDIS_URL
