"""Saved tool results: a result over the budget is kept whole, and the model pages through it.

`ResultPages.spill` replaces a long result's text with its head, its tail and a handle
(`r-` and 12 hex digits), after saving the whole text in the session's scratch folder;
`read_result_tool` gives the model `read_result(handle, offset, limit, pattern)`. The scratch
space is the jail: a handle is checked against its pattern and opened inside the calling
session's own folder (named by a digest of the session id, so no id can name a path), files are
created exclusively, never followed through a link, and readable by the owner only. Each
session keeps at most `max_saved_bytes` and all sessions together at most `max_total_saved_bytes`
(a long-lived process serves many sessions); the oldest saved results go first.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import hashlib
import os
import re
import secrets
import shutil
import stat
import tempfile
import time
from pathlib import Path

from toolweave.tools import Content, TextContent, Tool, ToolContext, truncate_text
from toolweave.tools.errors import InvalidArguments
from toolweave.tools.function_tool import FunctionTool

READ_RESULT = "read_result"
"""The paging tool's name."""
_HANDLE = re.compile(r"r-[0-9a-f]{12}")
SAVED_HANDLE = re.compile(r'are saved whole as "(r-[0-9a-f]{12})"')
"""Finds the handle in the notice of a cut result (compaction's stubs keep it)."""
_NOTICE_ROOM = 320  # the notice after the excerpt, and the marker inside it
_MAX_MATCHES = 20
_MATCH_CONTEXT = 80
_LONE_SURROGATES = "surrogatepass"  # a tool's text may carry them (JSON's "\\ud800"): kept as sent


