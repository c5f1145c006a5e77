"""One run of the agent loop: model call, gates, concurrent tools, history, repeat.

The same code serves `run` (events dropped, `complete` calls) and `run_stream` (events queued,
`stream` calls). Whatever ends the run (answer, error, cancellation), every tool call in the
history gets a result before the turn is committed, so a session is always valid to resume.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from toolweave.agent._run.answer import Answer, OutputHandler, Retry
from toolweave.agent._run.command_run import expand_context
from toolweave.agent._run.dispatch import CallOutcome, CallSetup, dispatch_call, invoke_all
from toolweave.agent._run.economy import compact_history
from toolweave.agent._run.hooks import prompt_message, stop_reason
from toolweave.agent._run.orchestrate import ChildrenStage, LimitsStage
from toolweave.agent._run.resume import Answers, paused_state, restore, resume_turn
from toolweave.agent._run.shape import error_part, unanswered
from toolweave.agent._run.skill_rules import run_grants
from toolweave.agent._run.stages import call_ended
from toolweave.agent._run.stream import StreamReader
from toolweave.agent.errors import MaxTurnsExceeded, RunPaused
from toolweave.agent.events import (
    AgentEvent,
    RunCompleted,
    RunFailed,
    RunStarted,
    ToolCallBlocked,
    ToolCallRequested,
    ToolExecutionCompleted,
    ToolExecutionStarted,
    TurnCompleted,
    UserOutputSent,
)
from toolweave.agent.orchestration.settings import SCOPE_EXTRA, RunScope
from toolweave.agent.result import RunResult
from toolweave.errors import ToolweaveError
from toolweave.governance.middleware import GovernanceMiddleware
from toolweave.governance.pipeline import CallBlocked, GateContext, Governance
from toolweave.llm import Message, ModelRequest, ModelResponse, ToolCallPart, ToolResultPart, Usage
from toolweave.tools import (
    Tool,
    ToolContext,
    ToolDef,
    ToolError,
    ToolInvocation,
    ToolNotFound,
    UserOutput,
)
from toolweave.tools.context import REGISTRY_EXTRA

if TYPE_CHECKING:
    from toolweave.accounting.query_log import QueryStatus
    from toolweave.agent._run.config import RunConfig
    from toolweave.agent.orchestration.slash_commands import Command
    from toolweave.agent.run_state import RunState
    from toolweave.agent.session import Session

Emit = Callable[[AgentEvent], None]

FINAL_ANSWER_PROMPT = (
    "You have used every turn this run allows. Do not call any tool; give your final answer "
    "now from what you already know, and say what is still missing."
)
_CANCELLED = "Not executed: the run was cancelled before this call finished."
_ABORTED = "Not executed: the run ended with an error before this call ran."
_UNANSWERED = "Not executed: the conversation moved on before this call ran."


class Run:
    """The state of one run; `execute` drives it to a `RunResult` or raises."""

    def __init__(
        self,
        config: RunConfig,
        prompt: str,
        session: Session,
        deps: Any,
        emit: Emit | None,
        scope: RunScope,
    ) -> None:
        self.config = config
        self.scope = scope
        self.session = session
        self.model = config.model
        # The one tracing seam: a traced run sees every event and wraps its model.
        self.trace = config.tracing.start(config.name) if config.tracing is not None else None
        if self.trace is not None:
            emit, self.model = self.trace.observe(emit), self.trace.model(config.model)
        self.emit = emit
        self.run_id = uuid.uuid4().hex
        self.prompt = prompt
        self.registry = config.registry  # the session's overlay, set once the session is ours
        self.ctx = ToolContext(
            session_id=session.id, trace_id=self.run_id, deps=deps, output_sink=self._sink
        )
        self.ctx.extras[SCOPE_EXTRA] = scope
        self.limits = LimitsStage(config.orchestration.limits, scope, self.run_id)
        self.stages = config.stages(ChildrenStage(scope), self.limits)  # one seam
        self.output = OutputHandler(
            config.output, config.output_mode, config.output_retries, config.max_tool_result_chars
        )
        # `stream` the model for a consumer (`run_stream`); `complete` it otherwise.
        self.stream = StreamReader(emit, self.output, self._announce) if emit is not None else None
        self.usage = Usage()
        self.invocations: list[ToolInvocation] = []
        self.user_outputs: list[UserOutput] = []
        self._pending: list[Message] = []
        self._call_names: dict[str, str] = {}
        self._announced: set[str] = set()
        self._defs_key: tuple[int, ...] | None = None
        self._defs: list[ToolDef] = []
        self._stop_active = False
        self.system = config.system_message
        self.command: Command | None = None  # a slash command's `!` and `@` lines run first
        self.resume_from: tuple[RunState, Answers] | None = None
        # The calls of the turn being executed and the results that are in, for `_settle`.
        self._inflight: tuple[list[ToolCallPart], list[ToolResultPart | None]] | None = None

    # -- the loop -----------------------------------------------------------------------

    async def execute(self) -> RunResult[Any]:
        session = self.session
        session.acquire()
        try:
            # Only after acquiring: the overlay is per session, and a run refused with
            # SessionBusy must not swap the policy under the run that holds the session.
            self.registry = self.config.session_registry(session)
            self.ctx.extras[REGISTRY_EXTRA] = self.registry  # where `mcp_load` adds tools
            await session.load()
            return await self._logged()
        finally:
            if self.config.skills is not None:  # skills' pre-approvals last one run
                self.config.skills.scope.end_run(session)
            session.release()
            if self.trace is not None:
                self.trace.finish()

    async def _logged(self) -> RunResult[Any]:
        """The run under its deadline, with its query-log row finished however it ends."""
        for stage in self.stages:
            await stage.started(self.prompt)
        try:
            async with asyncio.timeout_at(self.scope.deadline):
                result = await self._execute()
        except TimeoutError as exc:
            await self._finished("timeout", exc)
            raise
        except asyncio.CancelledError:
            await self._finished("stopped")
            raise
        except BaseException as exc:  # a run paused for answers (RunPaused) is not an error
            await self._finished("paused" if isinstance(exc, RunPaused) else "error", exc)
            raise
        await self._finished("success")
        return result

    async def _finished(self, status: QueryStatus, error: BaseException | None = None) -> None:
        for stage in self.stages:
            await stage.finished(status, error)

    async def _execute(self) -> RunResult[Any]:
        history = self.session.messages
        resumed = self.resume_from
        if resumed is not None:  # the paused run's history, system message and calls
            self.system = restore(self, resumed[0])
        else:
            self._settle(_UNANSWERED)  # a history written elsewhere may end in unanswered calls
        start = len(history) + self.session.dropped  # a summary may shorten the history
        mode = self.config.governance.mode
        if mode is not None:
            self.session.adopt_mode(mode)
        for stage in self.stages if resumed is None else ():  # memories, /skill, catalog
            self.prompt, self.system = await stage.shape(
                self.prompt, self.system, self.session, self.config.model
            )
        if self.command is not None and resumed is None:
            self.prompt = await expand_context(self, self.command)
        if self.emit is not None:
            self.emit(RunStarted(self.run_id, self.session.id, self.prompt))
        try:
            if resumed is None:
                self._append(await self._prompt_message())
                output, turns = await self._turns(0)
            else:
                output, turns = await self._turns(await resume_turn(self, *resumed))
        except asyncio.CancelledError:
            self.ctx.cancel()
            self._settle(_CANCELLED)
            await self._commit()
            raise
        except BaseException as exc:
            if not isinstance(exc, RunPaused):  # a paused turn's calls wait for their answers
                self._settle(_ABORTED)
            await self._commit()
            if self.emit is not None:
                self.emit(RunFailed(exc))
            raise
        result = self._result(output, history[max(start - self.session.dropped, 0) :], turns)
        if self.emit is not None:
            self.emit(RunCompleted(result))
        return result

    async def _turns(self, calls_made: int) -> tuple[Any, int]:
        """Model call, then the answer or the tools, until an answer; returns it and the
        number of model calls (`calls_made` so far: a resumed run's)."""
        config = self.config
        final_call = False
        while True:
            if calls_made >= config.max_turns:
                if config.on_max_turns == "error" or final_call:
                    raise MaxTurnsExceeded(config.max_turns)
                final_call = True
                self._append(Message.user(FINAL_ANSWER_PROMPT))
            turn = calls_made + 1
            session = self.session
            if session.tokens() > session.max_history_tokens:
                await config.governance.fire("PreCompact", self.gate_context(), trigger="auto")
            rewritten, cost = await compact_history(session, config.economy)
            if rewritten:
                self._pending.clear()  # the store rewrote the whole history, these included
            self.usage = self.usage + cost
            request = self._request(final_call)
            for stage in self.stages:
                request = await stage.before_model(request, turn)
            try:
                response = await self._call_model(request, turn)
            except BaseException:
                await self._after_model(None)
                raise
            await self._after_model(response.usage)
            calls_made += 1
            self.scope.turns_left = config.max_turns - calls_made
            self.usage = self.usage + response.usage
            message = response.message
            self._append(message)
            outcome = self.output.check(message, response.finish_reason, final_call)
            if isinstance(outcome, Retry):
                self._append_all(outcome.replies)
                await self.end_turn(turn, "retry", response.usage)
            elif isinstance(outcome, Answer):
                self._append_all(outcome.replies)
                if self.stream is not None:
                    self.stream.final(outcome.output, turn)
                await self.end_turn(turn, outcome.reason, response.usage)
                more = not final_call and calls_made < config.max_turns
                if more and await self._stop_blocked(message.text):
                    continue  # a Stop hook sent the model back to work
                return outcome.output, calls_made
            elif final_call:
                raise MaxTurnsExceeded(config.max_turns)
            else:
                fatal = await self._run_tools(message.tool_calls, turn)
                reason = "error" if fatal is not None else "tool_calls"
                await self.end_turn(turn, reason, response.usage)
                if fatal is not None:
                    raise fatal

    async def _after_model(self, usage: Usage | None) -> None:
        for stage in self.stages:
            await stage.after_model(usage)

    async def _prompt_message(self) -> Message:
        return await prompt_message(
            self.config.governance, self.session, self.gate_context(), self.prompt
        )

    async def _stop_blocked(self, answer: str) -> bool:
        reason = await stop_reason(
            self.config.governance, self.gate_context(), self._stop_active, answer
        )
        if reason is None:
            return False
        self._stop_active = True
        self._append(Message.user(reason))
        return True

    def _request(self, final_call: bool) -> ModelRequest:
        config, output, skills = self.config, self.output, self.config.skills
        defs = skills.offered(self.registry) if skills is not None else self.registry.definitions()
        key = tuple(map(id, defs))
        if key != self._defs_key:
            self._defs_key, self._defs = key, output.tools(defs)
        search = config.tool_search  # search mode narrows them (`_run/tool_search.py`)
        tools = search.offered(self.session, self.registry, self._defs) if search else self._defs
        history = self.session.messages
        system = self.system
        native, fields = output.native, config.model_settings.request_fields()
        return ModelRequest(
            messages=[system, *history] if system is not None else list(history),
            tools=tools,
            tool_choice=output.tool_choice(final_call),
            output_schema=native.schema if native is not None else None,
            output_name=output.name,
            cache_key=self.session.id,
            **(search.request_fields(self.session, fields) if search else fields),
        )

    async def _call_model(self, request: ModelRequest, turn: int) -> ModelResponse:
        if self.stream is None:
            return await self.model.complete(request)
        return await self.stream.read(self.model, request, turn)

    def _announce(self, call: ToolCallPart, turn: int) -> None:
        spec = self.output.spec
        if call.id in self._announced or (spec is not None and call.name == spec.name):
            return
        self._announced.add(call.id)
        if self.emit is not None:
            self.emit(ToolCallRequested(call, turn))

    # -- tools --------------------------------------------------------------------------

    async def _run_tools(self, calls: list[ToolCallPart], turn: int) -> Exception | None:
        """Gate and run every call in its own task; returns the error that ends the run.

        The instant checks (plan mode, then the registry's declared-permission policy) run for
        the whole turn first, so a denial that ends the run does so before anything ran; the
        stages that may wait (hooks, approvals) run inside each call's task, so one call waiting
        for a person never holds up the others.
        """
        registry, config = self.registry, self.config
        for call in calls:
            self._announce(call, turn)
            self._call_names[call.id] = call.name
        parts: list[ToolResultPart | None] = [None] * len(calls)
        self._inflight = (calls, parts)
        runnable: list[tuple[int, Tool | None]] = []
        for i, call in enumerate(calls):
            tool = registry.get(call.name)
            try:
                config.governance.precheck(call.name, tool, self.gate_context(), call.arguments)
                if tool is not None:
                    registry.check_permissions(call.name, tool)
            except CallBlocked as blocked:
                self.emit_blocked(call, blocked.stage, blocked.reason, turn)
                parts[i] = error_part(call, blocked.message, config.max_tool_result_chars)
                continue
            except ToolError as denied:  # the declared-permission policy ends the run
                self.limits.blocked(call, "policy", denied.message)  # its query-log row
                parts[i] = error_part(call, denied.message, config.max_tool_result_chars)
                self._settle(f"Not executed: the call to {call.name!r} was refused.")
                return denied
            runnable.append((i, tool))
        return await self.finish_tools(self.call_setup(turn), calls, parts, runnable, turn)

    async def finish_tools(
        self,
        setup: CallSetup,
        calls: list[ToolCallPart],
        parts: list[ToolResultPart | None],
        runnable: list[tuple[int, Tool | None]],
        turn: int,
    ) -> Exception | None:
        """Run a turn's `runnable` calls and add its results (`parts`) to the history; an
        approval deferred by any of them pauses the run (`RunPaused`) once all are done."""
        tasks = [
            asyncio.ensure_future(self._invoke(setup, i, calls[i], tool, parts, turn))
            for i, tool in runnable
        ]
        outcomes = await invoke_all(self.ctx, tasks)
        invocations = [o.invocation for o in outcomes if o.invocation is not None]
        self.invocations.extend(invocations)
        deferred = [o.deferred for o in outcomes if o.deferred is not None]
        if deferred:
            raise RunPaused(paused_state(self, calls, parts, deferred, turn))
        for message_part in parts:
            assert message_part is not None
            self._append(Message("tool", [message_part]))
        refusal = next((o.refusal for o in outcomes if o.refusal is not None), None)
        if refusal is not None:
            return refusal
        for inv in invocations:
            error = inv.error
            if error is not None and not error.recoverable and not isinstance(error, ToolNotFound):
                cause = error.__cause__  # the run ends with the family's own error (MCPError)
                return cause if isinstance(cause, ToolweaveError) else error
        return None

    def gate_context(self) -> GateContext:
        """Read per call: the session's mode may be switched while the run goes on, and a
        skill activated during the run grants its `allowed-tools` from then on."""
        gate = GateContext.of(self.session, self.registry.policy)
        gate.preapproved = lambda: run_grants(self.config, self.command, self.session)
        return gate

    def call_setup(self, turn: int, governance: Governance | None = None) -> CallSetup:
        """The chain this run's calls go through (`dispatch_call`), their events at `turn`;
        `governance` replaces the agent's (a resumed turn's answers)."""
        config = self.config
        gates = governance if governance is not None else config.governance
        middleware = GovernanceMiddleware(
            lambda call: (gates, self.gate_context()),
            self.registry,
            lambda gate: self.session,
        )
        return CallSetup(
            self.registry,
            middleware,
            config.max_tool_result_chars,
            config.economy.pages if config.economy is not None else None,
            lambda call: self.emit_started(call, turn),
            lambda call, blocked: self.emit_blocked(call, blocked.stage, blocked.reason, turn),
            self.trace.tool_stage if self.trace is not None else None,
        )

    def emit_started(self, call: ToolCallPart, turn: int) -> None:
        if self.emit is not None:
            self.emit(ToolExecutionStarted(call, turn))

    def emit_blocked(self, call: ToolCallPart, stage: str, reason: str, turn: int) -> None:
        self.limits.blocked(call, stage, reason)  # the query log's row of the refused call
        if self.emit is not None:
            self.emit(ToolCallBlocked(call, stage, reason, turn))

    async def _invoke(
        self,
        setup: CallSetup,
        index: int,
        call: ToolCallPart,
        tool: Tool | None,
        parts: list[ToolResultPart | None],
        turn: int,
    ) -> CallOutcome:
        ctx = self.ctx
        child = ctx.for_call(call.id)
        config = self.config
        # A subagent or team run keeps its own time budget.
        budgeted = call.name in config.orchestration.children.budgeted_tools
        timeout = None if budgeted else config.tool_timeout
        try:
            outcome = await dispatch_call(setup, call, tool, child, timeout)
        finally:
            ctx.cancellation.release(child.cancellation)
        parts[index] = outcome.part
        inv = outcome.invocation
        call_ended(self.stages, self.session, call, outcome)
        if self.emit is not None and inv is not None:
            self.emit(ToolExecutionCompleted(call, outcome.part, inv.error, inv.duration, turn))
        return outcome

    def _sink(self, item: UserOutput) -> None:
        if item.kind == "text" and self.config.user_output == "media_only":
            return
        self.user_outputs.append(item)
        if self.emit is not None:
            name = self._call_names.get(item.call_id) if item.call_id is not None else None
            self.emit(UserOutputSent(item, name))

    # -- history ------------------------------------------------------------------------

    def _append(self, message: Message) -> None:
        self.session.messages.append(message)
        self._pending.append(message)

    def _append_all(self, messages: list[Message]) -> None:
        for message in messages:
            self._append(message)

    async def _commit(self) -> None:
        pending, self._pending = self._pending, []
        if pending and self.session.store is not None:
            # Shielded: a run cancelled mid-write still finishes the transaction it started.
            await asyncio.shield(self.session.commit(pending))

    async def end_turn(self, turn: int, reason: Any, usage: Usage) -> None:
        await self._commit()
        self._inflight = None
        if self.emit is not None:
            self.emit(TurnCompleted(turn, reason, usage))

    def _settle(self, text: str) -> None:
        """Give every unanswered call of the last assistant message a result."""
        finished = [] if self._inflight is None else self._inflight[1]
        limit = self.config.max_tool_result_chars
        for part in unanswered(self.session.messages, finished, text, limit):
            self._append(Message("tool", [part]))
        self._inflight = None

    def _result(self, output: Any, new: list[Message], turns: int) -> RunResult[Any]:
        return RunResult(
            output=output,
            messages=list(self.session.messages),
            usage=self.usage + self.scope.child_usage,
            invocations=self.invocations,
            new_messages=list(new),
            turns=turns,
            run_id=self.run_id,
            session_id=self.session.id,
            user_outputs=self.user_outputs,
        )
