"""The two orchestration stages of one run, `RunStage`s the loop calls at its fixed points.

Kept out of `loop.py` so the loop reads as model-call / tools / history.

`ChildrenStage` (every run) records each model call's usage in the run's scope, which rolls a
subagent's model calls up into its parent's. `LimitsStage` applies `RunLimits`, each step a
no-op when its setting is off: the query-log row (written when the run starts, finished with
its status) and a row per tool call linked to it (its outcome: ran, failed, refused:<stage>;
written before the next model call and when the run ends; a subagent's calls are linked to the
outermost run's row), the quota reservation before each model call and its settlement after,
the todo reminder appended to the request, and the circuit breaker's count after each tool call.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from typing import TYPE_CHECKING, Any

from toolweave.agent._run.stages import RunStage
from toolweave.agent.orchestration.limits import RunLimits
from toolweave.agent.orchestration.settings import RunScope
from toolweave.llm import ModelRequest, ToolCallPart, Usage
from toolweave.tools import ToolInvocation

if TYPE_CHECKING:
    from toolweave.accounting.query_log import QueryStatus
    from toolweave.agent.session import Session


@dataclasses.dataclass(frozen=True, slots=True)
class _CallRow:
    """One tool call waiting to be written to the query log."""

    name: str
    args: Any
    started: float
    duration: float
    status: QueryStatus
    error: str
    outcome: str


class ChildrenStage(RunStage):
    """Counts the run's model calls in its scope (and so in every ancestor's usage)."""

    def __init__(self, scope: RunScope) -> None:
        self.scope = scope

    async def after_model(self, usage: Usage | None) -> None:
        if usage is not None:
            self.scope.record(usage)


class LimitsStage(RunStage):
    """Per-run state of the run's `RunLimits` (one instance per `Run`)."""

    def __init__(self, settings: RunLimits, scope: RunScope, run_id: str) -> None:
        self.settings = settings
        self.scope = scope
        self.run_id = run_id
        self._row: str | None = None  # this run's own row (the outermost run only)
        self._reservation: str | None = None
        self._tools: list[str] = []
        self._calls: list[_CallRow] = []
        self._refused: set[str | None] = set()

    @property
    def _parent_row(self) -> str | None:
        """The row this run's tool calls are logged under: its own, or its outermost run's (the
        scope's, set when that run started)."""
        return self.scope.query_row if self.settings.query_log is not None else None

    async def started(self, prompt: str) -> None:
        log = self.settings.query_log
        if log is not None and self.scope.depth == 0:
            session = self.scope.session
            self._row = await log.start(prompt, session.id, client=session.requester or "")
            self.scope.query_row = self._row

    async def before_model(self, request: ModelRequest, turn: int) -> ModelRequest:
        """Log the last turn's tool calls, reserve the call's estimated input against the quota
        (raises `QuotaExceeded` before anything is sent) and append the todo reminder, if due."""
        await self._log_calls()
        settings = self.settings
        if settings.quota is not None:
            from toolweave.agent.session import message_tokens

            estimate = sum(message_tokens(m) for m in request.messages)
            self._reservation = await settings.quota.reserve(
                self.scope.quota_key,
                tokens=estimate,
                reservation_id=f"{self.run_id}:{turn}",  # a retried call reuses it
            )
        if settings.todos is not None:
            reminder = settings.todos.reminder(self.scope.session.id)
            if reminder is not None:
                request = dataclasses.replace(request, messages=[*request.messages, reminder])
        return request

    async def after_model(self, usage: Usage | None) -> None:
        """Settle the reservation with the real usage (0 when the call failed)."""
        rid, self._reservation = self._reservation, None
        quota = self.settings.quota
        if quota is not None and rid is not None:
            tokens = usage.total_tokens if usage is not None else 0
            await asyncio.shield(quota.settle(rid, tokens=tokens))

    def after_tool(self, session: Session, invocation: ToolInvocation) -> None:
        self._tools.append(invocation.name)
        if self._parent_row is not None and invocation.call_id not in self._refused:
            from toolweave.accounting.calls import invocation_outcome

            status, error, outcome = invocation_outcome(invocation)
            began = time.time() - invocation.duration
            self._calls.append(
                _CallRow(
                    invocation.name,
                    invocation.args,
                    began,
                    invocation.duration,
                    status,
                    error,
                    outcome,
                )
            )
        circuit = self.settings.circuit
        if circuit is not None:
            failed = invocation.error is not None or invocation.result.is_error
            circuit.record(self.scope.session.id, invocation.name, failed)

    def blocked(self, call: ToolCallPart, stage: str, reason: str) -> None:
        """A governance stage refused `call` (the loop's `ToolCallBlocked`): its row says
        "refused:<stage>" (one row, also when the refusal came after the tool ran)."""
        if self._parent_row is not None:
            self._refused.add(call.id)
            row = _CallRow(
                call.name, call.arguments, time.time(), 0.0, "stopped", reason, f"refused:{stage}"
            )
            self._calls.append(row)

    def stopped(self, call: ToolCallPart, error: Exception) -> None:
        """An error ended the run before `call` ran: its row says "refused:<stage>" for a
        governance stop (a hook's `continue: false`), else "refused:gate": the registry turns
        what a tool raises into its outcome, so an error stopping the chain before the tool ran
        is a gate's refusal for good (a `PermissionDenied`, a gate that failed closed)."""
        if self._parent_row is not None:
            from toolweave.accounting.calls import refused_outcome

            message = getattr(error, "message", str(error))
            row = _CallRow(
                call.name,
                call.arguments,
                time.time(),
                0.0,
                "error",
                message,
                refused_outcome(error, otherwise="refused:gate"),
            )
            self._calls.append(row)

    async def _log_calls(self) -> None:
        log, row = self.settings.query_log, self._parent_row
        calls, self._calls = self._calls, []
        if log is None or row is None:
            return
        from toolweave.accounting.calls import describe_call

        session = self.scope.session
        for call in calls:
            child = await log.start(
                describe_call(call.name, call.args),
                session.id,
                kind="call",
                client=session.requester or "",
                tool=call.name,
                parent=row,
                started=call.started,
            )
            await log.finish(
                child,
                call.status,
                tools=[call.name],
                duration=call.duration,
                error=call.error,
                outcome=call.outcome,
            )

    async def finished(self, status: QueryStatus, error: BaseException | None = None) -> None:
        if self._calls:
            await asyncio.shield(self._log_calls())
        log, row = self.settings.query_log, self._row
        if log is None or row is None:  # a subagent's row is its parent's
            return
        message = "" if error is None else f"{type(error).__name__}: {error}"
        await asyncio.shield(
            log.finish(
                row,
                status,
                tools=self._tools,
                tokens=self.scope.total_usage.total_tokens,
                error=message,
            )
        )
