"""Structured output: how the answer is asked for, the schema the model must meet and the lenient
parsing of what it sends.

`Output` is what `Agent(output_type=...)` takes beyond a bare type: how the answer is asked for,
how often a bad one is retried, what happens when the turns run out and which tool outputs the
run keeps for the user.

Models wrap JSON in prose and code fences, use single quotes and trailing commas; json-repair
recovers the value and pydantic validates it. Non-object types (a list, an int) are wrapped in
an object with one `result` field because tools and most native response formats demand an
object at the top level.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Generic, Literal

from pydantic import TypeAdapter, ValidationError
from typing_extensions import TypeVar

from toolweave.agent.errors import OutputValidationError
from toolweave.errors import ConfigError
from toolweave.tools import ToolDef, repair_json

DEFAULT_OUTPUT_NAME = "final_output"
OutputMode = Literal["auto", "native", "tool"]
OutputT = TypeVar("OutputT", default=str)
"""The type of `RunResult.output`: `output_type` when given, else the answer text."""
OnMaxTurns = Literal["error", "final_answer"]
UserOutputKind = Literal["all", "media_only"]
_FENCE = re.compile(r"```[A-Za-z0-9_-]*[ \t]*\n?(.*?)```", re.DOTALL)
_UNSET: Any = object()


@dataclass(frozen=True)
class Output(Generic[OutputT]):
    """The run's answer: `Agent(output_type=Output(Report, mode="native"))`.

    `output_type` is what the answer is validated into (None: the answer text). `mode` is how
    it is asked for: "native" (the provider's structured output), "tool" (a final tool named
    `name`) or "auto" (native when the model supports it). `retries` counts the corrections a
    model gets for an answer that fails validation. `on_max_turns` is "error" (raise
    `MaxTurnsExceeded`) or "final_answer" (one more call, without tools, for the answer).
    `user_output` keeps "all" that tools send the user (`ctx.send_*`) or "media_only" (files and
    images; a subagent's text is its answer).
    """

    output_type: type[OutputT] | None = None
    mode: OutputMode = "auto"
    name: str = DEFAULT_OUTPUT_NAME
    retries: int = 1
    on_max_turns: OnMaxTurns = "error"
    user_output: UserOutputKind = "all"

    def __post_init__(self) -> None:
        _choice("mode", self.mode, ("auto", "native", "tool"))
        _choice("on_max_turns", self.on_max_turns, ("error", "final_answer"))
        _choice("user_output", self.user_output, ("all", "media_only"))
        if isinstance(self.retries, bool) or not isinstance(self.retries, int) or self.retries < 0:
            raise ConfigError(f"Output(retries=...) must be 0 or more, got {self.retries!r}")
        if not isinstance(self.name, str) or not self.name:
            raise ConfigError(f"Output(name=...) must be a tool name, got {self.name!r}")

    def spec(self) -> OutputSpec | None:
        """The schema and parser of `output_type`, or None for a text answer."""
        return OutputSpec(self.output_type, self.name) if self.output_type is not None else None


def _choice(field: str, value: str, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ConfigError(f"Output({field}={value!r}) must be one of {', '.join(allowed)}")


class OutputSpec:
    """How one `output_type` is declared to the model and how answers are turned into it."""

    def __init__(self, output_type: Any, name: str = DEFAULT_OUTPUT_NAME) -> None:
        self.output_type = output_type
        self.name = name
        self._adapter: TypeAdapter[Any] = TypeAdapter(output_type)
        schema = self._adapter.json_schema()
        self.wrapped = schema.get("type") != "object"
        if self.wrapped:
            defs = schema.pop("$defs", None)
            schema = {"type": "object", "properties": {"result": schema}, "required": ["result"]}
            if defs:
                schema["$defs"] = defs
        self.schema: dict[str, Any] = schema
        title = getattr(output_type, "__name__", "the answer")
        doc = (getattr(output_type, "__doc__", None) or "").strip()
        if doc.startswith(("A base class", "Usage docs")):  # pydantic's own BaseModel doc
            doc = ""
        self.tool_def = ToolDef(
            name=name,
            description=(
                f"Give your final answer as {title}. Call this once you have everything you "
                "need; its arguments are the answer." + (f" {doc}" if doc else "")
            ),
            parameters=schema,
        )

    def parse_text(self, text: str) -> Any:
        """Find the JSON in a free-text answer, repair it, validate it."""
        value = _extract_json(text)
        if value is _UNSET:
            raise OutputValidationError(
                "the answer contained no JSON value; reply with only a JSON object matching "
                "the schema",
                text,
            )
        return self.validate(value, text)

    def parse_arguments(self, arguments: dict[str, Any]) -> Any:
        """Validate the arguments of a call to the final-output tool."""
        return self.validate(arguments, json.dumps(arguments, ensure_ascii=False))

    def validate(self, value: Any, raw: str) -> Any:
        if self.wrapped and isinstance(value, dict) and set(value) == {"result"}:
            value = value["result"]
        try:
            return self._adapter.validate_python(value)
        except ValidationError as exc:
            raise OutputValidationError(
                f"the answer does not match the schema: {format_errors(exc)}", raw
            ) from exc

    def dump(self, value: Any) -> Any:
        """The validated answer as plain JSON (what a last `OutputDelta` carries)."""
        return self._adapter.dump_python(value, mode="json")

    def unwrap_partial(self, value: Any) -> Any:
        if self.wrapped and isinstance(value, dict):
            return value.get("result")
        return value

    def retry_message(self, error: OutputValidationError) -> str:
        return (
            f"Your final answer was rejected: {error}. Reply again with only the corrected "
            "JSON, matching this schema exactly: "
            + json.dumps(self.schema, ensure_ascii=False, sort_keys=True)
        )


def format_errors(exc: ValidationError) -> str:
    """One clause per pydantic error: `field.path: message (got value)`."""
    clauses = []
    for err in exc.errors(include_url=False):
        loc = ".".join(str(p) for p in err["loc"]) or "(root)"
        got = json.dumps(err.get("input"), ensure_ascii=False, default=str)
        if len(got) > 80:
            got = got[:77] + "..."
        clauses.append(f"{loc}: {err['msg']} (got {got})")
    return "; ".join(clauses)


def _extract_json(text: str) -> Any:
    stripped = text.strip()
    if not stripped:
        return _UNSET
    try:
        return json.loads(stripped)
    except ValueError:
        pass
    fenced = _FENCE.search(stripped)
    candidate = fenced.group(1) if fenced else stripped
    starts = [i for i in (candidate.find("{"), candidate.find("[")) if i >= 0]
    if not starts:
        return _UNSET
    start = min(starts)
    closer = "}" if candidate[start] == "{" else "]"
    end = candidate.rfind(closer)
    candidate = candidate[start : end + 1] if end > start else candidate[start:]
    value = repair_json(candidate)
    return _UNSET if value == "" else value


class PartialOutput:
    """Accumulates streamed JSON text and reports each new partial value exactly once."""

    __slots__ = ("_buffer", "_last", "_spec")

    def __init__(self, spec: OutputSpec) -> None:
        self._spec = spec
        self._buffer = ""
        self._last: Any = _UNSET

    def feed(self, chunk: str) -> Any:
        """Add text; return the partial value if it changed, else `PartialOutput.NOTHING`."""
        from partial_json_parser import loads

        self._buffer += chunk
        start = self._buffer.find("{")
        if start < 0:
            return _UNSET
        try:
            value = loads(self._buffer[start:])
        except Exception:  # half a token, or prose after the object: wait for more
            return _UNSET
        if not isinstance(value, dict) or not value or value == self._last:
            return _UNSET
        self._last = value
        return self._spec.unwrap_partial(value)

    @property
    def last(self) -> Any:
        """The latest partial value reported (unwrapped), or `NOTHING`."""
        return _UNSET if self._last is _UNSET else self._spec.unwrap_partial(self._last)

    NOTHING: Any = _UNSET
