"""Filesystem tools jailed to one directory: read, write, edit, list, search and inspect files.

Every path goes through `Jail` (see `_jail.py` for the rules), reads are capped with a note
when cut, and writes are atomic. The tools are plain functions, so they run in a worker thread
and never block the event loop.
"""

from __future__ import annotations

import codecs
import fnmatch
import os
import stat
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from toolweave.builtins._jail import Jail, describe, read_bytes, write_atomic
from toolweave.builtins._output import check_positive, untrusted
from toolweave.tools.base import Tool
from toolweave.tools.errors import InvalidArguments
from toolweave.tools.function_tool import tool
from toolweave.tools.permissions import Permission
from toolweave.tools.result import ToolResult

DEFAULT_MAX_READ_BYTES = 100 * 1024
"""Bytes `read_file` returns at most; the rest is announced, never silently dropped."""
DEFAULT_MAX_WRITE_BYTES = 1024 * 1024
"""Bytes `write_file` and `edit_file` accept for one file."""
DEFAULT_MAX_ENTRIES = 500
"""Entries `list_dir` lists and matches `search_files` reports at most."""
DEFAULT_MAX_SEARCH_FILE_BYTES = 1024 * 1024
"""Files larger than this are not grepped by `search_files` (their names still match)."""


def filesystem_tools(
    root: str | os.PathLike[str],
    writable: bool = True,
    *,
    max_read_bytes: int = DEFAULT_MAX_READ_BYTES,
    max_write_bytes: int = DEFAULT_MAX_WRITE_BYTES,
    max_entries: int = DEFAULT_MAX_ENTRIES,
) -> list[Tool]:
    """`read_file`, `list_dir`, `search_files`, `file_info` (and, when `writable`, `write_file`
    and `edit_file`) confined to `root`."""
    for name, value in (
        ("max_read_bytes", max_read_bytes),
        ("max_write_bytes", max_write_bytes),
        ("max_entries", max_entries),
    ):
        check_positive(name, value)
    jail = Jail(root)

    @tool(read_only=True, permissions=[Permission.READ], primary_arg="path", open_world=False)
    def read_file(path: str, offset: int = 0) -> ToolResult:
        """Read a text file in the workspace.

        Args:
            path: File path relative to the workspace root, e.g. 'docs/readme.md'.
            offset: Byte offset to start from; use it to read the rest of a long file.
        """
        real = jail.resolve(path)
        if offset < 0:
            raise InvalidArguments("offset must be 0 or more", tool="read_file")
        if os.path.isdir(real):
            raise InvalidArguments(f"{path!r} is a directory; use list_dir", tool="read_file")
        data, size = read_bytes(real, max_read_bytes, offset)
        # A cut inside a multi-byte character (Chinese text) is left for the next read.
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        text = decoder.decode(data, final=offset + len(data) >= size)
        end = offset + len(data) - len(decoder.getstate()[0])
        if end < size:
            text += (
                f"\n[... read bytes {offset}-{end} of {size}; call read_file with "
                f"offset={end} for more ...]"
            )
        return untrusted(text, "read_file", max_read_bytes + 200)

    @tool(read_only=True, permissions=[Permission.READ], primary_arg="path", open_world=False)
    def list_dir(path: str = ".") -> ToolResult:
        """List a directory of the workspace (sorted; type and size of each entry).

        Args:
            path: Directory relative to the workspace root; '.' is the root.
        """
        real = jail.resolve(path)
        if not os.path.isdir(real):
            raise InvalidArguments(f"{path!r} is not a directory", tool="list_dir")
        entries = sorted(Path(real).iterdir(), key=lambda p: p.name)
        lines = []
        for entry in entries[:max_entries]:
            kind = describe(entry)
            size = entry.lstat().st_size if kind == "file" else ""
            suffix = "/" if kind == "dir" else ""
            lines.append(f"{kind}\t{size}\t{entry.name}{suffix}")
        if len(entries) > max_entries:
            lines.append(f"[... {len(entries) - max_entries} more entries not listed ...]")
        return untrusted("\n".join(lines) or "(empty directory)", "list_dir")

    @tool(read_only=True, permissions=[Permission.READ], primary_arg="path", open_world=False)
    def search_files(
        pattern: str = "*", contains: str | None = None, path: str = "."
    ) -> ToolResult:
        """Find files by name glob and, optionally, by the text they contain.

        Args:
            pattern: Glob on the path relative to `path`, e.g. '*.py' or 'docs/*.md'.
            contains: Case-insensitive text the file must contain; prints matching lines.
            path: Directory to search under, relative to the workspace root.
        """
        base = jail.resolve(path)
        if not os.path.isdir(base):
            raise InvalidArguments(f"{path!r} is not a directory", tool="search_files")
        needle = contains.casefold() if contains else None
        hits: list[str] = []
        skipped = 0
        for relative, real in _walk(jail, base):
            name = os.path.basename(relative)
            if not (fnmatch.fnmatch(relative, pattern) or fnmatch.fnmatch(name, pattern)):
                continue
            shown = jail.display(real)
            if needle is None:
                hits.append(shown)
            elif os.path.getsize(real) > DEFAULT_MAX_SEARCH_FILE_BYTES:
                skipped += 1
            else:
                data, _ = read_bytes(real, DEFAULT_MAX_SEARCH_FILE_BYTES)
                for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
                    if needle in line.casefold():
                        hits.append(f"{shown}:{number}: {line.strip()[:300]}")
            if len(hits) >= max_entries:
                break
        notes = []
        if len(hits) >= max_entries:
            notes.append(f"[... stopped after {max_entries} matches; narrow the search ...]")
        if skipped:
            notes.append(
                f"[{skipped} files larger than {DEFAULT_MAX_SEARCH_FILE_BYTES} bytes were not "
                "searched]"
            )
        text = "\n".join([*hits[:max_entries], *notes]) or "no matches"
        return untrusted(text, "search_files")

    @tool(read_only=True, permissions=[Permission.READ], primary_arg="path", open_world=False)
    def file_info(path: str) -> dict[str, object]:
        """Type, size, modification time and mode of a workspace path (links not followed).

        Args:
            path: Path relative to the workspace root.
        """
        real = jail.resolve(path)
        info = os.lstat(real)
        return {
            "path": jail.display(real),
            "type": describe(Path(real)),
            "size": info.st_size,
            "modified": datetime.fromtimestamp(info.st_mtime, UTC).isoformat(),
            "mode": stat.filemode(info.st_mode),
        }

    tools: list[Tool] = [read_file, list_dir, search_files, file_info]
    if not writable:
        return tools

    def checked(path: str, content: str, tool_name: str) -> bytes:
        data = content.encode("utf-8")
        if len(data) > max_write_bytes:
            raise InvalidArguments(
                f"content is {len(data)} bytes; the limit is {max_write_bytes} "
                "(max_write_bytes): write the file in smaller parts",
                tool=tool_name,
            )
        return data

    # Writes stay inside the jail but replace what a file held: they declare themselves
    # destructive (destructiveHint: true), so governance asks unless a rule such as
    # `write_file(./notes/**)` allows them.
    @tool(permissions=[Permission.WRITE], primary_arg="path", open_world=False, destructive=True)
    def write_file(path: str, content: str) -> str:
        """Create or replace a text file in the workspace (atomically).

        Args:
            path: File path relative to the workspace root; its directory must exist.
            content: The complete new content of the file (UTF-8 text).
        """
        real = jail.resolve_for_write(path)
        data = checked(path, content, "write_file")
        write_atomic(real, data)
        return f"wrote {len(data)} bytes to {jail.display(real)}"

    @tool(permissions=[Permission.WRITE], primary_arg="path", open_world=False, destructive=True)
    def edit_file(path: str, old_text: str, new_text: str, replace_all: bool = False) -> str:
        """Replace exact text in a workspace file; `old_text` must occur exactly once unless
        `replace_all` is true.

        Args:
            path: File path relative to the workspace root.
            old_text: The exact text to replace, with enough context to be unique.
            new_text: The replacement text.
            replace_all: Replace every occurrence instead of requiring exactly one.
        """
        real = jail.resolve_for_write(path)
        if not old_text:
            raise InvalidArguments("old_text must not be empty", tool="edit_file")
        data, size = read_bytes(real, max_write_bytes + 1)
        if size > max_write_bytes:
            raise InvalidArguments(
                f"{path!r} is larger than max_write_bytes ({max_write_bytes})", tool="edit_file"
            )
        text = data.decode("utf-8")
        count = text.count(old_text)
        if count == 0:
            raise InvalidArguments(f"old_text was not found in {path!r}", tool="edit_file")
        if count > 1 and not replace_all:
            raise InvalidArguments(
                f"old_text occurs {count} times in {path!r}; add context to make it unique "
                "or pass replace_all=true",
                tool="edit_file",
            )
        updated = text.replace(old_text, new_text)
        write_atomic(real, checked(path, updated, "edit_file"))
        return f"replaced {count} occurrence(s) in {jail.display(real)}"

    return [*tools, write_file, edit_file]


def _walk(jail: Jail, base: str) -> Iterator[tuple[str, str]]:
    """(path relative to `base`, real path) of every regular file under `base`, in sorted
    order; links are followed only when their target stays inside the jail, directories never
    via links."""
    for directory, dirs, files in os.walk(base, followlinks=False):
        dirs.sort()
        for name in sorted(files):
            full = os.path.join(directory, name)
            real = os.path.realpath(full)
            if jail.contains(real) and os.path.isfile(real):
                yield os.path.relpath(full, base), real
