"""The `Model` protocol: what the agent loop and capabilities need from any provider."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Protocol, runtime_checkable

from toolweave.llm.types import ModelRequest, ModelResponse, StreamEvent


@runtime_checkable
class Model(Protocol):
    """A chat model with tool calling. `stream` ends with a `Finished` event."""

    @property
    def model_name(self) -> str: ...

    async def complete(self, request: ModelRequest) -> ModelResponse: ...

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]: ...
