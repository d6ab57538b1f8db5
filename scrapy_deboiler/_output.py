"""What an item leaves with: its clean fields and status, or unchanged with a
reason; never lost."""

from __future__ import annotations

import logging
from collections.abc import MutableMapping, Sequence
from typing import Any

from itemadapter import ItemAdapter

from ._clean import CleanResult
from ._executor import WorkerError
from ._middleware import _lacks
from ._model import SiteModel
from ._pipeline_state import PipelineBase, _Held, _HeldPage, _Site
from ._status import page_status

__all__ = ["Output"]

logger = logging.getLogger(__name__)

#: Notes of a page whose declared encoding could not read it: its raw HTML
#: stays in the item whatever DEBOILER_KEEP_HTML says.
_LOSSY = frozenset(("decode-errors", "encoding-fallback", "replacement-characters"))
#: A site's first pages cleaned with its model, the characters it matched
#: on them the baseline; a later page with under 1/``UNMATCHED_RATIO`` of
#: them (where the baseline is ``MIN_TYPICAL`` or more) hardly matched its
#: template. (Not the subtrees' count: a page in another language lost as
#: many, its "OK" and "+" buttons, and kept its banner and footer.)
BASELINE_PAGES = 5
MIN_TYPICAL = 40
UNMATCHED_RATIO = 3
#: Said once such pages are this many and a tenth of those checked.
UNMATCHED_PAGES = 5


