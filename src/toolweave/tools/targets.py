"""The rules of the call being run, for what a tool meets after governance decided the call.

Governance decides a call on its arguments: for a search, the folder it starts from; for a
fetch, the first URL. What the tool then meets must answer to the same rules: every file a walk
opens and every name a listing shows (as Claude Code's Read rules cover Grep and Glob), every
redirect hop a fetch follows (a `WebFetch(domain:...)` deny holds after a 302). When governance
clears a call of a tool that declares `checks_targets = True`, it sets the check for the rest of
that call (a context variable: the call's task, and the worker thread a sync tool runs in, see
it): a function from another value of the tool's primary argument (an absolute host path, a
URL) to whether the rules allow this tool that value. The tool asks `target_check()`; None
means no governance cleared the call, and the tool's own bounds alone decide.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar

__all__ = ["TargetCheck", "set_target_check", "target_check"]

TargetCheck = Callable[[str], bool]
"""True when the rules allow the running tool this value of its primary argument."""

_CURRENT: ContextVar[TargetCheck | None] = ContextVar("toolweave_target_check", default=None)


def target_check() -> TargetCheck | None:
    """The check governance set when it cleared the running call, or None."""
    return _CURRENT.get()


def set_target_check(check: TargetCheck | None) -> None:
    """Governance sets it for every call it clears (None for a tool that checks no targets)."""
    _CURRENT.set(check)
