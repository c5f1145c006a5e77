"""Lenient SKILL.md frontmatter parsing, as forgiving as the hosts people write skills for.

Only the YAML between the opening and closing `---` is read (the body stays on disk until a
skill is activated). Real files carry a BOM, CRLF line endings, block scalars, unquoted colons
in descriptions and `allowed-tools` in three shapes; each is accepted here, and whatever cannot
be read raises `FrontmatterError` with the reason the library reports in its warnings.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

MAX_FRONTMATTER_CHARS = 64_000
"""Frontmatter longer than this is refused (a SKILL.md whose closing `---` is missing)."""

_DELIMITER = "---"
_TOP_LEVEL = re.compile(r"^([A-Za-z_][\w-]*):[ \t]+(.*)$")


class FrontmatterError(ValueError):
    """The frontmatter is missing or unreadable; the message is the warning users see."""


def read_frontmatter(path: Path) -> dict[str, Any]:
    """The frontmatter of `path` as a mapping, without reading the body."""
    lines: list[str] = []
    size = 0
    with path.open("r", encoding="utf-8-sig", errors="replace", newline=None) as file:
        first = file.readline()
        if first.strip() != _DELIMITER:
            raise FrontmatterError("no YAML frontmatter (the file must start with a '---' line)")
        for line in file:
            if line.rstrip() == _DELIMITER:
                return parse_yaml("".join(lines))
            size += len(line)
            if size > MAX_FRONTMATTER_CHARS:
                raise FrontmatterError(
                    f"no closing '---' within {MAX_FRONTMATTER_CHARS} characters of frontmatter"
                )
            lines.append(line)
    raise FrontmatterError("the frontmatter is never closed (add a '---' line after it)")


def read_body(path: Path) -> str:
    """Everything after the frontmatter, stripped (the whole file when it has none)."""
    text = path.read_text(encoding="utf-8-sig", errors="replace").replace("\r\n", "\n")
    lines = text.split("\n")
    if lines and lines[0].strip() == _DELIMITER:
        for index in range(1, len(lines)):
            if lines[index].rstrip() == _DELIMITER:
                return "\n".join(lines[index + 1 :]).strip()
    return text.strip()


def parse_yaml(text: str) -> dict[str, Any]:
    """Parse frontmatter YAML; on failure retry with unquoted `key: a: b` values quoted."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml: ~10x faster
    try:
        data = yaml.load(text, Loader=loader)  # a safe loader
    except yaml.YAMLError as first:
        try:
            data = yaml.load(_quote_plain_values(text), Loader=loader)
        except yaml.YAMLError:
            mark = getattr(first, "problem_mark", None)
            where = f" at line {mark.line + 2}" if mark is not None else ""
            raise FrontmatterError(f"invalid YAML in the frontmatter{where}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise FrontmatterError(f"the frontmatter is a {type(data).__name__}, not a mapping")
    return {str(key): value for key, value in data.items()}


def _quote_plain_values(text: str) -> str:
    """Quote top-level plain scalars that contain `: ` (what strict YAML refuses)."""
    out = []
    for line in text.split("\n"):
        match = _TOP_LEVEL.match(line)
        value = match.group(2).strip() if match else ""
        if match and value and value[0] not in "\"'|>[{&*!#" and ": " in value:
            escaped = value.replace("\\", "\\\\").replace('"', '\\"')
            line = f'{match.group(1)}: "{escaped}"'
        out.append(line)
    return "\n".join(out)


def split_tools(value: Any) -> list[str]:
    """`allowed-tools` as a YAML list or a space/comma separated string, in order, deduplicated.

    Separators inside parentheses are kept, so `Bash(git add:*), Read` is two tools.
    """
    if value is None:
        return []
    items: list[str] = []
    if isinstance(value, list | tuple):
        for item in value:
            items.extend(split_tools(item) if isinstance(item, str) else [str(item)])
    else:
        depth = 0
        current: list[str] = []
        for char in str(value):
            if char == "(":
                depth += 1
            elif char == ")":
                depth = max(0, depth - 1)
            if depth == 0 and (char == "," or char.isspace()):
                items.append("".join(current))
                current = []
            else:
                current.append(char)
        items.append("".join(current))
    seen: dict[str, None] = {}
    for item in items:
        if item.strip():
            seen.setdefault(item.strip(), None)
    return list(seen)
