"""`Skill`: one skill folder, read in three levels of progressive disclosure.

Level 1 (name, description) is parsed at load; level 2 (`body()`, the instructions) and level 3
(`resources()`, `read_resource()`, `query_data()`) are read only when asked. Every file access
is confined to the skill folder, or, for a reference to a sibling skill of the same library
(`../requesting-code-review/code-reviewer.md`), to the library root the skill was loaded from: a
path that resolves outside it (`..` past the root, an absolute path, a symlink out) is refused
with `SkillError` before anything is opened.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path, PureWindowsPath
from typing import Any

from toolweave.skills.arguments import expand_arguments
from toolweave.skills.errors import SkillError
from toolweave.storage.files import read_body

SKILL_FILE = "SKILL.md"
MAX_RESOURCE_BYTES = 1_000_000
"""`read_resource` / `query_data` refuse files larger than this (read them with a real tool)."""
MAX_RESOURCES = 1_000
"""`resources()` lists at most this many files."""
DATA_SUFFIXES = (".json", ".jsonl", ".ndjson", ".csv")
"""The file types `query_data` understands."""

_DRIVE = re.compile(r"^[A-Za-z]:")


@dataclass(frozen=True, slots=True)
class Skill:
    """A loaded skill. `metadata` keeps the spec's `metadata` map plus every unknown key."""

    name: str
    description: str
    dir: Path
    allowed_tools: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    license: str | None = None
    compatibility: str | None = None
    disable_model_invocation: bool = False
    user_invocable: bool = True
    argument_hint: str | None = None
    #: The library root the skill was found in; its sibling skills' files are readable too.
    library_root: Path | None = field(default=None, compare=False)
    #: The frontmatter's name when it is a display name the spec's name rule refuses
    #: ("Writing Hookify Rules"): `name` is then derived from the folder, and people may type
    #: either.
    display_name: str | None = None

    @property
    def title(self) -> str:
        """The name to show people: the display name when there is one."""
        return self.display_name or self.name

    @property
    def path(self) -> Path:
        """The SKILL.md file."""
        return self.dir / SKILL_FILE

    def body(self) -> str:
        """The instructions (level 2): the Markdown after the frontmatter."""
        try:
            return read_body(self.path)
        except OSError as exc:
            raise SkillError(f"skill {self.name!r}: cannot read {SKILL_FILE}: {exc}") from exc

    def command(self, arguments: str = "") -> str:
        """The body as a slash command: `$ARGUMENTS` (and `$args`, `$1`...) replaced."""
        return expand_arguments(self.body(), arguments)

    def resources(self) -> list[str]:
        """Every other file in the folder (level 3), relative POSIX paths, sorted."""
        root = self.dir.resolve()
        found: list[str] = []
        for current, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
            for name in files:
                path = Path(current) / name
                rel = path.relative_to(root).as_posix()
                if rel == SKILL_FILE or name.startswith("."):
                    continue
                if path.is_symlink() and not _within(path.resolve(), root):
                    continue
                found.append(rel)
        return sorted(found)[:MAX_RESOURCES]

    def resolve(self, rel: str) -> Path:
        """The file `rel` names inside the folder; `SkillError` if it is outside or missing."""
        if not isinstance(rel, str) or not rel.strip():
            raise SkillError("path: give a file path relative to the skill folder, e.g. 'a.md'")
        if rel.startswith(("/", "\\")) or _DRIVE.match(rel) or PureWindowsPath(rel).anchor:
            raise SkillError(
                f"path {rel!r} is absolute; give a path relative to the skill folder of "
                f"{self.name!r} (see its resources)"
            )
        root = self.dir.resolve()
        target = (root / rel).resolve()
        if not (_within(target, root) or self._in_sibling(target)):
            raise SkillError(
                f"path {rel!r} resolves outside the skill folder of {self.name!r} and its skill "
                "library; only the files of this skill and its sibling skills can be read"
            )
        if not target.is_file():
            listed = ", ".join(self.resources()[:20]) or "none"
            raise SkillError(f"skill {self.name!r} has no file {rel!r}; its files: {listed}")
        return target

    def _in_sibling(self, target: Path) -> bool:
        """Whether `target` lies inside another skill folder of this skill's library root."""
        if self.library_root is None:
            return False
        jail = self.library_root.resolve()
        if not target.is_relative_to(jail):
            return False
        parts = target.relative_to(jail).parts
        return len(parts) > 1 and (jail / parts[0] / SKILL_FILE).is_file()

    def read_bytes(self, rel: str) -> bytes:
        """The bytes of one bundled file (at most `MAX_RESOURCE_BYTES`)."""
        target = self.resolve(rel)
        size = target.stat().st_size
        if size > MAX_RESOURCE_BYTES:
            raise SkillError(
                f"{rel!r} is {size} bytes, over the {MAX_RESOURCE_BYTES}-byte limit for skill "
                "resources; query it with skill_data or read a smaller file"
            )
        return target.read_bytes()

    def read_resource(self, rel: str) -> str:
        """The text of one bundled file (UTF-8; undecodable bytes replaced)."""
        return self.read_bytes(rel).decode("utf-8-sig", errors="replace")

    def query_data(self, rel: str, query: str = "", limit: int = 5) -> list[Any]:
        """Records of a JSON, JSONL or CSV file that contain every word of `query`."""
        check_data_query(rel, limit)
        return query_records(rel, self.read_resource(rel), query, limit)


def check_data_query(rel: str, limit: int) -> None:
    """`SkillError` unless `rel` is a data file `query_records` reads and `limit` positive."""
    if limit < 1:
        raise SkillError(f"limit must be at least 1, not {limit}")
    if not rel.lower().endswith(DATA_SUFFIXES):
        raise SkillError(
            f"{rel!r} is not a data file; skill_data reads {', '.join(DATA_SUFFIXES)} "
            "(use skill_resource for other files)"
        )


def query_records(rel: str, text: str, query: str, limit: int) -> list[Any]:
    """The first `limit` records of data file `rel` (its `text`) containing every word of
    `query`."""
    terms = query.casefold().split()
    matched = []
    for record in _records(rel, text):
        if all(term in json.dumps(record, ensure_ascii=False).casefold() for term in terms):
            matched.append(record)
            if len(matched) >= limit:
                break
    return matched


def _within(path: Path, root: Path) -> bool:
    return path == root or path.is_relative_to(root)


def _records(rel: str, text: str) -> list[Any]:
    lower = rel.lower()
    try:
        if lower.endswith(".csv"):
            return list(csv.DictReader(io.StringIO(text)))
        if lower.endswith((".jsonl", ".ndjson")):
            return [json.loads(line) for line in text.splitlines() if line.strip()]
        data = json.loads(text)
    except (json.JSONDecodeError, csv.Error) as exc:
        raise SkillError(
            f"{rel!r} is not valid {lower.rsplit('.', 1)[-1].upper()}: {exc}"
        ) from None
    if isinstance(data, dict):
        return [{"key": key, "value": value} for key, value in data.items()]
    return data if isinstance(data, list) else [data]


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
