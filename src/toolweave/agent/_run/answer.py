"""Turning a model turn into the run's answer: the final-output tool or a text answer, parsed,
validated, and corrected within the retry budget.

The loop asks one question per turn, `OutputHandler.check(message, ...)`: is this the answer
(`Answer`), an invalid answer the model must fix (`Retry`), or neither (run the tools)? What the
request declares for structured output (the extra tool, the tool choice, the native schema)
lives here too, so the loop holds no output logic of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from toolweave.agent._run.shape import acceptance, rejection
from toolweave.agent.errors import OutputValidationError
from toolweave.agent.output import DEFAULT_OUTPUT_NAME, OutputSpec
from toolweave.llm import FinishReason, Message, ToolCallPart, ToolChoice
from toolweave.tools import ToolDef


@dataclass(frozen=True, slots=True)
class Answer:
    """The run's output, and the tool messages that close the turn it came in."""

    output: Any
    replies: list[Message]
    reason: FinishReason


@dataclass(frozen=True, slots=True)
class Retry:
    """The answer failed validation; `replies` ask the model to correct it."""

    replies: list[Message]


class OutputHandler:
    """One run's view of `output_type`: what to declare, and how to read each turn."""

    __slots__ = ("_limit", "_mode", "_retries_left", "spec")

    def __init__(
        self,
        spec: OutputSpec | None,
        mode: Literal["native", "tool"],
        retries: int,
        max_chars: int,
    ) -> None:
        self.spec = spec
        self._mode = mode
        self._retries_left = retries
        self._limit = max_chars

    @property
    def as_tool(self) -> OutputSpec | None:
        """The spec when the answer is a forced final tool call, else None."""
        return self.spec if self._mode == "tool" else None

    @property
    def native(self) -> OutputSpec | None:
        """The spec when the provider's native response format carries the answer."""
        return self.spec if self._mode == "native" else None

    @property
    def name(self) -> str:
        return self.spec.name if self.spec is not None else DEFAULT_OUTPUT_NAME

    def tools(self, defs: list[ToolDef]) -> list[ToolDef]:
        spec = self.as_tool
        return defs if spec is None else sorted([*defs, spec.tool_def], key=lambda d: d.name)

    def tool_choice(self, final_call: bool) -> ToolChoice:
        spec = self.as_tool
        if spec is not None:
            return {"name": spec.name} if final_call else "required"
        return "none" if final_call else "auto"

    def is_output_call(self, name: str | None) -> bool:
        spec = self.as_tool
        return spec is not None and name == spec.name

    def check(
        self, message: Message, finish_reason: FinishReason, final_call: bool
    ) -> Answer | Retry | None:
        """Read one turn; raises `OutputValidationError` once the retries are spent."""
        calls = message.tool_calls
        output_call = next((c for c in calls if self.is_output_call(c.name)), None)
        if output_call is None and calls:
            return None
        try:
            output = self._parse(message, output_call)
        except OutputValidationError as exc:
            if self._retries_left <= 0 or final_call:
                raise
            self._retries_left -= 1
            return Retry(rejection(self.spec, calls, output_call, exc, self._limit))
        reason: FinishReason = "stop" if output_call is not None else finish_reason
        return Answer(output, acceptance(calls, output_call, self._limit), reason)

    def _parse(self, message: Message, output_call: ToolCallPart | None) -> Any:
        spec = self.spec
        if spec is None:
            return message.text
        if output_call is not None:
            return spec.parse_arguments(output_call.arguments)
        return spec.parse_text(message.text)
