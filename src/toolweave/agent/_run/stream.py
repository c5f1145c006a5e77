"""Reading one streamed model response into the run's events.

A streamed turn is where the run meets the consumer in real time: text and thinking deltas, tool
calls announced as soon as their arguments are complete, and partial structured output parsed
from the answer's text (native mode) or from the final-output tool's arguments (tool mode).
Kept apart from the loop, which only needs the finished `ModelResponse`. `run_events` is the
consumer's side: the events a run emits, as an async generator (`run_stream`, `resume_stream`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable, Coroutine
from typing import Any

from toolweave import llm
from toolweave.agent._run.answer import OutputHandler
from toolweave.agent.events import (
    AgentEvent,
    ModelTextDelta,
    ModelThinkingDelta,
    OutputDelta,
    ProviderToolActivity,
)
from toolweave.agent.output import PartialOutput
from toolweave.llm import ModelRequest, ModelResponse, ToolCallPart


class StreamReader:
    """Streams a model's turns to `emit`; `announce(call, turn)` publishes a ready tool call."""

    def __init__(
        self,
        emit: Callable[[AgentEvent], None],
        output: OutputHandler,
        announce: Callable[[ToolCallPart, int], None],
    ) -> None:
        self.emit = emit
        self.output = output
        self.announce = announce
        self.partial: PartialOutput | None = None

    async def read(self, model: llm.Model, request: ModelRequest, turn: int) -> ModelResponse:
        """The response of one streamed model call, its events emitted on the way."""
        spec = self.output.spec
        partial = self.partial = PartialOutput(spec) if spec is not None else None
        output_indexes: set[int] = set()  # the final-output tool's calls in this response
        response: ModelResponse | None = None
        stream = model.stream(request)
        try:
            async for event in stream:
                response = self._on_event(event, partial, output_indexes, turn) or response
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

    def final(self, output: Any, turn: int) -> None:
        """Streams end on the validated value, even when repair was needed to get it."""
        spec, partial = self.output.spec, self.partial
        if spec is None or partial is None:
            return
        final = spec.dump(output)
        if partial.last != final:
            self.emit(OutputDelta(final, turn))

    def _on_event(
        self, event: llm.StreamEvent, partial: PartialOutput | None, indexes: set[int], turn: int
    ) -> ModelResponse | None:
        emit, output = self.emit, self.output
        if isinstance(event, llm.TextDelta):
            emit(ModelTextDelta(event.text, turn))
            if partial is not None and output.native is not None:
                self._partial(partial, event.text, turn)
        elif isinstance(event, llm.ToolCallDelta):
            if partial is not None and output.as_tool is not None:
                if output.is_output_call(event.name):
                    indexes.add(event.index)
                if event.index in indexes:
                    self._partial(partial, event.arguments_delta, turn)
        elif isinstance(event, llm.ToolCallReady):
            self.announce(event.call, turn)
        elif isinstance(event, llm.ThinkingDelta):
            emit(ModelThinkingDelta(event.text, turn))
        elif isinstance(event, llm.ProviderToolUpdate):
            emit(ProviderToolActivity(event.part, turn))
        elif isinstance(event, llm.Finished):
            return event.response
        return None

    def _partial(self, partial: PartialOutput, chunk: str, turn: int) -> None:
        value = partial.feed(chunk)
        if value is not PartialOutput.NOTHING:
            self.emit(OutputDelta(value, turn))


_DONE: Any = object()


async def run_events(
    execution: Coroutine[Any, Any, Any], queue: asyncio.Queue[Any]
) -> AsyncGenerator[AgentEvent, None]:
    """Yield what a run puts on `queue` (its `emit`) while `execution` (its `execute()`) runs;
    a failed run yields `RunFailed`, then raises. Closing the generator early cancels the run."""
    task = asyncio.ensure_future(execution)
    task.add_done_callback(lambda _: queue.put_nowait(_DONE))
    try:
        while True:
            event = await queue.get()
            if event is _DONE:
                break
            yield event
        await task  # re-raises the run's error after RunFailed was yielded
    finally:
        if not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
