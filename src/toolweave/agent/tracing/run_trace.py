"""OpenTelemetry spans for agent runs: one per run, turn, model call and tool call.

A run with `Agent(tracing=Tracing(...))` gets a `RunTrace`, which watches the run's typed event
stream (the same events `run_stream` yields) and wraps the model so each call gets a span. The
loop calls it through one seam (`RunTrace.observe` and `RunTrace.model`, in `Run.__init__`) and
knows nothing else about tracing. The spans follow the OpenTelemetry GenAI semantic
conventions:

```
invoke_agent <agent>          gen_ai.agent.name, gen_ai.conversation.id, usage totals
  turn <n>                    toolweave.turn, toolweave.turn.reason
    chat <model>              gen_ai.request.model, gen_ai.usage.input_tokens/output_tokens,
                              gen_ai.response.finish_reasons
    execute_tool <tool>       gen_ai.tool.name, gen_ai.tool.call.id, toolweave.tool.outcome,
                              toolweave.tool.duration_s, gen_ai.tool.call.arguments (redacted)
```

While a tool runs, its `execute_tool` span is the current span (`RunTrace.tool_stage`, the call
chain's innermost stage), so what the tool does joins it: an MCP request sent by the tool carries
that span in its `traceparent` (SEP-414), and a span the tool opens is its child.

Tool arguments may hold secrets or personal data, so they are recorded as `"[redacted]"`
unless `Tracing(redact_arguments=False)`. The OpenTelemetry API and SDK come with the `otel`
extra and are imported only when tracing is switched on.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolweave.agent import events
from toolweave.agent.events import AgentEvent
from toolweave.errors import ConfigError
from toolweave.llm import Finished, Model, ModelRequest, ModelResponse, StreamEvent, ToolCallPart
from toolweave.tools.calls import CallHandler, ToolCall, ToolInvocation
from toolweave.version import __version__

if TYPE_CHECKING:
    from opentelemetry.trace import Span, Tracer

OTEL_INSTALL_HINT = "pip install 'toolweave[otel]'"
REDACTED = "[redacted]"
TRACER_NAME = "toolweave"

Emit = Callable[[AgentEvent], None]


@dataclass(frozen=True, slots=True)
class Tracing:
    """How an agent's runs are traced.

    `tracer_provider` is an OpenTelemetry `TracerProvider` (None: the global one, as set by
    `opentelemetry.trace.set_tracer_provider`). `redact_arguments` keeps tool arguments out of
    the spans (the default). `Tracing.to_jsonl(path)` writes spans to a JSON Lines file with
    no collector; `toolweave trace show FILE` renders it.
    """

    tracer_provider: Any = None
    redact_arguments: bool = True

    _tracer: Any = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _require_otel()
        from opentelemetry import trace

        # Once per Tracing: with the global provider this is a proxy that follows
        # `set_tracer_provider` calls made later.
        tracer = trace.get_tracer(TRACER_NAME, __version__, tracer_provider=self.tracer_provider)
        object.__setattr__(self, "_tracer", tracer)

    @classmethod
    def to_jsonl(cls, path: str | Path, *, redact_arguments: bool = True) -> Tracing:
        """Trace into `path` (appended, one span per line) through a private provider."""
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor

        from toolweave.agent.tracing.jsonl import JSONLSpanExporter

        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(JSONLSpanExporter(path)))
        return cls(provider, redact_arguments)

    def start(self, agent_name: str) -> RunTrace:
        return RunTrace(self._tracer, agent_name, self.redact_arguments)


def _require_otel() -> None:
    try:
        import opentelemetry.trace  # noqa: F401
    except ModuleNotFoundError:
        raise ConfigError(
            f"Agent(tracing=...) needs OpenTelemetry, which is not installed: {OTEL_INSTALL_HINT}"
        ) from None


class RunTrace:
    """The spans of one run, opened and closed from its events and its model calls."""

    def __init__(self, tracer: Tracer, agent_name: str, redact_arguments: bool) -> None:
        self._tracer = tracer
        self._agent = agent_name
        self._redact = redact_arguments
        self._run: Span | None = None
        self._turn: Span | None = None
        self._turn_number = 0
        self._requested: dict[str, ToolCallPart] = {}
        self._tools: dict[str, Span] = {}

    # -- the seam the run calls -----------------------------------------------------------

    def observe(self, emit: Emit | None) -> Emit:
        """An `emit` that records each event, then passes it on to `emit` (when streaming)."""

        def traced(event: AgentEvent) -> None:
            self._on_event(event)
            if emit is not None:
                emit(event)

        return traced

    def model(self, model: Model) -> Model:
        return _TracedModel(model, self)

    async def tool_stage(self, call: ToolCall, next: CallHandler) -> ToolInvocation:
        """A call-chain stage, inside the start event: the call's `execute_tool` span is the
        current span while the tool runs (each call runs in its own task, so its own context)."""
        span = self._tools.get(call.call_id) if call.call_id is not None else None
        if span is None:
            return await next(call)
        from opentelemetry import trace

        with trace.use_span(span, record_exception=False, set_status_on_exception=False):
            return await next(call)

    def finish(
        self, error_type: str = "cancelled", description: str = "the run was cancelled"
    ) -> None:
        """End whatever is still open, as failed (a cancelled run emits no final event)."""
        for span in [*self._tools.values(), self._turn, self._run]:
            if span is not None and span.is_recording():
                _fail(span, error_type, description)
                span.end()
        self._tools.clear()
        self._turn = self._run = None

    # -- spans ----------------------------------------------------------------------------

    def _child(self, name: str, parent: Span | None, attributes: dict[str, Any]) -> Span:
        from opentelemetry import trace

        context = trace.set_span_in_context(parent) if parent is not None else None
        kind = trace.SpanKind.CLIENT if name.startswith("chat ") else trace.SpanKind.INTERNAL
        return self._tracer.start_span(name, context=context, kind=kind, attributes=attributes)

    def _turn_span(self) -> Span:
        if self._turn is None:
            self._turn_number += 1
            self._turn = self._child(
                f"turn {self._turn_number}", self._run, {"toolweave.turn": self._turn_number}
            )
        return self._turn

    def chat_span(self, model_name: str, request: ModelRequest) -> Span:
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": model_name,
        }
        if request.max_tokens is not None:
            attributes["gen_ai.request.max_tokens"] = request.max_tokens
        if request.temperature is not None:
            attributes["gen_ai.request.temperature"] = request.temperature
        return self._child(f"chat {model_name}", self._turn_span(), attributes)

    def _on_event(self, event: AgentEvent) -> None:
        if isinstance(event, events.RunStarted):
            self._run = self._child(
                f"invoke_agent {self._agent}",
                None,
                {
                    "gen_ai.operation.name": "invoke_agent",
                    "gen_ai.agent.name": self._agent,
                    "gen_ai.conversation.id": event.session_id,
                    "toolweave.run_id": event.run_id,
                },
            )
        elif isinstance(event, events.ToolCallRequested):
            self._requested[event.call.id] = event.call
        elif isinstance(event, events.ToolExecutionStarted):
            self._tools[event.call.id] = self._tool_span(event.call)
        elif isinstance(event, events.ToolExecutionCompleted):
            span = self._tools.pop(event.call.id, None) or self._tool_span(event.call)
            self._requested.pop(event.call.id, None)
            outcome = "ok"
            if event.error is not None:
                outcome = "error"
                _fail(span, type(event.error).__name__, str(event.error))
            elif event.is_error:
                outcome = "error"
                _fail(span, "tool_error", "the tool returned an error result")
            span.set_attribute("toolweave.tool.outcome", outcome)
            span.set_attribute("toolweave.tool.duration_s", event.duration)
            span.end()
        elif isinstance(event, events.TurnCompleted):
            self._end_turn(event)
        elif isinstance(event, events.RunCompleted):
            if self._run is not None:
                usage = event.result.usage
                self._run.set_attribute("gen_ai.usage.input_tokens", usage.input_tokens)
                self._run.set_attribute("gen_ai.usage.output_tokens", usage.output_tokens)
                self._run.set_attribute("toolweave.turns", event.result.turns)
                self._run.end()
                self._run = None
        elif isinstance(event, events.RunFailed):
            if self._run is not None:
                self._run.record_exception(event.error)
            self.finish(type(event.error).__name__, str(event.error))

    def _tool_span(self, call: ToolCallPart) -> Span:
        arguments = REDACTED if self._redact else json.dumps(call.arguments, sort_keys=True)
        return self._child(
            f"execute_tool {call.name}",
            self._turn_span(),
            {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": call.name,
                "gen_ai.tool.call.id": call.id,
                "gen_ai.tool.type": "function",
                "gen_ai.tool.call.arguments": arguments,
            },
        )

    def _end_turn(self, event: events.TurnCompleted) -> None:
        turn = self._turn_span()
        # Calls refused by a gate were requested but never started: still one span each.
        for call in self._requested.values():
            span = self._tool_span(call)
            span.set_attribute("toolweave.tool.outcome", "refused")
            _fail(span, "refused", "a gate refused the call")
            span.end()
        self._requested.clear()
        turn.set_attribute("toolweave.turn.reason", event.reason)
        turn.set_attribute("gen_ai.usage.input_tokens", event.usage.input_tokens)
        turn.set_attribute("gen_ai.usage.output_tokens", event.usage.output_tokens)
        turn.end()
        self._turn = None


def _fail(span: Span, error_type: str, description: str) -> None:
    from opentelemetry.trace import Status, StatusCode

    span.set_attribute("error.type", error_type)
    span.set_status(Status(StatusCode.ERROR, description))


def _end_chat(span: Span, response: ModelResponse) -> None:
    span.set_attribute("gen_ai.response.finish_reasons", [response.finish_reason])
    span.set_attribute("gen_ai.usage.input_tokens", response.usage.input_tokens)
    span.set_attribute("gen_ai.usage.output_tokens", response.usage.output_tokens)
    span.end()


class _TracedModel:
    """The run's model with a `chat <model>` span around every call."""

    def __init__(self, inner: Model, trace: RunTrace) -> None:
        self._inner = inner
        self._trace = trace

    @property
    def model_name(self) -> str:
        return self._inner.model_name

    async def complete(self, request: ModelRequest) -> ModelResponse:
        span = self._trace.chat_span(self.model_name, request)
        try:
            response = await self._inner.complete(request)
        except BaseException as exc:
            _fail(span, type(exc).__name__, str(exc))
            span.end()
            raise
        _end_chat(span, response)
        return response

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        span = self._trace.chat_span(self.model_name, request)
        stream = self._inner.stream(request)
        try:
            async for event in stream:
                if isinstance(event, Finished):
                    _end_chat(span, event.response)
                yield event
        except BaseException as exc:
            if span.is_recording():
                _fail(span, type(exc).__name__, str(exc))
            raise
        finally:
            aclose = getattr(stream, "aclose", None)
            if aclose is not None:
                await aclose()
            if span.is_recording():
                span.end()
