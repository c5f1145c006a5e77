"""What the governance pipeline reads of a run: the permission modes, the agent's identity, the
gate context of each call (session, mode, approval memory, policy, requester, history, grants)
and the clearance a call leaves the pipeline with."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from toolweave.governance.approvals import ApprovalState
from toolweave.tools import PermissionPolicy

if TYPE_CHECKING:
    from toolweave.governance.rules import Rules

__all__ = [
    "PERMISSION_MODES",
    "SCHEDULED",
    "AgentIdentity",
    "Clearance",
    "GateContext",
    "GovernedSession",
    "PermissionMode",
]

SCHEDULED = "scheduled"
"""The `agent_type` of a run the scheduler starts (nobody requested it)."""
PermissionMode = Literal["default", "acceptEdits", "plan", "dontAsk", "bypassPermissions"]
PERMISSION_MODES: tuple[PermissionMode, ...] = (
    "default",
    "acceptEdits",
    "plan",
    "dontAsk",
    "bypassPermissions",
)


class GovernedSession(Protocol):
    """What the pipeline reads of a session (`toolweave.agent.Session` is one)."""

    @property
    def id(self) -> str: ...
    @property
    def permission_mode(self) -> PermissionMode: ...
    @property
    def approvals(self) -> ApprovalState: ...
    @property
    def requester(self) -> str | None: ...


@dataclass(frozen=True)
class AgentIdentity:
    """Which agent a run belongs to: hooks see it, so a subagent's calls are never anonymous."""

    agent_id: str = "main"
    agent_type: str = "main"
    parents: tuple[str, ...] = ()

    def payload(self) -> dict[str, Any]:
        parents = list(self.parents)
        return {
            "agent_id": self.agent_id,
            "agent_type": self.agent_type,
            "parent_agent_ids": parents,
        }


@dataclass
class GateContext:
    """What the pipeline needs from the run: the session's id, mode and approval memory, the
    declared-permission policy (whose allowance skips the default question) and who asked."""

    session_id: str | None
    mode: PermissionMode = "default"
    state: ApprovalState = field(default_factory=ApprovalState)
    policy: PermissionPolicy | None = None
    requester: str | None = None
    cwd: str | None = None
    history: Callable[[], Sequence[Any]] | None = None
    """The run's messages, for the transcript hooks get as `transcript_path`."""
    preapproved: Callable[[], Rules | None] | None = None
    """The allow rules the run grants at this moment (a running slash command's or an active
    skill's `allowed-tools`), read when each call is decided; they join the rules below every
    deny and ask rule."""
    memo: dict[str, Any] | None = None
    """What earlier rounds of this very call kept (`toolweave.tools.calls.CallRounds.memo`: a
    PreToolUse hook's outcome), so a call that goes on in a retry is not decided twice."""
    approvals: int = 0
    """How many approvals this round of the call has asked so far: the n-th approval's hooks
    (PermissionRequest, Notification) are kept in `memo` under n, the same in every round."""

    @classmethod
    def of(cls, session: GovernedSession, policy: PermissionPolicy | None = None) -> GateContext:
        """The session's governance state, read at this moment (the mode may change later)."""
        messages = getattr(session, "messages", None)
        return cls(
            session.id,
            session.permission_mode,
            session.approvals,
            policy,
            session.requester,
            history=(lambda: messages) if isinstance(messages, list) else None,
        )


@dataclass(frozen=True)
class Clearance:
    """A call the pipeline let through: the arguments to run it with (hooks may rewrite them)
    and context hooks asked to add to its result."""

    args: dict[str, Any]
    context: tuple[str, ...] = ()
