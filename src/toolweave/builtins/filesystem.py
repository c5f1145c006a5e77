"""Filesystem tools jailed to one directory: read, write, edit, list, search and inspect files.

Every path is opened through `Jail` (see `_jail.py`: component by component from the jail's
descriptor, never by name after a check), reads are capped with a note when cut, only regular
files are read, and writes are atomic. Each tool carries `rule_path`, the path it will open as
the host sees it, so permission rules (`read_file(secret.txt)`, `Read(...)`) match what is
opened, not what was written (an absolute path or a link alias). The tools are plain
functions, so they run in a worker thread and never block the event loop.
"""

from __future__ import annotations

import codecs
import contextlib
import fnmatch
import os
import stat
from collections.abc import Iterator
from datetime import UTC, datetime

from toolweave.builtins._jail import READ_FLAGS, Jail, kind, read_fd, scan
from toolweave.builtins._output import check_positive, untrusted
from toolweave.tools.base import Tool
from toolweave.tools.errors import InvalidArguments, ToolError
from toolweave.tools.function_tool import tool
from toolweave.tools.permissions import Permission
from toolweave.tools.result import ToolResult
from toolweave.tools.targets import TargetCheck, target_check

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
        if offset < 0:
            raise InvalidArguments("offset must be 0 or more", tool="read_file")
        data, size, _ = jail.read(path, max_read_bytes, offset)
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
        fd, folder = jail.open(path, directory=True)
        check = target_check()
        try:
            entries = list(scan(fd))
            if check is not None:  # every name shown meets the Read rules, as a file read does
                entries = [e for e in entries if check(_host_path(jail, folder, e.name))]
            lines = []
            for entry in entries[:max_entries]:
                info = entry.stat(follow_symlinks=False)
                what = kind(info.st_mode)
                size = info.st_size if what == "file" else ""
                lines.append(f"{what}\t{size}\t{entry.name}{'/' if what == 'dir' else ''}")
        finally:
            os.close(fd)
        if len(entries) > max_entries:
            lines.append(f"[... {len(entries) - max_entries} more entries not listed ...]")
        return untrusted("\n".join(lines) or "(empty directory)", "list_dir")

    list_dir.checks_targets = True  # type: ignore[attr-defined]

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
        base_fd, base = jail.open(path, directory=True)
        needle = contains.casefold() if contains else None
        hits: list[str] = []
        skipped = 0
        try:
            for relative, fd, shown in _files(jail, base_fd, base, target_check()):
                with contextlib.closing(_Closer(fd)):
                    name = os.path.basename(relative)
                    if not (fnmatch.fnmatch(relative, pattern) or fnmatch.fnmatch(name, pattern)):
                        continue
                    if needle is None:
                        hits.append(shown)
                    elif os.fstat(fd).st_size > DEFAULT_MAX_SEARCH_FILE_BYTES:
                        skipped += 1
                    else:
                        data, _ = read_fd(fd, DEFAULT_MAX_SEARCH_FILE_BYTES)
                        text = data.decode("utf-8", "replace")
                        for number, line in enumerate(text.splitlines(), 1):
                            if needle in line.casefold():
                                hits.append(f"{shown}:{number}: {line.strip()[:300]}")
                if len(hits) >= max_entries:
                    break
        finally:
            os.close(base_fd)
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

    search_files.checks_targets = True  # type: ignore[attr-defined]

    @tool(read_only=True, permissions=[Permission.READ], primary_arg="path", open_world=False)
    def file_info(path: str) -> dict[str, object]:
        """Type, size, modification time and mode of a workspace path (a link inside it is
        described by what it points to).

        Args:
            path: Path relative to the workspace root.
        """
        parent, name, relative = jail.walk(path)
        try:
            info = (
                os.fstat(parent)
                if name is None
                else os.stat(name, dir_fd=parent, follow_symlinks=False)
            )
        except FileNotFoundError:
            raise InvalidArguments(f"no such file: {relative}", tool="file_info") from None
        finally:
            os.close(parent)
        return {
            "path": relative,
            "type": kind(info.st_mode),
            "size": info.st_size,
            "modified": datetime.fromtimestamp(info.st_mtime, UTC).isoformat(),
            "mode": stat.filemode(info.st_mode),
        }

    tools: list[Tool] = [read_file, list_dir, search_files, file_info]
    if not writable:
        return _with_rule_path(tools, jail)

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
            path: File path relative to the workspace root; missing folders are created.
            content: The complete new content of the file (UTF-8 text).
        """
        data = checked(path, content, "write_file")
        return f"wrote {len(data)} bytes to {jail.write(path, data, make_folders=True)}"

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
        if not old_text:
            raise InvalidArguments("old_text must not be empty", tool="edit_file")
        data, size, _ = jail.read(path, max_write_bytes + 1)
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
        relative = jail.write(path, checked(path, text.replace(old_text, new_text), "edit_file"))
        return f"replaced {count} occurrence(s) in {relative}"

    return _with_rule_path([*tools, write_file, edit_file], jail)


class _Closer:
    def __init__(self, fd: int) -> None:
        self.fd = fd

    def close(self) -> None:
        os.close(self.fd)


def _files(
    jail: Jail, base_fd: int, base: str, check: TargetCheck | None
) -> Iterator[tuple[str, int, str]]:
    """(path relative to `base`, an open descriptor, path relative to the root) of every
    regular file under the open folder `base_fd`, in sorted order. Folders are walked by
    descriptor and never through links; a linked file is opened through the jail, so only a
    target inside it is read. With the call's Read rules (`check`), a folder they refuse is not
    entered, a file they refuse is not opened, and a link whose target they refuse is closed
    unread; none of them is named. The caller closes each descriptor."""
    for directory, dirs, names, dir_fd in os.fwalk(".", dir_fd=base_fd):
        dirs.sort()
        if check is not None:
            dirs[:] = [d for d in dirs if check(_host_path(jail, base, directory, d))]
        for name in sorted(names):
            relative = os.path.normpath(os.path.join(directory, name))
            inside = relative if base == "." else f"{base}/{relative}"
            try:
                info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
                if stat.S_ISLNK(info.st_mode):
                    fd, shown = jail.open(inside)  # the target is checked as it was opened
                elif stat.S_ISREG(info.st_mode):
                    if check is not None and not check(_host_path(jail, inside)):
                        continue  # a Read rule refuses it: not opened, not named
                    fd, shown = os.open(name, READ_FLAGS, dir_fd=dir_fd), inside
                else:
                    continue  # a FIFO, socket or device is never opened
            except (OSError, ToolError):
                continue  # gone, a link out of the jail, or not a regular file
            if check is not None and not check(_host_path(jail, shown)):
                os.close(fd)  # a link to a refused file: closed unread, not named
                continue
            yield relative, fd, shown


def _host_path(jail: Jail, *parts: str) -> str:
    """The absolute host path of `parts` inside the jail (for the call's Read rules)."""
    return os.path.normpath(os.path.join(jail.root, *parts))


def _with_rule_path(tools: list[Tool], jail: Jail) -> list[Tool]:
    """Each tool answers, for permission rules, the host path its `path` argument opens and the
    folder relative rules are anchored at (the jail): `rule_path(value) -> (path, base)`; and
    says where its paths resolve (`permission_cwd`, for hooks' `file_path`)."""

    def rule_path(value: str) -> tuple[str, str] | None:
        try:
            return jail.canonical(value), jail.root
        except ToolError:
            return None  # the tool refuses this path itself

    for one in tools:
        one.rule_path = rule_path  # type: ignore[attr-defined]
        one.permission_cwd = jail.root  # type: ignore[attr-defined]
    return tools
