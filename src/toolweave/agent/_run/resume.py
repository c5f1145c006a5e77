"""The loop's side of a `RunState`: what a paused run saves, and how a resumed run goes on.

A run pauses after the turn's calls are all done when an approver deferred some of them
(`ApprovalDeferred`): `paused_state` records the history up to the model's calls, the results
of the calls that finished and the questions still open. `Agent.resume` checks the state
against the agent and the answers against the pending calls (`prepare`, before anything
starts) and starts a `Run` with `resume_from` set: `restore` puts the state's history in the
session, then `resume_turn` sends the open calls through the same call chain as any call
(`dispatch_call`: rules, hooks, approvals, the tool), with an approver that gives the person's
answers (`Answers`); a refused call gives the model the refusal, an unanswered one pauses
again. The loop then carries on from the saved turn count.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol

from toolweave.agent.errors import RunStateError
from toolweave.agent.run_state import PendingCall, RunState, agent_reference
from toolweave.governance.errors import ApprovalDeferred
from toolweave.llm import Message, ToolCallPart, ToolResultPart, Usage

if TYPE_CHECKING:
    from toolweave.agent._run.config import RunConfig
    from toolweave.agent._run.dispatch import CallSetup
    from toolweave.agent.orchestration.settings import RunScope
    from toolweave.agent.session import Session
    from toolweave.governance.approvals import ApprovalAnswer, ApprovalRequest
    from toolweave.governance.pipeline import Governance
    from toolweave.tools import Tool, ToolRegistry


class PausingRun(Protocol):
    """What of a `Run` pausing and resuming use."""

    config: RunConfig
    session: Session
    registry: ToolRegistry
    scope: RunScope
    run_id: str
    prompt: str
    usage: Usage
    system: Message | None

    def call_setup(self, turn: int, governance: Governance | None = None) -> CallSetup: ...

    async def finish_tools(
        self,
        setup: CallSetup,
        calls: list[ToolCallPart],
        parts: list[ToolResultPart | None],
        runnable: list[tuple[int, Tool | None]],
        turn: int,
    ) -> Exception | None: ...

    async def end_turn(self, turn: int, reason: str, usage: Usage) -> None: ...


def paused_state(
    run: PausingRun,
    calls: list[ToolCallPart],
    parts: list[ToolResultPart | None],
    deferred: list[ApprovalRequest],
    turn: int,
) -> RunState:
    """The state of `run`, paused at `turn` with `deferred` questions open."""
    session = run.session
    waiting = {request.call_id for request in deferred}
    completed = [p for c, p in zip(calls, parts, strict=True) if p is not None]
    return RunState(
        run_id=run.run_id,
        session_id=session.id,
        agent=agent_reference(run.config),
        prompt=run.prompt,
        messages=list(session.messages),
        pending=[PendingCall.of(request) for request in deferred],
        completed=[p for p in completed if p.call_id not in waiting],
        system=run.system,
        usage=run.usage,
        turns=turn,
        permission_mode=session.permission_mode,
        always=sorted(session.approvals.always),
        requester=session.requester,
    )


def prepare(
    config: RunConfig, state: RunState, approvals: Mapping[str, ApprovalAnswer] | None
) -> Answers:
    """Check `state` against the agent's configuration and `approvals` against its pending
    calls (`RunStateError` naming what is wrong); returns the resumed turn's approver."""
    state.check(config)
    return Answers({p.call_id: p for p in state.pending}, dict(approvals or {}))


def restore(run: PausingRun, state: RunState) -> Message | None:
    """Put `state`'s history in the session (a session given to `resume` must hold the same
    history, as a store-backed one does); returns the system message the paused run was
    shaped with."""
    session, history = run.session, run.session.messages
    if session.id != state.session_id:
        raise RunStateError(
            f"resume(session=...) got session {session.id!r} but the run paused in session "
            f"{state.session_id!r}; pass that session or none"
        )
    if not history:
        history.extend(state.messages)
        session.permission_mode = state.permission_mode  # type: ignore[assignment]
        session.requester = session.requester or state.requester
    elif history != state.messages:
        raise RunStateError(
            f"session {session.id!r} has moved on since the run paused ({len(history)} "
            f"messages, the state has {len(state.messages)}); a paused run resumes only once"
        )
    last = history[-1] if history else None
    ids = {c.id for c in last.tool_calls} if last is not None else set()
    missing = [p.call_id for p in state.pending if p.call_id not in ids]
    if missing:
        raise RunStateError(f"the state's pending calls {missing} are not in its last message")
    session.approvals.always.update(state.always)
    run.usage = state.usage
    run.scope.turns_left = run.config.max_turns - state.turns
    return state.system


async def resume_turn(run: PausingRun, state: RunState, answers: Answers) -> int:
    """Run the paused turn's open calls with the `answers` and end the turn; returns the
    number of model calls the run has made."""
    calls = run.session.messages[-1].tool_calls
    done = {part.call_id: part for part in state.completed}
    parts: list[ToolResultPart | None] = [done.get(call.id) for call in calls]
    governance = replace(run.config.governance, approver=answers, admin_approver=answers)
    turn = state.turns
    runnable = [(i, run.registry.get(c.name)) for i, c in enumerate(calls) if parts[i] is None]
    fatal = await run.finish_tools(run.call_setup(turn, governance), calls, parts, runnable, turn)
    await run.end_turn(turn, "error" if fatal is not None else "tool_calls", Usage())
    if fatal is not None:
        raise fatal
    return turn


@dataclass(frozen=True)
class Answers:
    """The approver of a resumed turn: the answer given for each pending call, when the call
    asks about the arguments the person was shown. A call asked about other arguments (the
    saved call was edited) or left unanswered is deferred again: the run pauses once more and
    shows what it would run."""

    shown: dict[str, PendingCall]
    approvals: Mapping[str, ApprovalAnswer]

    def __post_init__(self) -> None:
        for call_id, answer in self.approvals.items():
            if call_id not in self.shown:
                raise RunStateError(
                    f"resume(approvals=...) answers call {call_id!r}, which is not pending; "
                    f"the pending calls are {sorted(self.shown)}"
                )
            if not (answer is True or answer is False or answer == "always"):
                raise RunStateError(
                    f"resume(approvals={{{call_id!r}: {answer!r}}}): an answer is True, False "
                    "or 'always'"
                )

    def __call__(self, request: ApprovalRequest) -> ApprovalAnswer:
        pending = self.shown.get(request.call_id or "")
        answer = self.approvals.get(request.call_id or "")
        if (
            pending is None
            or answer is None
            or (pending.tool_name, pending.args) != (request.tool_name, request.args)
        ):
            raise ApprovalDeferred(request)
        return answer
