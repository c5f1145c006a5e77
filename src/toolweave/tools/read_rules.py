"""The Read rules of the call being run, for tools that walk folders (`search_files`, `list_dir`).

Governance decides a call on its arguments; for a search that is the folder it starts from. What
the walk then opens (every file below it) and what a listing shows (every name in it) must meet
the same Read rules, as Claude Code's Read rules cover Grep and Glob. When governance clears a
call of a tool that declares `walks_paths = True`, it sets the check for the rest of that call
(a context variable: the call's task, and the worker thread a sync tool runs in, see it): a
function from an absolute host path to whether the rules let this tool read it. The tool asks
`readable()`; None means no governance cleared the call, and every path inside the jail is
readable as before.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar

__all__ = ["PathCheck", "readable", "set_readable"]

PathCheck = Callable[[str], bool]
"""True when the rules let the running tool read this absolute host path."""

_CURRENT: ContextVar[PathCheck | None] = ContextVar("toolweave_readable", default=None)


def readable() -> PathCheck | None:
    """The check governance set when it cleared the running call, or None."""
    return _CURRENT.get()


def set_readable(check: PathCheck | None) -> None:
    """Governance sets it for every call it clears (None for a tool that does not walk)."""
    _CURRENT.set(check)
