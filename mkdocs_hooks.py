"""mkdocs hook: every page under docs/ is in the nav, and the nav names no missing page.

Engineers add capability pages (docs/governance.md, docs/skills.md, ...) in parallel; listing
them by hand in mkdocs.yml before they exist would fail `mkdocs build --strict`, and forgetting
to list one would leave it unpublished. So mkdocs.yml orders the pages it knows, and this hook
appends the others, sorted, under "Capabilities", each titled with its first heading as plain
text (no backticks or other markup in the nav).
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

EXTRA_SECTION = "Capabilities"


def _listed(nav: Any) -> set[str]:
    found: set[str] = set()
    if isinstance(nav, str):
        found.add(nav)
    elif isinstance(nav, list):
        for item in nav:
            found |= _listed(item)
    elif isinstance(nav, dict):
        for value in nav.values():
            found |= _listed(value)
    return found


def plain(heading: str) -> str:
    """A Markdown heading as the text a reader sees: code spans, emphasis and links rendered
    the way the page renders them, then every tag dropped (the nav shows text, not markup)."""
    import markdown

    rendered = markdown.markdown(heading)
    return html.unescape(re.sub(r"<[^>]+>", "", rendered)).strip()


def _title(path: Path) -> str:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return plain(line[2:])
    return path.stem.replace("-", " ").capitalize()


def on_config(config: Any) -> Any:
    docs = Path(config["docs_dir"])
    listed = _listed(config["nav"])
    pages = sorted(p.relative_to(docs).as_posix() for p in docs.rglob("*.md"))
    extra = [{_title(docs / p): p} for p in pages if p not in listed]
    if extra:
        config["nav"].insert(-2, {EXTRA_SECTION: extra})  # before Migration and the API
    return config
