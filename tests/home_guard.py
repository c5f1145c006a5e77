"""Keep tests out of the real home: a temporary `HOME` per test and a watch on writes.

Every test runs with `HOME` (and so toolweave's default data dir, `~/.toolweave`) in a fresh
temporary folder; subprocesses inherit it. A path computed before the switch (a module constant
expanded at import, say) could still reach the real home, so an audit hook (PEP 578) watches
this process's writes (`open` for writing, `sqlite3.connect`, `mkdir`, `rename`, `remove`, ...)
and records each one that lands in the real home outside the places a test may use. The
fixture in `tests/conftest.py` fails the test that made it, naming the path.

The real home is not compared before and after: other processes on a shared machine write
there too, and a snapshot would blame the test for their writes.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

REAL_HOME = Path(os.path.expanduser("~")).resolve()
"""The home of the user who started pytest, read before any test changes `HOME`."""

ALLOWED_UNDER_HOME = (".cache", ".npm", ".pyenv", ".cargo", ".rustup", ".m2", ".config/chromium")
"""Folders of the real home a test may write: tool caches, never toolweave's data."""

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
_PATH_EVENTS = {
    "os.mkdir": (0,),
    "os.remove": (0,),
    "os.rmdir": (0,),
    "os.rename": (0, 1),
    "os.symlink": (1,),
    "os.link": (1,),
    "os.truncate": (0,),
    "shutil.copyfile": (1,),
    "shutil.rmtree": (0,),
    "sqlite3.connect": (0,),
}
"""Audit events that write, with the positions of their path arguments."""

violations: list[str] = []
"""Writes into the real home since the current test started (the fixture empties it)."""

_active = False


def _outside_allowed(raw: object) -> bool:
    if isinstance(raw, bytes):
        raw = os.fsdecode(raw)
    if not isinstance(raw, (str, os.PathLike)):
        return False
    text = os.fspath(raw)
    if not isinstance(text, str) or text in ("", ":memory:") or text.startswith("file::memory:"):
        return False
    path = Path(os.path.abspath(text.removeprefix("file:").split("?", 1)[0]))
    try:
        relative = path.relative_to(REAL_HOME)
    except ValueError:
        return False
    return not any(relative.is_relative_to(allowed) for allowed in ALLOWED_UNDER_HOME)


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if not _active:
        return
    if event == "open":
        path, mode, flags = args
        writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
            mode is None and isinstance(flags, int) and flags & _WRITE_FLAGS
        )
        if writes and _outside_allowed(path):
            violations.append(f"open({path!r}, {mode or flags!r})")
        return
    positions = _PATH_EVENTS.get(event)
    if positions is None:
        return
    for position in positions:
        if position < len(args) and _outside_allowed(args[position]):
            violations.append(f"{event}({args[position]!r})")


def install() -> None:
    """Add the audit hook once per process (hooks cannot be removed; `watch` switches it)."""
    if not getattr(sys, "_toolweave_home_guard", False):
        sys.addaudithook(_hook)
        sys._toolweave_home_guard = True  # type: ignore[attr-defined]


def watch(on: bool) -> None:
    """Start or stop recording writes into the real home."""
    global _active
    _active = on
