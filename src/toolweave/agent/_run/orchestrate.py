"""The orchestration steps of one run, a `RunStage` the loop calls at its fixed points.

Kept out of `loop.py` so the loop reads as model-call / tools / history, and each step here is
a no-op when its setting is off: the query-log row (written when the run starts, finished with
its status), the quota reservation before each model call and its settlement after, the todo
reminder appended to the request, the circuit breaker's count after each tool call, and the
usage record that rolls a subagent's model calls up into its parent's.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import TYPE_CHECKING

from toolweave.agent._run.stages import RunStage
from toolweave.agent.orchestration.settings import Orchestration, RunScope
from toolweave.llm import ModelRequest, Usage
from toolweave.tools import ToolInvocation

if TYPE_CHECKING:
    from toolweave.accounting.query_log import QueryStatus
    from toolweave.agent.session import Session


class RunOrchestration(RunStage):
    """Per-run state of the orchestration steps (one instance per `Run`)."""

    def __init__(self, settings: Orchestration, scope: RunScope, run_id: str) -> None:
        self.settings = settings
        self.scope = scope
        self.run_id = run_id
        self._row: str | None = None
        self._reservation: str | None = None
        self._tools: list[str] = []

    async def started(self, prompt: str) -> None:
        log = self.settings.query_log
        if log is not None and self.scope.depth == 0:
            self._row = await log.start(prompt, self.scope.session.id)

    async def before_model(self, request: ModelRequest, turn: int) -> ModelRequest:
        """Reserve the call's estimated input against the quota (raises `QuotaExceeded` before
        anything is sent) and append the todo reminder, if one is due."""
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
        """Settle the reservation with the real usage (0 when the call failed) and record it."""
        if usage is not None:
            self.scope.record(usage)
        rid, self._reservation = self._reservation, None
        quota = self.settings.quota
        if quota is not None and rid is not None:
            tokens = usage.total_tokens if usage is not None else 0
            await asyncio.shield(quota.settle(rid, tokens=tokens))

    def after_tool(self, session: Session, invocation: ToolInvocation) -> None:
        self._tools.append(invocation.name)
        circuit = self.settings.circuit
        if circuit is not None:
            failed = invocation.error is not None or invocation.result.is_error
            circuit.record(self.scope.session.id, invocation.name, failed)

    async def finished(self, status: QueryStatus, error: BaseException | None = None) -> None:
        log, row = self.settings.query_log, self._row
        if log is None or row is None:
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
