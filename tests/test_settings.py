"""The table of DEBOILER_* settings (``_settings.SETTINGS``): what it derives,
and docs/settings.md documenting exactly its settings with their defaults."""

from __future__ import annotations

import dataclasses
import logging
import re
from pathlib import Path

import pytest
from scrapy.settings import Settings

from scrapy_deboiler._settings import (
    DEFAULTS,
    SETTINGS,
    DeboilerSettings,
    DeboilerSettingsError,
    FieldName,
    read_settings,
)

DOC = Path(__file__).resolve().parent.parent / "docs" / "settings.md"


def documented() -> dict[str, tuple[str, str]]:
    """Each setting in the tables of docs/settings.md: (its type cell, its
    default cell). A row may document several settings, their defaults then
    given in the same order, comma-separated."""
    rows: dict[str, tuple[str, str]] = {}
    for line in DOC.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        names = re.findall(r"`(DEBOILER_\w+)`", cells[0]) if line.startswith("| `DEBOILER_") else []
        if not names:
            continue
        assert len(cells) == 4, line
        defaults = cells[2].split(", ") if len(names) > 1 else [cells[2]]
        assert len(defaults) == len(names), line
        for name, default in zip(names, defaults):
            assert name not in rows, f"{name} is documented twice"
            rows[name] = (cells[1], default)
    return rows


def as_documented(cell: str, value: object) -> bool:
    """Whether a default cell (`"x"` or `x`, `120` for 120.0) says ``value``."""
    m = re.fullmatch(r"`([^`]*)`", cell)
    if m is None:
        return False
    text = m.group(1)
    if value is None or isinstance(value, bool):
        return text == repr(value)
    if isinstance(value, (int, float)):
        return re.fullmatch(r"[0-9.]+", text) is not None and float(text) == value
    return text.strip('"') == value


def test_the_doc_documents_exactly_the_tables_settings_with_their_defaults():
    doc = documented()
    assert set(doc) == {s.name for s in SETTINGS}, (set(doc) ^ {s.name for s in SETTINGS})
    wrong = []
    for s in SETTINGS:
        type_cell, default_cell = doc[s.name]
        if s.when_unset is not None:
            # A default worked out when the crawl opens: the doc says how,
            # and that None (the default) asks for it.
            ok = "`None` (the default)" in type_cell
        else:
            ok = as_documented(default_cell, s.default)
        if not ok:
            wrong.append((s.name, s.default, type_cell, default_cell))
    assert not wrong, wrong


def test_the_table_gives_the_defaults_and_the_fields():
    assert list(DEFAULTS) == [s.name for s in SETTINGS]
    assert [f.name for f in dataclasses.fields(DeboilerSettings)] == [s.attribute for s in SETTINGS]
    for s in SETTINGS:
        assert s.name.startswith("DEBOILER_") and s.attribute == s.name.removeprefix("DEBOILER_").lower()
        assert s.doc and DEFAULTS[s.name] == s.default
        assert (s.default is None) >= (s.when_unset is not None)


def test_every_default_reads_as_itself():
    cfg = read_settings(Settings(), check_paths=False)
    for s in SETTINGS:
        value = getattr(cfg, s.attribute)
        if s.when_unset is not None:
            assert value == s.when_unset()
        elif s.name == "DEBOILER_STORE":
            assert value.__module__ + "." + value.__name__ == "scrapy_deboiler._store.SignatureStore"
        else:
            assert value == s.default, s.name


@pytest.mark.parametrize(("name", "value", "message"), [
    ("DEBOILER_MIN_PAGES", "1", "DEBOILER_MIN_PAGES = '1': must be an integer >= 2"),
    ("DEBOILER_THREADS", 65, "DEBOILER_THREADS = 65: must be an integer from 1 to 64"),
    ("DEBOILER_REDIS_TIMEOUT", 61, "DEBOILER_REDIS_TIMEOUT = 61: must be a number of seconds over 0 and at most 60"),
    ("DEBOILER_ENCODING_FIELD", 3, "DEBOILER_ENCODING_FIELD = 3: expected a field name (a non-empty string"),
    ("DEBOILER_COMMENTS_FIELD", "deboiler", "DEBOILER_STATUS_FIELD = 'deboiler': is also DEBOILER_COMMENTS_FIELD"),
    ("DEBOILER_MODE", 1, "DEBOILER_MODE = 1: must be one of 'boilerplate', 'content'"),
    ("DEBOILER_REDIS_URL", "redis", "DEBOILER_REDIS_URL = 'redis': expected a redis://, rediss:// or unix:// URL"),
])
def test_a_bad_value_is_named_with_the_setting(name, value, message, caplog):
    with pytest.raises(DeboilerSettingsError) as err:
        read_settings(Settings({name: value}), check_paths=False)
    assert str(err.value).startswith(message)
    assert [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR] == [
        f"scrapy-deboiler: {err.value}; the crawl stops before it starts"]


def test_written_fields_are_the_output_fields():
    written = {s.name for s in SETTINGS if isinstance(s.kind, FieldName) and s.kind.written}
    assert {"DEBOILER_TEXT_FIELD", "DEBOILER_CLEAN_HTML_FIELD", "DEBOILER_TITLE_FIELD"} <= written
    assert not written & {"DEBOILER_URL_FIELD", "DEBOILER_HTML_FIELD"}


def test_an_unknown_name_is_warned_of_with_the_likely_one(tmp_path, caplog):
    read_settings(Settings({"DEBOILER_REDIS_TIMOUT": 3, "DEBOILER_SIGNATURES_DIR": str(tmp_path)}))
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warned == ["scrapy-deboiler: unknown setting DEBOILER_REDIS_TIMOUT (did you mean DEBOILER_REDIS_TIMEOUT?)"]
