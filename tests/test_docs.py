"""The README and docs/ as a reader meets them: every relative link leads to a
file and a heading that exist, the README stays short, and its two commands
are the scripts CI and the demo run."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _outside_code(text: str) -> str:
    """The text without fenced code blocks (their `# comments` are no headings)."""
    return re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)


def anchors(path: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation but - and _ dropped,
    spaces as hyphens; a repeated heading gets -1, -2 ..."""
    seen: dict[str, int] = {}
    out = set()
    for heading in re.findall(r"^#{1,6} +(.+?) *$", _outside_code(path.read_text(encoding="utf-8")), re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_relative_links_lead_somewhere(page):
    broken = []
    for target in LINK.findall(_outside_code(page.read_text(encoding="utf-8"))):
        if re.match(r"[a-z]+:", target):  # https:, mailto: ...
            continue
        file, _, anchor = target.partition("#")
        dest = (page.parent / file).resolve() if file else page
        if not dest.exists():
            broken.append(target)
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(target)
    assert not broken, f"{page.name}: {broken}"


def test_the_readme_is_short_and_links_every_docs_page():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) < 300
    linked = {Path(t.partition("#")[0]).name for t in LINK.findall(readme) if t.startswith("docs/")}
    assert {p.name for p in PAGES[1:]} <= linked


def test_the_readme_commands_are_the_scripts():
    if not (ROOT / ".ci").exists():
        pytest.skip("an sdist, not a checkout: no scripts to compare")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```\n(.*?)^```", readme, flags=re.S | re.M)
    assert "bash scripts/demo.sh\n" in blocks and "bash scripts/test.sh\n" in blocks
    assert (ROOT / "scripts" / "demo.sh").exists() and (ROOT / "scripts" / "test.sh").exists()
    assert "bash scripts/test.sh" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_the_architecture_page_names_every_module_and_none_is_too_large():
    """docs/architecture.md has a row for each module of the package, and
    the layout's rule holds: no module over 600 lines, no class over 400,
    the pipeline's own module wiring only (under 300)."""
    import ast

    import scrapy_deboiler

    package = Path(scrapy_deboiler.__file__).parent
    modules = {p.name: p.read_text(encoding="utf-8") for p in package.glob("_*.py")}
    rows = set(re.findall(r"^\| `(_\w+\.py)` \|", (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8"),
                          re.M))
    assert set(modules) - {"__init__.py", "__main__.py"} == rows
    sizes = {name: len(text.splitlines()) for name, text in modules.items()}
    assert max(sizes.values()) <= 600 and sizes["_pipeline.py"] < 300, sizes
    classes = [(name, node.name, node.end_lineno - node.lineno + 1) for name, text in modules.items()
               for node in ast.walk(ast.parse(text)) if isinstance(node, ast.ClassDef)]
    assert all(lines <= 400 for _, _, lines in classes), max(classes, key=lambda c: c[2])