class Output(PipelineBase):
    """Writes each item's clean fields and status, or passes it on unchanged
    with a reason: never loses one."""

    def _finish(self, site: _Site, item: Any, cleaned: tuple[CleanResult, SiteModel | None],
                html: str | bytes, notes: Sequence[str] = ()) -> Any:
        """Write the clean fields; never lose the item. ``cleaned``: the
        result and the model it was cleaned with (the site's may have
        changed since); ``notes``: the middleware's, on decoding the response."""
        result, model = cleaned
        all_notes = [*notes, *(n for n in result.notes if n not in notes)]
        status = page_status(result, site=site.name, model=model, source=site.source, mode=self.mode,
                             reason=site.reason, html_chars=len(html), notes=all_notes)
        state = status["status"]
        if "fallback" in status:
            self._inc(f"fallback/{status['fallback']}")
        for note in all_notes:
            self._inc(f"notes/{note}")
        if "replacement-characters" in all_notes:
            self._site_log("deboiler: a page of %s came as text whose characters were already lost (U+FFFD): "
                           "decoded with the wrong encoding before the pipeline; give the item the response's "
                           "bytes, or leave the field to DeboilerSpiderMiddleware, which reads them again "
                           "(stat deboiler/notes/replacement-characters)", site.name)
        site.pages += 1
        site.bytes_out += len(result.html)
        fields = {self.text_field: result.text, self.clean_html_field: result.html,
                  self.status_field: status}
        if self.comments_field:
            fields[self.comments_field] = result.comments
        if self.markdown:
            fields[self.markdown_field] = result.markdown
        if site.report is not None:
            site.report.add_page(status["status"], len(html), len(result.html), result.removed_blocks)
        lossy = not _LOSSY.isdisjoint(all_notes)
        if not self._write(item, fields, keep_raw=lossy):
            return item
        self._write_title(item, result.title)
        if self.metadata:
            self._write_unless_held(item, self.metadata_field, result.metadata, "metadata", "the page's metadata")
        if lossy and not self.keep_html:
            self._keep_raw(item, html, status)
        self._inc(f"items_{state}")
        self._inc("bytes_out", len(result.html))
        if model is not None and state == "cleaned" and "fallback" not in status:
            self._coverage(site, result.model_chars)
        return item

    def _coverage(self, site: _Site, removed: int) -> None:
        """Count the pages whose template the site's model hardly matches:
        under a third of the text (``removed``, characters) it matched on
        the site's first pages cleaned (a page of another language or
        layout than those it was fitted on: a host's Czech pages kept their
        cookie banner and footer under a model of its English ones, all
        "cleaned"). Said once a site, where they are five or more and a
        tenth of its later pages."""
        if len(site.removed_first) < BASELINE_PAGES:
            site.removed_first.append(removed)
            return
        typical = sorted(site.removed_first)[BASELINE_PAGES // 2]
        site.checked += 1
        if typical < MIN_TYPICAL or UNMATCHED_RATIO * removed >= typical:
            return
        site.unmatched += 1
        self._inc("items_template_unmatched")
        if not site.told_unmatched and site.unmatched >= UNMATCHED_PAGES and site.unmatched * 10 >= site.checked:
            site.told_unmatched = True
            # INFO: a site of two layouts (galleries beside articles) matches less on one, rightly.
            logger.info("deboiler: %s: %d of its %d later pages matched under a third of the template text "
                        "its model matched on its first pages (stat deboiler/items_template_unmatched): pages "
                        "in another language or layout than those it was fitted on may keep their template; "
                        "DEBOILER_SITE_FIELD can name their site apart (docs/pipeline.md)",
                        site.name, site.unmatched, site.checked)

    def _write_title(self, item: Any, title: str) -> None:
        """The page's headline, unless the item holds a title of its own
        (many spiders yield their own, and DEBOILER_TITLE_FIELD may name it)."""
        self._write_unless_held(item, self.title_field, title, "title", "the page's headline")

    def _write_unless_held(self, item: Any, name: str, value: Any, stat: str, what: str) -> None:
        """Write ``name`` unless the item holds a value of its own there
        (not missing, None or empty), which stays (stat ``items_STAT_kept``).
        An item class that cannot take the field gets the other fields as
        before, with one INFO line a class: nobody asked for this field in
        the item's class, so no warning."""
        adapter = ItemAdapter(item)
        try:
            if not _lacks(adapter.get(name)):
                self._inc(f"items_{stat}_kept")
                return
            adapter[name] = value
        except (KeyError, TypeError, AttributeError) as e:
            self._inc(f"items_without_{stat}")
            if (type(item), name) not in self._untitled:
                self._untitled.add((type(item), name))
                logger.info("deboiler: %s items cannot hold %s (%s): declare it to get %s",
                            type(item).__name__, name, e, what)

    def _keep_raw(self, item: Any, html: str | bytes, status: dict) -> None:
        """A page the declared encoding could not read keeps its raw HTML,
        so it can be decoded again. Bytes are kept as latin-1 text (one
        character a byte, ``.encode("latin-1")`` gives them back): JSON
        feeds cannot store bytes, and without DEBOILER_KEEP_HTML nothing
        downstream expects this field."""
        self._inc("items_raw_html_kept")
        if isinstance(html, bytes):
            try:
                ItemAdapter(item)[self.html_field] = html.decode("latin-1")
            except (KeyError, TypeError, AttributeError):
                return
            status["raw_html"] = "latin-1"
        else:
            status["raw_html"] = "kept"

    def _write(self, item: Any, fields: dict[str, Any], keep_raw: bool = False) -> bool:
        """Write the clean fields the item's class can hold. An item that
        cannot hold the text passes on unchanged (what was written is taken
        back); one that lacks only other fields (a class declaring all but
        ``clean_markdown``) gets the rest. Either way one WARNING a class."""
        adapter = ItemAdapter(item)
        written: list[tuple[str, bool, Any]] = []
        missing: list[str] = []
        error: Exception | None = None
        for key, value in fields.items():
            try:
                had = key in adapter
                old = adapter[key] if had else None
                adapter[key] = value
                written.append((key, had, old))
            except (KeyError, TypeError, AttributeError) as e:
                missing.append(key)
                error = error or e
        if not missing:
            if not self.keep_html and not keep_raw:
                self._drop_html(adapter)
            return True
        whole = self.text_field in missing
        if type(item) not in self._unwritable:
            self._unwritable.add(type(item))
            logger.warning(
                "deboiler: cannot add %s to %s items (%s): declare %s, or rename the fields with "
                "DEBOILER_TEXT_FIELD, DEBOILER_CLEAN_HTML_FIELD, DEBOILER_STATUS_FIELD ...; %s",
                ", ".join(missing), type(item).__name__, error, "them" if len(missing) > 1 else "it",
                "such items pass through unchanged" if whole else "the other fields are written")
        if not whole:
            self._inc("items_partly_written")
            if not self.keep_html and not keep_raw:
                self._drop_html(adapter)
            return True
        for key, had, old in reversed(written):  # nothing half-written
            try:
                if had:
                    adapter[key] = old
                else:
                    del adapter[key]
            except (KeyError, TypeError, AttributeError, NotImplementedError):
                pass
        self._inc("items_unwritable")
        return False

    def _drop_html(self, adapter: ItemAdapter) -> None:
        """The HTML field goes from mappings (dicts, scrapy.Item); objects
        (dataclasses, attrs, pydantic) keep the attribute as None, since
        their generated methods (repr, asdict, eq) expect every field."""
        if self.html_field not in adapter:
            return
        if isinstance(adapter.item, MutableMapping):
            try:
                del adapter[self.html_field]
                return
            except (KeyError, TypeError, AttributeError, NotImplementedError):
                pass
        try:
            adapter[self.html_field] = None
        except Exception:
            pass

    def _unchanged(self, item: Any, state: str, reason: str, **extra: Any) -> Any:
        """Pass ``item`` on without clean fields; ``state`` is error,
        unchanged or skipped (each with its items_ stat)."""
        self._inc(f"items_{state}")
        try:
            ItemAdapter(item)[self.status_field] = {"status": state, **extra, "reason": reason}
        except Exception:
            pass
        return item

    def _pass_unchanged(self, site: _Site, h: _Held, reason: str) -> None:
        """Release a held item without cleaning it (no model can be had)."""
        if h.waiter.called:
            return
        self.held -= 1
        self._inc("items_unchanged")
        if site.report is not None:
            site.report.add_page("unchanged", len(h.page.html), len(h.page.html), [])
        site.pages += 1
        site.bytes_out += len(h.page.html)
        try:
            ItemAdapter(h.item)[self.status_field] = {
                "status": "unchanged", "site": site.name, "reason": reason}
        except Exception:
            pass
        h.waiter.callback(h.item)

    def _resolve_page(self, site: _Site, page: _HeldPage,
                      cleaned: tuple[CleanResult, SiteModel | None]) -> None:
        shared = sum(1 for h in page.items if not h.waiter.called) - 1
        if shared > 0:  # the page's other items held with it: one clean for all
            self._inc("items_shared_clean", shared)
        for h in page.items:
            self._resolve(site, h, cleaned)

    def _resolve(self, site: _Site, h: _Held, cleaned: tuple[CleanResult, SiteModel | None]) -> None:
        if h.waiter.called:
            return
        self.held -= 1
        try:
            item = self._finish(site, h.item, cleaned, h.page.html, h.page.notes)
        except Exception as e:  # never lose the item
            logger.exception("deboiler: writing %s failed", h.page.url)
            self._inc("errors")
            item = self._unchanged(h.item, "error", f"{type(e).__name__}: {e}")
        h.waiter.callback(item)

    def _fail(self, site: _Site, held: list[_Held], failure: Any) -> None:
        urls = list(dict.fromkeys(h.page.url for h in held)) or ["?"]
        pages = urls[0] if len(urls) == 1 else f"{len(urls)} pages of {site.name or '?'} (the first: {urls[0]})"
        # A worker's error carries its own message; anything else is a bug here: its traceback.
        why = (f"{failure.type.__name__}: {failure.getErrorMessage()}" if failure.check(WorkerError)
               else failure.getTraceback())
        logger.error("deboiler: fitting or cleaning %s failed; %d item(s) go on unchanged: %s", pages, len(held), why)
        self._inc("errors")
        for h in held:
            if not h.waiter.called:
                self.held -= 1
                h.waiter.callback(self._unchanged(
                    h.item, "error", f"{failure.type.__name__}: {failure.getErrorMessage()}", site=site.name))
