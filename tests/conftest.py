import os
import sys

sys.path.insert(0, os.path.dirname(__file__))


def pytest_report_header(config):
    """Which scrapy_deboiler is under test: CI tests the installed wheel."""
    import scrapy_deboiler
    from scrapy_deboiler import _content

    return (f"scrapy_deboiler {scrapy_deboiler.__version__} from {os.path.dirname(scrapy_deboiler.__file__)}"
            f" (compiled walks: {_content._speedups is not None})")


# The Spark tests need pyspark (the ``spark`` extra): one CI session installs
# it and runs them; elsewhere they are not collected (not skipped: a
# session without pyspark does not count them as passed).
import importlib.util  # noqa: E402

collect_ignore_glob = [] if importlib.util.find_spec("pyspark") is not None else ["test_spark*.py"]
