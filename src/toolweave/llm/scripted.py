"""Models that need no network: `ScriptedModel` replays steps, `FunctionModel` calls a function.

Both are public: tests, examples and offline demos drive the agent loop with them.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from typing import TypeAlias, cast

from toolweave.llm.messages import Message
from toolweave.llm.types import ModelRequest, ModelResponse, StreamEvent, Usage, response_events

StepResult: TypeAlias = Message | ModelResponse
Step: TypeAlias = (
    Message
    | ModelResponse
    | BaseException
    | type[BaseException]
    | Callable[[ModelRequest], StepResult | Awaitable[StepResult]]
)


async def _resolve(step: Step, request: ModelRequest, usage: Usage | None) -> ModelResponse:
    if isinstance(step, BaseException):
        raise step
    if isinstance(step, type) and issubclass(step, BaseException):
        raise step()
    value: object = step
    if callable(step) and not isinstance(step, Message | ModelResponse):
        outcome = cast(Callable[[ModelRequest], object], step)(request)
        value = await outcome if inspect.isawaitable(outcome) else outcome
    if isinstance(value, Message):
        return ModelResponse(value, usage=usage if usage is not None else Usage())
    if isinstance(value, ModelResponse):
        return value
    raise TypeError(
        f"a scripted step must be a Message, ModelResponse, exception or callable, got {value!r}"
    )


class ScriptedModel:
    """Replays `steps` in order, one per model call, and records every request in `.requests`.

    A step is a `Message`, a `ModelResponse`, an exception (instance or class) to raise, or a
    callable (sync or async) that receives the `ModelRequest` and returns a Message or
    ModelResponse. `usage` is reported on every response built from a bare `Message`.
    """

    def __init__(
        self, steps: Iterable[Step], usage: Usage | None = None, model_name: str = "scripted"
    ) -> None:
        self._steps = list(steps)
        self._usage = usage
        self._model_name = model_name
        self.requests: list[ModelRequest] = []

    @property
    def model_name(self) -> str:
        return self._model_name

    @property
    def remaining(self) -> int:
        return len(self._steps) - len(self.requests)

    async def complete(self, request: ModelRequest) -> ModelResponse:
        index = len(self.requests)
        self.requests.append(request)
        if index >= len(self._steps):
            raise RuntimeError(
                f"ScriptedModel ran out of steps: call {index + 1} but only "
                f"{len(self._steps)} scripted; add a step for this turn"
            )
        return await _resolve(self._steps[index], request, self._usage)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        response = await self.complete(request)
        async for event in response_events(response):
            yield event


class FunctionModel:
    """A model whose every answer comes from `function(request)` (sync or async)."""

    def __init__(
        self,
        function: Callable[[ModelRequest], StepResult | Awaitable[StepResult]],
        model_name: str = "function",
    ) -> None:
        self._function = function
        self._model_name = model_name
        self.requests: list[ModelRequest] = []

    @property
    def model_name(self) -> str:
        return self._model_name

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        return await _resolve(self._function, request, None)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        response = await self.complete(request)
        async for event in response_events(response):
            yield event
