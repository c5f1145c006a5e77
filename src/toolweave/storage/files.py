"""Files every capability writes and reads: one atomic write, one frontmatter reader.

Skills (`SKILL.md`), slash commands (`.claude/commands/*.md`) and knowledge-base notes are
Markdown with YAML frontmatter; config files, notes, lock files and the built-ins' edits must
never be seen half-written. Each of these is done once, here, so a fix reaches every caller.

Frontmatter comes from files other people wrote (a skill library cloned from the internet), so
the reader is lenient about shape and strict about cost. It accepts what hosts accept (a BOM,
CRLF, unquoted `key: a: b` values) and refuses what could make a small file expensive or
circular: YAML anchors and aliases (`&a [*a]` builds a list that contains itself; eight levels
of aliases in 526 bytes expand to 43 million nodes for whoever walks the result), nesting deeper
than `MAX_FRONTMATTER_DEPTH`, and frontmatter longer than `MAX_FRONTMATTER_CHARS`. Each refusal
is a `FrontmatterError` naming the file and the reason.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
from pathlib import Path
from typing import Any

from toolweave.storage.errors import FrontmatterError

MAX_FRONTMATTER_CHARS = 64_000
"""Frontmatter longer than this is refused (also what a file whose closing `---` is missing
costs at most to read)."""
MAX_FRONTMATTER_DEPTH = 32
"""Nested lists and mappings deeper than this are refused (metadata is a few levels deep)."""
DEFAULT_FILE_MODE = 0o600
"""Permission bits of a file `atomic_write` creates: private, as it may hold secrets."""

_DELIMITER = "---"
_TOP_LEVEL = re.compile(r"^([A-Za-z_][\w-]*):[ \t]+(.*)$")
NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0)
"""The open flag that refuses a symlink as the last path component (0 where there is none)."""
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | NO_FOLLOW
_AT_DIR = {os.open, os.stat, os.chmod, os.rename, os.unlink} <= os.supports_dir_fd
"""POSIX: every step relative to the parent directory's descriptor; elsewhere (Windows), by
path, which is still atomic but cannot refuse a parent swapped for a link. (`os.replace` takes
`dir_fd` wherever `os.rename` does, but `supports_dir_fd` lists only the latter.)"""


# -- frontmatter ------------------------------------------------------------------------------


def read_frontmatter(path: Path) -> dict[str, Any]:
    """The frontmatter of `path` as a mapping, reading no further than its closing `---` (a
    library of hundreds of skills loads without reading their bodies)."""
    lines: list[str] = []
    size = 0
    with path.open("r", encoding="utf-8-sig", errors="replace", newline=None) as file:
        if file.readline().strip() != _DELIMITER:
            raise FrontmatterError(
                path, "no YAML frontmatter (the file must start with a '---' line)"
            )
        for line in file:
            if line.rstrip() == _DELIMITER:
                return parse_frontmatter("".join(lines), path)
            size += len(line)
            if size > MAX_FRONTMATTER_CHARS:
                raise FrontmatterError(
                    path,
                    f"no closing '---' within {MAX_FRONTMATTER_CHARS} characters of frontmatter",
                )
            lines.append(line)
    raise FrontmatterError(path, "the frontmatter is never closed (add a '---' line after it)")


def read_body(path: Path) -> str:
    """Everything after the frontmatter of `path`, stripped (the whole file when it has none)."""
    text = path.read_text(encoding="utf-8-sig", errors="replace")
    return _split(text)[1].strip()


def split_frontmatter(text: str, source: str | Path) -> tuple[dict[str, Any] | None, str]:
    """(frontmatter, body) of Markdown `text`; the frontmatter is None when the text has none.

    `source` (a path, or a name such as `"command 'review'"`) is what errors name.
    """
    header, body = split_header(text, source)
    return (None if header is None else parse_frontmatter(header, source)), body


def split_header(text: str, source: str | Path) -> tuple[str | None, str]:
    """(the frontmatter's YAML text, the body) of Markdown `text`, before any parsing; None when
    the text has none. For a reader that must adjust the YAML first (slash commands quote their
    `argument-hint`) and then calls `parse_frontmatter`."""
    header, body = _split(text.removeprefix("\ufeff"))
    if header is not None and len(header) > MAX_FRONTMATTER_CHARS:
        raise FrontmatterError(
            source, f"the frontmatter is longer than {MAX_FRONTMATTER_CHARS} characters"
        )
    return header, body


def parse_frontmatter(text: str, source: str | Path) -> dict[str, Any]:
    """Frontmatter YAML as a mapping; on a syntax error retried with unquoted `key: a: b` values
    quoted (what strict YAML refuses and hosts accept). Anchors, aliases and deep nesting are
    refused before anything is built."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml: ~10x faster
    try:
        data = _load(yaml, loader, text, source)
    except yaml.YAMLError as first:
        try:
            data = _load(yaml, loader, _quote_plain_values(text), source)
        except yaml.YAMLError:
            mark = getattr(first, "problem_mark", None)
            where = f" at line {mark.line + 2}" if mark is not None else ""
            raise FrontmatterError(source, f"invalid YAML in the frontmatter{where}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise FrontmatterError(source, f"the frontmatter is a {type(data).__name__}, not a mapping")
    return {str(key): value for key, value in data.items()}


def _load(yaml: Any, loader: Any, text: str, source: str | Path) -> Any:
    """Check the event stream (linear, nothing built), then build the value."""
    depth = 0
    for event in yaml.parse(text, Loader=loader):
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            raise FrontmatterError(
                source,
                "YAML anchors and aliases (&name, *name) are not accepted in frontmatter;"
                " write the value out",
            )
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_FRONTMATTER_DEPTH:
                raise FrontmatterError(
                    source, f"the frontmatter nests deeper than {MAX_FRONTMATTER_DEPTH} levels"
                )
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
    return yaml.load(text, Loader=loader)


def _split(text: str) -> tuple[str | None, str]:
    """(the YAML between the `---` lines, the rest) with CRLF read as LF; (None, text) when the
    text does not open with a `---` line or never closes it."""
    text = text.replace("\r\n", "\n")
    lines = text.split("\n")
    if lines and lines[0].strip() == _DELIMITER:
        for index in range(1, len(lines)):
            if lines[index].rstrip() == _DELIMITER:
                return "\n".join(lines[1:index]), "\n".join(lines[index + 1 :])
    return None, text


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


# -- atomic writes ----------------------------------------------------------------------------


def atomic_write(
    path: str | os.PathLike[str],
    data: str | bytes,
    *,
    new_mode: int = DEFAULT_FILE_MODE,
    follow_links: bool = True,
    dir_fd: int | None = None,
) -> None:
    """Write `data` (str as UTF-8) to `path`: readers see the old file or the new one, never
    half of it, and a crash leaves the old file whole.

    The data goes to a temporary sibling (created exclusively, never through a link), is
    fsynced, then renamed over the target, relative to the parent directory's descriptor
    (by path where the platform has no `dir_fd`). An
    existing file keeps its permission bits; a new one gets `new_mode`. With `follow_links` a
    symlinked target is written through to the file it names; without (the filesystem jail,
    whose `path` is already resolved and checked), a parent directory swapped for a symlink
    after the check is refused instead of followed. With `dir_fd` (an open folder, which the
    caller keeps and closes), `path` is a name inside that folder and nothing is looked up by
    path at all: how the jail writes into the folder it opened from its own descriptor.
    """
    raw = data.encode("utf-8") if isinstance(data, str) else data
    if dir_fd is not None:
        parent, name, owned = ".", os.fspath(path), False
    else:
        real = os.path.realpath(path) if follow_links else os.fspath(path)
        parent, name = os.path.split(real)
        parent = parent or "."
        dir_fd = os.open(parent, _DIR_FLAGS) if _AT_DIR else None
        owned = dir_fd is not None

    def at(entry: str) -> str:
        return entry if dir_fd is not None else os.path.join(parent, entry)

    try:
        mode: int | None = None
        with contextlib.suppress(FileNotFoundError):
            info = os.stat(at(name), dir_fd=dir_fd, follow_symlinks=False)
            if stat.S_ISDIR(info.st_mode):
                raise IsADirectoryError(f"{name!r} is a directory")
            mode = stat.S_IMODE(info.st_mode)
        temp = f".{name}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | NO_FOLLOW
        fd = os.open(at(temp), flags, new_mode if mode is None else mode, dir_fd=dir_fd)
        try:
            with os.fdopen(fd, "wb") as file:
                file.write(raw)
                file.flush()
                os.fsync(file.fileno())
            if mode is not None:  # the umask may have narrowed the old file's bits
                os.chmod(at(temp), mode, dir_fd=dir_fd)
            os.replace(at(temp), at(name), src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(at(temp), dir_fd=dir_fd)
            raise
    finally:
        if owned and dir_fd is not None:
            os.close(dir_fd)
