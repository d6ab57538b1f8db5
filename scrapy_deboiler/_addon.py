"""A Scrapy add-on that turns scrapy-deboiler on: ``ADDONS = {"scrapy_deboiler.Addon": 100}``."""

from __future__ import annotations

from scrapy.settings import SETTINGS_PRIORITIES, BaseSettings

from ._exporters import FastJsonItemExporter, FastJsonLinesItemExporter
from ._middleware import DeboilerSpiderMiddleware
from ._pipeline import DeboilerPipeline
from ._settings import DeboilerSettingsError, enabled, fast_exporters

__all__ = ["Addon"]

#: The feed formats whose Scrapy exporters the add-on replaces by ones that
#: write the same JSON values through orjson (``_exporters``).
_EXPORTERS = {"json": FastJsonItemExporter, "jsonlines": FastJsonLinesItemExporter,
              "jsonl": FastJsonLinesItemExporter, "jl": FastJsonLinesItemExporter}


class Addon:
    """Enables the spider middleware and the pipeline. The pipeline runs
    late (800) so earlier pipelines see the raw item and later ones (and
    feeds) the cleaned one.

    With ``DEBOILER_FAST_EXPORTERS = True`` it also makes the JSON feed
    formats' exporters write through orjson (the same JSON values, other
    spacing): Scrapy's encoder escapes the pages of text the pipeline adds
    at about 2 ns a character, 6-9 % of a crawl of full-size pages. Off by
    default: a cleaning plugin does not change the bytes of a user's feeds
    unasked. A format the project (or another add-on before this one) gives
    its own exporter in ``FEED_EXPORTERS`` keeps it. With
    ``DEBOILER_ENABLED`` off the feeds are left alone too."""

    def update_settings(self, settings: BaseSettings) -> None:
        settings.set_in_component_priority_dict("SPIDER_MIDDLEWARES", DeboilerSpiderMiddleware, 800)
        settings.set_in_component_priority_dict("ITEM_PIPELINES", DeboilerPipeline, 800)
        try:
            on = enabled(settings) and fast_exporters(settings)
        except DeboilerSettingsError:  # the middleware stops the crawl at start, naming it
            on = False
        exporters = settings["FEED_EXPORTERS"]
        if on and isinstance(exporters, BaseSettings):  # per format priorities (Scrapy's own dict settings)
            addon = SETTINGS_PRIORITIES["addon"]
            for fmt, cls in _EXPORTERS.items():
                if (exporters.getpriority(fmt) or 0) < addon:
                    exporters.set(fmt, cls, priority=addon)