class ResultPages:
    """The saved results of every session of one agent (see the module docstring)."""

    def __init__(
        self, scratch_dir: Path | str | None, max_saved_bytes: int, max_total_saved_bytes: int
    ) -> None:
        self._root = Path(scratch_dir).expanduser() if scratch_dir is not None else None
        self.max_saved_bytes = max_saved_bytes
        self.max_total_saved_bytes = max_total_saved_bytes

    def spill(
        self, session_id: str | None, tool_name: str, content: list[Content], max_chars: int
    ) -> tuple[list[Content], str | None]:
        """`content` unchanged when its text fits `max_chars`; else the text saved whole, one
        excerpt (head, tail, the handle) in its place and the notice the model reads after it."""
        texts = [c.text for c in content if isinstance(c, TextContent)]
        whole = "\n".join(texts)
        if len(whole) <= max_chars or max_chars <= _NOTICE_ROOM * 2:
            return content, None
        handle = self.save(session_id, whole)
        if handle is None:  # larger than a session may keep: cut as before
            return content, None
        excerpt = truncate_text(whole, max_chars - _NOTICE_ROOM, saved_as=handle)
        others = [c for c in content if not isinstance(c, TextContent)]
        notice = (
            f"[The {tool_name} output above is cut to fit the context: {len(whole)} characters "
            f'are saved whole as "{handle}". Call {READ_RESULT}(handle="{handle}", offset=N) '
            f'to read on from character N, or {READ_RESULT}(handle="{handle}", pattern="...") '
            "to find text in it.]"
        )
        return [TextContent(excerpt), *others], notice

    def save(self, session_id: str | None, text: str) -> str | None:
        """Save `text` for `session_id`; its handle, or None when it alone passes the bound."""
        data = text.encode("utf-8", _LONE_SURROGATES)
        if len(data) > min(self.max_saved_bytes, self.max_total_saved_bytes):
            return None
        folder = self._folder(session_id)
        assert folder is not None  # created
        _make_room([folder], len(data), self.max_saved_bytes)
        _make_room(_session_folders(folder.parent), len(data), self.max_total_saved_bytes)
        handle = "r-" + secrets.token_hex(6)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(folder / f"{handle}.txt", flags, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            stamp = time.time_ns()  # the oldest go first: a finer clock than the file system's
            os.utime(out.fileno(), ns=(stamp, stamp))
        return handle

    def read(self, session_id: str | None, handle: str) -> str | None:
        """The saved text behind `handle` in this session, or None if it is not (or no longer)
        saved. A handle that is not one is an `InvalidArguments`."""
        if not _HANDLE.fullmatch(handle):
            raise InvalidArguments(
                f"handle {handle!r} is not a saved-result handle (they look like "
                '"r-0123456789ab" and come from a cut tool result)'
            )
        folder = self._folder(session_id, create=False)
        if folder is None:
            return None
        try:
            fd = os.open(folder / f"{handle}.txt", os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            return None
        with os.fdopen(fd, "rb") as source:
            return source.read().decode("utf-8", _LONE_SURROGATES)

    def _folder(self, session_id: str | None, *, create: bool = True) -> Path | None:
        root = self._root
        if root is None:
            if not create:
                return None
            root = self._root = Path(tempfile.mkdtemp(prefix="toolweave-results-"))
            atexit.register(shutil.rmtree, root, True)
        digest = hashlib.sha256((session_id or "").encode("utf-8")).hexdigest()[:24]
        folder = root / digest
        if create:
            root.mkdir(mode=0o700, parents=True, exist_ok=True)
            with contextlib.suppress(FileExistsError):
                folder.mkdir(mode=0o700)
        try:
            mode = folder.lstat().st_mode
        except FileNotFoundError:
            return None
        if not stat.S_ISDIR(mode):
            raise OSError(f"{folder} is not a folder (a link?); saved results are never followed")
        return folder


def _session_folders(root: Path) -> list[Path]:
    """The session folders under the scratch root (links and stray files are not folders)."""
    return [Path(e.path) for e in os.scandir(root) if e.is_dir(follow_symlinks=False)]


def _make_room(folders: list[Path], size: int, bound: int) -> None:
    """Drop the oldest saved results in `folders` until `size` more bytes fit in `bound`."""
    saved = []
    for folder in folders:
        with contextlib.suppress(FileNotFoundError):  # another process's folder, just dropped
            for entry in os.scandir(folder):
                with contextlib.suppress(FileNotFoundError):
                    if entry.is_file(follow_symlinks=False):
                        info = entry.stat(follow_symlinks=False)
                        saved.append((info.st_mtime_ns, entry.path, info.st_size))
    saved.sort()
    total = sum(s for _, _, s in saved)
    for _, path, entry_size in saved:
        if total + size <= bound:
            break
        Path(path).unlink(missing_ok=True)
        total -= entry_size


def read_result_tool(pages: ResultPages, page_chars: int) -> Tool:
    """`read_result`: a page of a saved result, or the places a phrase occurs in it."""

    async def read_result(
        ctx: ToolContext, handle: str, offset: int = 0, limit: int | None = None, pattern: str = ""
    ) -> str:
        """Read a tool result that was cut to fit the context and saved whole.

        A cut result names its handle ("r-..."). Read on from a character offset, or pass
        `pattern` to list where a phrase occurs (case-insensitive), then read there.

        Args:
            handle: The saved result's handle, as the cut result names it.
            offset: The first character to read (0 is the start).
            limit: How many characters to read (default and maximum: one page).
            pattern: Text to find instead of reading a page.
        """
        text = await asyncio.to_thread(pages.read, ctx.session_id, handle)
        if text is None:
            return (
                f"{handle} is not saved in this session (saved results of a temporary scratch "
                "space end with the process that ran the tool, and the oldest are dropped past "
                "the session's bound); call the tool again."
            )
        if pattern:
            return _matches(text, handle, pattern)
        if offset < 0 or offset > len(text):
            raise InvalidArguments(f"offset {offset} is outside {handle} (0 to {len(text)})")
        size = page_chars if limit is None else max(1, min(limit, page_chars))
        end = min(offset + size, len(text))
        more = f"; read on with offset={end}" if end < len(text) else "; this is the end"
        return f"[{handle}: characters {offset}-{end} of {len(text)}{more}]\n{text[offset:end]}"

    return FunctionTool(read_result, read_only=True, idempotent=True, category="context")


def _matches(text: str, handle: str, pattern: str) -> str:
    """Each place `pattern` occurs (case-insensitive, Chinese as written), with context; the
    offsets are the text's own (matched in place, never in a case-folded copy whose length
    can differ: "İ".lower() is two characters)."""
    found: list[str] = []
    total = 0
    for match in re.finditer(re.escape(pattern), text, re.IGNORECASE):
        total += 1
        if len(found) < _MAX_MATCHES:
            left = max(0, match.start() - _MATCH_CONTEXT)
            snippet = " ".join(text[left : match.end() + _MATCH_CONTEXT].split())
            found.append(f"- offset {match.start()}: {snippet}")
    if not total:
        return f"{pattern!r} does not occur in {handle} ({len(text)} characters)."
    shown = f", the first {len(found)} shown" if total > len(found) else ""
    head = f"{pattern!r} occurs {total} time(s) in {handle}{shown}; read there with offset=N:"
    return "\n".join([head, *found])
