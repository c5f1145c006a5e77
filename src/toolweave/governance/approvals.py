"""Asking a person: `ApprovalRequest`, approvers, "always", timeouts, one question at a time.

An approver is any `async (ApprovalRequest) -> bool | "always"`: a chat prompt, a Slack button,
an MCP elicitation. `True` approves this call, `"always"` approves this tool for the rest of the
session, `False` (or a timeout, or no approver at all) denies. The parallel calls of one turn
are asked one at a time per session, so a person never faces two prompts at once; calls that
need no approval never wait behind them.

`audited(approver, audit, decided_by)` is the same approver with every decision it makes kept
in an audit (`QueryLog.record_approval`, or anything with that method): the tool, its
arguments, the session and requester, who decided, the decision and when it was asked and made.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from toolweave.governance.errors import ApprovalDeferred
from toolweave.mcp.shared.errors import InputRequired

__all__ = [
    "DEFAULT_APPROVAL_TIMEOUT",
    "ApprovalAnswer",
    "ApprovalAudit",
    "ApprovalRequest",
    "ApprovalState",
    "Approver",
    "ask_approval",
    "audited",
    "defer_approval",
]

DEFAULT_APPROVAL_TIMEOUT = 120.0
"""Seconds an approver has to answer before the call is denied."""

ApprovalAnswer = bool | Literal["always"]


@dataclass(frozen=True)
class ApprovalRequest:
    """What the approver is asked. `requester` is who started the run (None for scheduled and
    background runs, which only an admin can approve); `kind` is "admin" for admin-only tools."""

    tool_name: str
    args: dict[str, Any]
    reason: str
    session_id: str | None
    requester: str | None = None
    kind: Literal["user", "admin"] = "user"
    call_id: str | None = None
    agent_id: str | None = None

    def prompt(self) -> str:
        """One line for a person: what will run, and why it needs a yes."""
        import json

        args = json.dumps(self.args, ensure_ascii=False)
        if len(args) > 300:
            args = args[:300] + "..."
        who = "admin approval" if self.kind == "admin" else "approval"
        return f"{self.tool_name}({args}) needs {who}: {self.reason}"


Approver = Callable[[ApprovalRequest], Awaitable[ApprovalAnswer] | ApprovalAnswer]


@dataclass
class ApprovalState:
    """Per-session memory of approvals: tools answered "always", and the lock that asks one
    question at a time (one per event loop: `run_sync` runs each call on a new loop)."""

    always: set[str] = field(default_factory=set)
    _locks: tuple[asyncio.AbstractEventLoop, asyncio.Lock] | None = field(default=None, repr=False)

    @property
    def lock(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        if self._locks is None or self._locks[0] is not loop:
            self._locks = (loop, asyncio.Lock())
        return self._locks[1]


def defer_approval(request: ApprovalRequest) -> ApprovalAnswer:
    """An approver that answers later: the call is not run, and an agent run pauses with a
    `RunState` to save and finish with `Agent.resume(state, approvals=...)` (hours later, in
    another process). Any approver may raise `ApprovalDeferred` itself to do the same."""
    raise ApprovalDeferred(request)


async def ask_approval(
    approver: Approver | None,
    request: ApprovalRequest,
    state: ApprovalState,
    *,
    timeout: float,
    remember: bool = True,
) -> tuple[bool, str]:
    """Ask `approver` (serialized per session); returns (approved, why) and remembers "always".

    A missing approver, an exception, `False`, anything but True/"always" or a timeout denies.
    """
    if remember and request.tool_name in state.always:
        return True, "approved earlier in this session (always)"
    if approver is None:
        return False, "no approver is configured"
    async with state.lock:
        if remember and request.tool_name in state.always:  # answered while we waited
            return True, "approved earlier in this session (always)"
        try:
            async with asyncio.timeout(timeout):
                answer = approver(request)
                if inspect.isawaitable(answer):
                    answer = await answer
        except TimeoutError:
            return False, f"no answer within {timeout:g}s (approval_timeout), so it is denied"
        except (InputRequired, ApprovalDeferred):
            raise  # asked elsewhere: in a 2026 MCP call's result, or later (a paused run)
        except Exception as exc:
            return False, f"the approver failed ({type(exc).__name__}: {exc}), so it is denied"
    if answer == "always":
        if remember:
            state.always.add(request.tool_name)
        return True, "approved (always, for this session)"
    if answer is True:
        return True, "approved"
    return False, "the approver said no"


class ApprovalAudit(Protocol):
    """Where `audited` keeps decisions (`toolweave.accounting.QueryLog` is one)."""

    async def record_approval(
        self,
        *,
        tool: str,
        args: Any,
        decided_by: str,
        decision: str,
        session_id: str | None = None,
        requester: str | None = None,
        kind: str = "user",
        call_id: str | None = None,
        reason: str = "",
        asked: float = 0.0,
    ) -> None: ...


def audited(
    approver: Approver, audit: ApprovalAudit, decided_by: str | Callable[[ApprovalRequest], str]
) -> Approver:
    """`approver`, with each decision it makes recorded in `audit`: "approved", "always",
    "denied", or "no answer" (it timed out or failed; `reason` says which). `decided_by` names
    who answers ("console", "admin", a user) or computes it from the request. A decision that
    cannot be recorded denies the call (the approver's failure is a denial)."""

    async def ask(request: ApprovalRequest) -> ApprovalAnswer:
        asked = time.time()
        decision, reason = "no answer", "no answer before the approval timeout"
        try:
            answer = approver(request)
            if inspect.isawaitable(answer):
                answer = await answer
            decision = "approved" if answer is True else "always" if answer == "always" else ""
            decision = decision or "denied"
            reason = ""
            return answer
        except InputRequired:
            decision = ""  # the question travels in the result; the retry brings the answer
            raise
        except Exception as exc:
            reason = f"the approver failed ({type(exc).__name__}: {exc})"
            raise
        finally:
            if decision:
                who = decided_by(request) if callable(decided_by) else decided_by
                await audit.record_approval(
                    tool=request.tool_name,
                    args=request.args,
                    decided_by=who,
                    decision=decision,
                    session_id=request.session_id,
                    requester=request.requester,
                    kind=request.kind,
                    call_id=request.call_id,
                    reason=reason,
                    asked=asked,
                )

    return ask
