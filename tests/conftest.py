import os
import sys

sys.path.insert(0, os.path.dirname(__file__))


def pytest_report_header(config):
    """Which scrapy_deboiler is under test: CI tests the installed wheel."""
    import scrapy_deboiler
    from scrapy_deboiler import _content

    return (f"scrapy_deboiler {scrapy_deboiler.__version__} from {os.path.dirname(scrapy_deboiler.__file__)}"
            f" (compiled walks: {_content._speedups is not None})")
