"""Where a key sits in a TOML file, so a configuration error can name the line to fix.

`tomllib` returns plain dicts without positions, and the one parser stays `tomllib`; this is a
line scanner over the same text that tracks the current table header (`[a.b]`, `[[a]]`) and
each `key = ...` (dotted and quoted keys too), which is all a `toolweave.toml` uses. Multi-line
strings and arrays are skipped, so text inside them never looks like a key.
"""

from __future__ import annotations

import re

_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(
    r"""^\s*((?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*'))*)\s*="""
)
_PART = re.compile(r"""[A-Za-z0-9_-]+|"([^"]*)"|'([^']*)'""")


def _parts(dotted: str) -> tuple[str, ...]:
    return tuple(m.group(1) or m.group(2) or m.group(0) for m in _PART.finditer(dotted))


def key_lines(text: str) -> dict[tuple[str, ...], int]:
    """Every table and key path in `text` mapped to its 1-based line (the first occurrence)."""
    lines: dict[tuple[str, ...], int] = {}
    table: tuple[str, ...] = ()
    open_quote: str | None = None
    depth = 0  # open brackets of a multi-line array value
    for number, line in enumerate(text.splitlines(), start=1):
        if open_quote is not None:
            if open_quote in line:
                open_quote = None
            continue
        if depth > 0:
            depth = max(0, depth + line.count("[") - line.count("]"))
            continue
        header = _HEADER.match(line)
        if header is not None:
            table = _parts(header.group(1))
            lines.setdefault(table, number)
            continue
        key = _KEY.match(line)
        if key is None:
            continue
        path = table + _parts(key.group(1))
        lines.setdefault(path, number)
        value = line[key.end() :]
        for quote in ('"""', "'''"):
            if value.count(quote) == 1:
                open_quote = quote
        if open_quote is None and value.lstrip().startswith("["):
            depth = max(0, value.count("[") - value.count("]"))
    return lines


def line_of(lines: dict[tuple[str, ...], int], path: tuple[str | int, ...]) -> int | None:
    """The line of `path`, or of its nearest enclosing key or table that the file spells out."""
    keys = tuple(str(p) for p in path if not isinstance(p, int))
    while keys:
        if keys in lines:
            return lines[keys]
        keys = keys[:-1]
    return None
