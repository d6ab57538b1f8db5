"""Where a crawl's page work runs: on the reactor thread (small pages), in
worker processes (DEBOILER_PROCESSES), or in a small thread pool; and the
tasks themselves, which run in any of them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from twisted.internet.defer import Deferred, fail, succeed
from twisted.internet.threads import deferToThreadPool
from twisted.python.failure import Failure
from twisted.python.threadpool import ThreadPool

from ._clean import CleanResult, Page, clean_page, summary_of
from ._executor import ProcessCleaner, WorkersGone
from ._fit_clean import clean_pages, fit_pages
from ._model import FitParams, SiteModel
from ._wire import CleanOptions

__all__ = ["CleanJob", "Workplace", "clean_one", "clean_parsed", "fit_site", "sign_page", "sign_with_summary"]


@dataclass(frozen=True)
class CleanJob:
    """One page's clean as the pipeline asks for it, wherever it runs: the
    page (checked against the limits already), its site's model (or none),
    whether its signatures are wanted too (``learn``), and the options."""

    html: str | bytes
    url: str
    encoding: str | None
    model: SiteModel | None
    params: FitParams
    learn: bool
    options: CleanOptions

    def run(self) -> tuple[CleanResult, frozenset[str] | None]:
        """The clean, here (``clean_one``, looked up when called: tests
        wrap it)."""
        return clean_one(self.html, self.url, self.encoding, self.model, self.params, self.learn, self.options)

    def run_parsed(self, page: Page) -> tuple[CleanResult, frozenset[str] | None]:
        """The clean of this page parsed already (``sign_page``)."""
        return clean_parsed(page, self.model, self.params, self.learn, self.options)


def clean_one(html: str | bytes, url: str, encoding: str | None, model: SiteModel | None,
              params: FitParams, learn: bool, options: CleanOptions) -> tuple[CleanResult, frozenset[str] | None]:
    """One page of a site with a model (or none, in content mode); with
    ``learn`` also its signatures. Pages reach it checked against the
    limits already (the pipeline's intake)."""
    return clean_parsed(Page(html, url, encoding, params.scheme, limits=None), model, params, learn, options)


def fit_site(pages: list[tuple[str, str | bytes, str | None]], params: FitParams,
             options: CleanOptions) -> tuple[SiteModel, list[CleanResult]]:
    """Fit a site's model and clean its pages, parsing each page once
    (checked against the limits already)."""
    parsed = [Page(html, url, enc, params.scheme, limits=None) for url, html, enc in pages]
    model = fit_pages(parsed, params, options.metadata)
    return model, clean_pages(parsed, model, **options.kwargs())


def sign_page(html: str | bytes, url: str, encoding: str | None, params: FitParams) -> Page:
    """A held page parsed and signed (to pool its signatures in Redis mode,
    or to fit on when a fit task failed), kept parsed for its clean."""
    page = Page(html, url, encoding, params.scheme, limits=None)
    page.signatures  # noqa: B018 (computed here, off the reactor thread)
    return page


def sign_with_summary(html: str | bytes, url: str, encoding: str | None, params: FitParams,
                      meta: bool) -> tuple[Page, dict | None]:
    """``sign_page``, and with ``meta`` the page's metadata summary
    (``page_summary``) for its site's fit."""
    page = sign_page(html, url, encoding, params)
    return page, summary_of(page) if meta and page.skipped is None else None


def clean_parsed(page: Page, model: SiteModel | None, params: FitParams, learn: bool,
                 options: CleanOptions) -> tuple[CleanResult, frozenset[str] | None]:
    """``clean_one`` for a page parsed already (``sign_page``)."""
    sigs = page.signatures if learn else None
    return clean_page(page, model, **options.kwargs()), sigs


class Workplace:
    """The one place that decides where a task runs. Worker processes are
    used while they work; a task they were given up with (they could not
    start; it never reached one) goes to the threads."""

    def __init__(self, threads: int, processes: int, inline_max: int) -> None:
        self.threads = threads
        self.processes = processes
        #: Pages up to this many characters are cleaned on the reactor thread.
        self.inline_max = inline_max
        self.pool: ThreadPool | None = None
        self.cleaner: ProcessCleaner | None = None

    def start(self) -> None:
        self.pool = ThreadPool(minthreads=0, maxthreads=self.threads, name="deboiler")
        self.pool.start()
        if self.processes:
            self.cleaner = ProcessCleaner(self.processes)

    def stop(self) -> None:
        if self.pool is not None:
            self.pool.stop()
            self.pool = None
        if self.cleaner is not None:
            self.cleaner.shutdown()
            self.cleaner = None

    @property
    def workers(self) -> ProcessCleaner | None:
        """The worker processes, while they work (None without them, or
        once given up)."""
        cleaner = self.cleaner
        return cleaner if cleaner is not None and cleaner.broken is None else None

    def cleaning(self, job: CleanJob, ref: str | None = None) -> Deferred:
        """``job`` in a worker process or in the threads. ``ref``: a held
        page a worker signed and keeps parsed, cleaned before newly arrived
        pages."""
        workers = self.workers
        if workers is not None:
            return workers.clean(job.html, job.url, job.encoding, job.model, job.params, job.learn, job.options,
                                 ref=ref, urgent=ref is not None).addErrback(self._elsewhere, job.run, ())
        return self.in_pool(job.run)

    def fitting(self, *args: Any) -> Deferred:
        """``fit_site(*args)`` in a worker process or in the threads."""
        workers = self.workers
        if workers is not None:
            return workers.fit(*args).addErrback(self._elsewhere, fit_site, args)
        return self.in_pool(fit_site, *args)

    def _elsewhere(self, failure: Failure, f: Callable[..., Any], args: tuple) -> Any:
        if failure.check(WorkersGone) and self.pool is not None:
            return self.in_pool(f, *args)
        return failure


    def in_pool(self, f: Callable[..., Any], *args: Any) -> Deferred:
        from twisted.internet import reactor

        if self.pool is None:  # used before open_spider (or after close): a one-off pool
            return deferToThreadPool(reactor, reactor.getThreadPool(), f, *args)
        return deferToThreadPool(reactor, self.pool, f, *args)

    def clean(self, job: CleanJob, parsed: Page | None = None, ref: str | None = None) -> Deferred:
        """Where a page's clean runs: a page parsed here already (Redis
        mode, a split fit) in the threads unless workers work; a page a
        worker keeps parsed (``ref``) there; others on the reactor thread up
        to DEBOILER_INLINE_MAX_BYTES, else in a worker or the threads."""
        if parsed is not None and self.workers is None:
            return self.in_pool(job.run_parsed, parsed)
        if ref is not None:
            return self.cleaning(job, ref=ref)
        if len(job.html) <= self.inline_max:
            try:
                return succeed(job.run())
            except Exception:
                return fail()
        return self.cleaning(job)
