"""A Scrapy add-on that turns scrapy-deboiler on: ``ADDONS = {"scrapy_deboiler.Addon": 100}``."""

from __future__ import annotations

from scrapy.settings import BaseSettings

from ._middleware import DeboilerSpiderMiddleware
from ._pipeline import DeboilerPipeline

__all__ = ["Addon"]


class Addon:
    """Enables the spider middleware and the pipeline. The pipeline runs
    late (800) so earlier pipelines see the raw item and later ones (and
    feeds) the cleaned one."""

    def update_settings(self, settings: BaseSettings) -> None:
        settings.set_in_component_priority_dict("SPIDER_MIDDLEWARES", DeboilerSpiderMiddleware, 800)
        settings.set_in_component_priority_dict("ITEM_PIPELINES", DeboilerPipeline, 800)
