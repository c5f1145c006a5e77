"""The run's transcript as JSON Lines, so hooks can read `transcript_path` as in Claude Code.

Claude Code passes every hook the path of the session's transcript (one JSON object per
line: `{"type": "user" | "assistant" | ..., "sessionId": ..., "message": {...}}`). Hooks read it
to find the last answer, count tool calls or archive the session. Here the file is written on
demand, just before a hook that will be given its path runs: new messages are appended, and a
history that shrank (compaction) is rewritten whole. Files live in a folder only the current
user can read (`transcript_dir()`: made exclusively, a folder someone else made first is never
used), one per session; a link where a transcript goes is never followed.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import re
import stat
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

_written: dict[str, tuple[int, int]] = {}
"""path -> (messages written, id of the first message), to append only what is new."""
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")
_warned_dirs: set[Path] = set()
logger = logging.getLogger("toolweave.hooks")


def transcript_dir() -> Path:
    """Where transcripts are written: `$TMPDIR/toolweave-transcripts-<uid>`, made with mode
    0700 by this user. A folder of that name someone else made first (a shared TMPDIR), one
    others may write or a link is never used: a fresh private folder is made instead, so no
    link planted in it can be followed."""
    base = Path(tempfile.gettempdir())
    folder = base / f"toolweave-transcripts-{os.getuid()}"
    try:
        folder.mkdir(mode=0o700)
        return folder
    except FileExistsError:
        problem = _not_private(folder)
    if problem is None:
        return folder
    if folder not in _warned_dirs:
        _warned_dirs.add(folder)
        logger.warning("transcript folder %s %s; using a fresh private folder", folder, problem)
    return _fresh_dir(base)


def _not_private(folder: Path) -> str | None:
    """Why `folder` is not a private folder of this user, or None when it is."""
    info = os.lstat(folder)
    if not stat.S_ISDIR(info.st_mode):
        return "is not a folder (a link?)"
    if info.st_uid != os.getuid():
        return "belongs to another user"
    if info.st_mode & 0o077:
        return "may be read or written by others"
    return None


@functools.cache
def _fresh_dir(base: Path) -> Path:
    """A new folder in `base` only this process made (mode 0700), one per `base`."""
    return Path(tempfile.mkdtemp(prefix=f"toolweave-transcripts-{os.getuid()}-", dir=base))


def write_transcript(session_id: str | None, messages: Sequence[Any]) -> str:
    """Bring the session's JSONL transcript up to date; returns its path."""
    name = _UNSAFE.sub("_", session_id or "no-session")[:200] or "no-session"
    path = transcript_dir() / f"{name}.jsonl"
    key = str(path)
    count, first = _written.get(key, (0, 0))
    head = id(messages[0]) if messages else 0
    start = count if count <= len(messages) and head == first and path.exists() else 0
    lines = [_line(session_id, message) for message in messages[start:]]
    mode = "a" if start else "w"
    flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | (os.O_APPEND if start else os.O_TRUNC)
    fd = os.open(path, flags, 0o600)
    with os.fdopen(fd, mode, encoding="utf-8") as out:
        out.writelines(lines)
    _written[key] = (len(messages), head)
    return key


def _line(session_id: str | None, message: Any) -> str:
    data = message.to_dict() if hasattr(message, "to_dict") else {"content": str(message)}
    role = data.get("role", "user")
    entry = {"type": role, "sessionId": session_id, "message": data}
    return json.dumps(entry, ensure_ascii=False, default=str) + "\n"
