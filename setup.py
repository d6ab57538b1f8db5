import os

from setuptools import Extension, find_packages, setup


def extensions():
    """The optional compiled walks (scrapy_deboiler/_speedups.pyx).

    Built against lxml's own headers; when Cython, lxml or a C compiler is
    missing, or SCRAPY_DEBOILER_PURE_PYTHON is set, the package installs
    without it and uses the pure-Python walks, which give the same results.
    """
    if os.environ.get("SCRAPY_DEBOILER_PURE_PYTHON"):
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


setup(
    name="scrapy-deboiler",
    version="0.1.0",
    description="Learn each website's boilerplate from its own pages and strip it, in Scrapy or from the command line.",
    long_description=open("README.md", encoding="utf-8").read(),
    long_description_content_type="text/markdown",
    packages=find_packages(include=["scrapy_deboiler", "scrapy_deboiler.*"]),
    python_requires=">=3.9",
    install_requires=[
        "lxml>=5.0,<7",
        "w3lib>=2.1,<3",
    ],
    extras_require={
        "scrapy": ["scrapy>=2.14,<3", "itemadapter>=0.8", "parsel>=1.8"],
        "test": [
            "pytest>=8,<10",
            "pytest-twisted>=1.14,<2",
            "hypothesis>=6,<7",
            "selenium>=4.20,<5",
            "scrapy>=2.14,<3",
            "itemadapter>=0.8",
            "parsel>=1.8",
        ],
        "bench": ["deboiler==2023.46.150", "trafilatura>=2,<3"],
        "train": ["numpy>=1.24", "scikit-learn>=1.3,<2"],
    },
    ext_modules=extensions(),
    entry_points={"console_scripts": ["scrapy-deboiler=scrapy_deboiler._cli:main"]},
    classifiers=[
        "Framework :: Scrapy",
        "Programming Language :: Python :: 3",
        "Topic :: Text Processing :: Markup :: HTML",
    ],
)
