"""The run's transcript as JSON Lines, so hooks can read `transcript_path` as in Claude Code.

Claude Code passes every hook the path of the session's transcript (one JSON object per
line: `{"type": "user" | "assistant" | ..., "sessionId": ..., "message": {...}}`). Hooks read it
to find the last answer, count tool calls or archive the session. Here the file is written on
demand, just before a hook that will be given its path runs: new messages are appended, and a
history that shrank (compaction) is rewritten whole. Files live in a folder only the current
user can read (`transcript_dir()`), one per session.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

_written: dict[str, tuple[int, int]] = {}
"""path -> (messages written, id of the first message), to append only what is new."""
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")


def transcript_dir() -> Path:
    """Where transcripts are written: `$TMPDIR/toolweave-transcripts-<uid>`, mode 0700."""
    folder = Path(tempfile.gettempdir()) / f"toolweave-transcripts-{os.getuid()}"
    folder.mkdir(mode=0o700, exist_ok=True)
    return folder


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
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | (os.O_APPEND if start else os.O_TRUNC), 0o600)
    with os.fdopen(fd, mode, encoding="utf-8") as out:
        out.writelines(lines)
    _written[key] = (len(messages), head)
    return key


def _line(session_id: str | None, message: Any) -> str:
    data = message.to_dict() if hasattr(message, "to_dict") else {"content": str(message)}
    role = data.get("role", "user")
    entry = {"type": role, "sessionId": session_id, "message": data}
    return json.dumps(entry, ensure_ascii=False, default=str) + "\n"
