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

from toolweave import llm
from toolweave.llm import Message, ModelRequest, ModelResponse, ToolCallPart, ToolResultPart, Usage
from toolweave.tools import ToolContext, ToolDef, ToolInvocation, ToolNotFound, UserOutput
from toolweave.tools.context import REGISTRY_EXTRA

from ._shape import acceptance, error_part, rejection, result_part
from .errors import MaxTurnsExceeded, OutputValidationError
from .events import (
    AgentEvent,
    ModelTextDelta,
    ModelThinkingDelta,
    OutputDelta,
    RunCompleted,
    RunFailed,
    RunStarted,
    ToolCallRequested,
    ToolExecutionCompleted,
    ToolExecutionStarted,
    TurnCompleted,
    UserOutputSent,
)
from .gates import GateRequest, clear_call
from .output import PartialOutput

if TYPE_CHECKING:
    from toolweave.tools import ToolError

    from .agent import Agent, RunResult
    from .session import Session

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
        self, agent: Agent[Any, Any], prompt: str, session: Session, deps: Any, emit: Emit | None
    ) -> None:
        self.agent = agent
        self.session = session
        self.emit = emit
        self.run_id = uuid.uuid4().hex
        self.prompt = prompt
        self.registry = agent.registry  # the session's overlay, set once the session is ours
        self.ctx = ToolContext(
            session_id=session.id, trace_id=self.run_id, deps=deps, output_sink=self._sink
        )
        self.usage = Usage()
        self.invocations: list[ToolInvocation] = []
        self.user_outputs: list[UserOutput] = []
        self._pending: list[Message] = []
        self._call_names: dict[str, str] = {}
        self._announced: set[str] = set()
        self._defs_key: tuple[int, ...] | None = None
        self._defs: list[ToolDef] = []
        self._partial: PartialOutput | None = None
        # The calls of the turn being executed and the results that are in, for `_settle`.
        self._inflight: tuple[list[ToolCallPart], list[ToolResultPart | None]] | None = None

    # -- the loop -----------------------------------------------------------------------

    async def execute(self) -> RunResult[Any]:
        session = self.session
        session.acquire()
        try:
            # Only after acquiring: the overlay is per session, and a run refused with
            # SessionBusy must not swap the policy under the run that holds the session.
            self.registry = self.agent._session_registry(session)
            self.ctx.extras[REGISTRY_EXTRA] = self.registry  # where `mcp_load` adds tools
            return await self._execute()
        finally:
            session.release()

    async def _execute(self) -> RunResult[Any]:
        agent, emit, spec = self.agent, self.emit, self.agent._output
        history = self.session.messages
        self._settle(_UNANSWERED)  # a history written elsewhere may end in unanswered calls
        start = len(history)
        self._append(Message.user(self.prompt))
        if emit is not None:
            emit(RunStarted(self.run_id, self.session.id, self.prompt))
        calls_made = 0
        final_call = False
        retries_left = agent.output_retries
        limit = agent.max_tool_result_chars
        try:
            while True:
                if calls_made >= agent.max_turns:
                    if agent.on_max_turns == "error" or final_call:
                        raise MaxTurnsExceeded(agent.max_turns)
                    final_call = True
                    self._append(Message.user(FINAL_ANSWER_PROMPT))
                turn = calls_made + 1
                if self.session.compact():
                    self._pending.clear()  # the store rewrote the whole history, these included
                response = await self._call_model(self._request(final_call), turn)
                calls_made += 1
                self.usage = self.usage + response.usage
                message = response.message
                self._append(message)
                calls = message.tool_calls
                output_call = None
                if spec is not None and agent.output_mode == "tool":
                    output_call = next((c for c in calls if c.name == spec.name), None)
                if output_call is not None or not calls:
                    try:
                        if spec is None:
                            output: Any = message.text
                        elif output_call is not None:
                            output = spec.parse_arguments(output_call.arguments)
                        else:
                            output = spec.parse_text(message.text)
                    except OutputValidationError as exc:
                        if retries_left <= 0 or final_call:
                            raise
                        retries_left -= 1
                        for reply in rejection(spec, calls, output_call, exc, limit):
                            self._append(reply)
                        self._end_turn(turn, "retry", response.usage)
                        continue
                    for reply in acceptance(calls, output_call, limit):
                        self._append(reply)
                    self._final_partial(output, turn)
                    reason = "stop" if output_call is not None else response.finish_reason
                    self._end_turn(turn, reason, response.usage)
                    result = self._result(output, history[start:], calls_made)
                    if emit is not None:
                        emit(RunCompleted(result))
                    return result
                if final_call:
                    raise MaxTurnsExceeded(agent.max_turns)
                fatal = await self._run_tools(calls, turn)
                self._end_turn(turn, "error" if fatal is not None else "tool_calls", response.usage)
                if fatal is not None:
                    raise fatal
        except asyncio.CancelledError:
            self.ctx.cancel()
            self._settle(_CANCELLED)
            self._commit()
            raise
        except BaseException as exc:
            self._settle(_ABORTED)
            self._commit()
            if emit is not None:
                emit(RunFailed(exc))
            raise

    def _request(self, final_call: bool) -> ModelRequest:
        agent, spec = self.agent, self.agent._output
        defs = self.registry.definitions()
        key = tuple(map(id, defs))
        if key != self._defs_key:
            if spec is not None and agent.output_mode == "tool":
                defs = sorted([*defs, spec.tool_def], key=lambda d: d.name)
            self._defs_key, self._defs = key, defs
        native = spec is not None and agent.output_mode == "native"
        tool_choice: llm.ToolChoice = "auto"
        if spec is not None and agent.output_mode == "tool":
            tool_choice = {"name": spec.name} if final_call else "required"
        elif final_call:
            tool_choice = "none"
        history = self.session.messages
        system = agent._system_message
        return ModelRequest(
            messages=[system, *history] if system is not None else list(history),
            tools=self._defs,
            tool_choice=tool_choice,
            output_schema=spec.schema if native and spec is not None else None,
            output_name=spec.name if spec is not None else "final_output",
            **agent.model_settings,
        )

    async def _call_model(self, request: ModelRequest, turn: int) -> ModelResponse:
        model, emit = self.agent.model, self.emit
        if emit is None:
            return await model.complete(request)
        spec = self.agent._output
        partial = self._partial = PartialOutput(spec) if spec is not None else None
        output_indexes: set[int] = set()  # the final-output tool's calls in this response
        response: ModelResponse | None = None
        stream = model.stream(request)
        try:
            async for event in stream:
                response = self._on_stream_event(event, partial, output_indexes, turn) or response
        finally:
            # Close now, not at garbage collection: a cancelled run must release its connection.
            aclose = getattr(stream, "aclose", None)
            if aclose is not None:
                await aclose()
        if response is None:
            raise llm.ModelError(
                None, f"model {model.model_name!r} ended its stream without a Finished event"
            )
        return response

    def _on_stream_event(
        self, event: llm.StreamEvent, partial: PartialOutput | None, indexes: set[int], turn: int
    ) -> ModelResponse | None:
        emit, spec = self.emit, self.agent._output
        assert emit is not None
        native = self.agent.output_mode == "native"
        if isinstance(event, llm.TextDelta):
            emit(ModelTextDelta(event.text, turn))
            if partial is not None and native:
                self._emit_partial(partial, event.text, turn)
        elif isinstance(event, llm.ToolCallDelta):
            if partial is not None and spec is not None and not native:
                if event.name == spec.name:
                    indexes.add(event.index)
                if event.index in indexes:
                    self._emit_partial(partial, event.arguments_delta, turn)
        elif isinstance(event, llm.ToolCallReady):
            self._announce(event.call, turn)
        elif isinstance(event, llm.ThinkingDelta):
            emit(ModelThinkingDelta(event.text, turn))
        elif isinstance(event, llm.Finished):
            return event.response
        return None

    def _emit_partial(self, partial: PartialOutput, chunk: str, turn: int) -> None:
        value = partial.feed(chunk)
        if value is not PartialOutput.NOTHING and self.emit is not None:
            self.emit(OutputDelta(value, turn))

    def _final_partial(self, output: Any, turn: int) -> None:
        """Streams end on the validated value, even when repair was needed to get it."""
        spec, partial = self.agent._output, self._partial
        if self.emit is None or spec is None or partial is None:
            return
        final = spec.dump(output)
        if partial.last != final:
            self.emit(OutputDelta(final, turn))

    def _announce(self, call: ToolCallPart, turn: int) -> None:
        spec = self.agent._output
        if call.id in self._announced or (spec is not None and call.name == spec.name):
            return
        self._announced.add(call.id)
        if self.emit is not None:
            self.emit(ToolCallRequested(call, turn))

    # -- tools --------------------------------------------------------------------------

    async def _run_tools(self, calls: list[ToolCallPart], turn: int) -> ToolError | None:
        """Gate, then run every cleared call concurrently; returns the error that ends the run."""
        registry, session = self.registry, self.session
        for call in calls:
            self._announce(call, turn)
            self._call_names[call.id] = call.name
        parts: list[ToolResultPart | None] = [None] * len(calls)
        self._inflight = (calls, parts)
        runnable: list[int] = []
        for i, call in enumerate(calls):
            tool = registry.get(call.name)
            refusal = await clear_call(self.agent.gates, GateRequest(call, tool, registry, session))
            if refusal is None:
                runnable.append(i)
            else:
                parts[i] = error_part(call, refusal.message, self.agent.max_tool_result_chars)
                if not refusal.recoverable:
                    self._settle(f"Not executed: the call to {call.name!r} was refused.")
                    return refusal
        if self.emit is not None:
            for i in runnable:
                self.emit(ToolExecutionStarted(calls[i], turn))
        invocations = await self._invoke_all(
            [asyncio.ensure_future(self._invoke(i, calls[i], parts, turn)) for i in runnable]
        )
        self.invocations.extend(invocations)
        for message_part in parts:
            assert message_part is not None
            self._append(Message("tool", [message_part]))
        for inv in invocations:
            error = inv.error
            if error is not None and not error.recoverable and not isinstance(error, ToolNotFound):
                return error
        return None

    async def _invoke_all(self, tasks: list[asyncio.Task[ToolInvocation]]) -> list[ToolInvocation]:
        """Await the calls. If that is interrupted (cancellation, or a call failing outside the
        registry's error handling), the tools' signal fires first and they get one loop
        iteration to notice it (cooperative tools stop cleanly, threads see `ctx.cancelled`);
        then the rest are cancelled and awaited, so nothing outlives the run."""
        try:
            return await asyncio.shield(asyncio.gather(*tasks))
        except BaseException:
            self.ctx.cancel()
            try:
                await asyncio.sleep(0)
            finally:  # a second cancellation must not leave the tools running
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
            raise

    async def _invoke(
        self, index: int, call: ToolCallPart, parts: list[ToolResultPart | None], turn: int
    ) -> ToolInvocation:
        emit, ctx = self.emit, self.ctx
        child = ctx.for_call(call.id)
        try:
            inv = await self.registry.invoke(
                call.name, call.arguments, child, call_id=call.id, timeout=self.agent.tool_timeout
            )
        finally:
            ctx.cancellation.release(child.cancellation)
        part = result_part(call, inv, self.agent.max_tool_result_chars)
        parts[index] = part
        if emit is not None:
            emit(ToolExecutionCompleted(call, part, inv.error, inv.duration, turn))
        return inv

    def _sink(self, item: UserOutput) -> None:
        if item.kind == "text" and self.agent.user_output == "media_only":
            return
        self.user_outputs.append(item)
        if self.emit is not None:
            name = self._call_names.get(item.call_id) if item.call_id is not None else None
            self.emit(UserOutputSent(item, name))

    # -- history ------------------------------------------------------------------------

    def _append(self, message: Message) -> None:
        self.session.messages.append(message)
        self._pending.append(message)

    def _commit(self) -> None:
        pending, self._pending = self._pending, []
        self.session.commit(pending)

    def _end_turn(self, turn: int, reason: Any, usage: Usage) -> None:
        self._commit()
        self._inflight = None
        if self.emit is not None:
            self.emit(TurnCompleted(turn, reason, usage))

    def _settle(self, text: str) -> None:
        """Give every unanswered call of the last assistant message a result."""
        history = self.session.messages
        index = next(
            (i for i in range(len(history) - 1, -1, -1) if history[i].role == "assistant"), None
        )
        if index is None:
            return
        answered = {p.call_id for m in history[index + 1 :] for p in m.tool_results}
        finished: dict[str, ToolResultPart] = {}
        if self._inflight is not None:
            finished = {p.call_id: p for p in self._inflight[1] if p is not None}
        limit = self.agent.max_tool_result_chars
        for call in history[index].tool_calls:
            if call.id not in answered:
                part = finished.get(call.id) or error_part(call, text, limit)
                self._append(Message("tool", [part]))
                answered.add(call.id)
        self._inflight = None

    def _result(self, output: Any, new: list[Message], turns: int) -> RunResult[Any]:
        from .agent import RunResult

        return RunResult(
            output=output,
            messages=list(self.session.messages),
            usage=self.usage,
            invocations=self.invocations,
            new_messages=list(new),
            turns=turns,
            run_id=self.run_id,
            session_id=self.session.id,
            user_outputs=self.user_outputs,
        )
