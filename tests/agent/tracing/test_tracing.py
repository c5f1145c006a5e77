"""The trace of a two-turn run: the real OpenTelemetry SDK's in-memory exporter sees the run, its
turns, the model calls (GenAI conventions) and the tool calls; the JSONL exporter writes the
same spans to a file that `read_spans` and `toolweave trace show` read back as a tree."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode
from typer.testing import CliRunner

from toolweave.agent import Agent
from toolweave.agent.tracing import Tracing, read_spans
from toolweave.cli import app
from toolweave.llm import Message, ScriptedModel, ToolCallPart, Usage
from toolweave.tools import ExecutionFailed, tool


@tool
def weather(city: str, token: str = "") -> str:
    """Current weather of a city (`token`: the weather service's key, a secret)."""
    return f"{city}: 晴, 22°C"


@tool
def broken(city: str) -> str:
    """Always fails."""
    raise ExecutionFailed(f"no station in {city}")


def _script() -> ScriptedModel:
    first = Message.assistant("", [ToolCallPart("c1", "weather", {"city": "杭州", "token": "s3"})])
    return ScriptedModel(
        [first, Message.assistant("杭州今天晴, 22°C.")],
        usage=Usage(input_tokens=12, output_tokens=5),
        model_name="gpt-test",
    )


def _memory() -> tuple[Tracing, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return Tracing(provider), exporter


def _by_name(spans: Any) -> dict[str, ReadableSpan]:
    return {s.name: s for s in spans}


@pytest.mark.parametrize("streaming", [False, True])
async def test_two_turn_run_has_run_turn_model_and_tool_spans(streaming: bool) -> None:
    tracing, exporter = _memory()
    agent = Agent(_script(), [weather], name="forecaster", tracing=tracing)
    if streaming:
        events = [e async for e in agent.run_stream("杭州天气?")]
        result = events[-1].result
    else:
        result = await agent.run("杭州天气?")
    assert result.output == "杭州今天晴, 22°C."
    spans = exporter.get_finished_spans()
    names = [s.name for s in spans]
    assert sorted(names) == sorted(
        [
            "invoke_agent forecaster",
            "turn 1",
            "chat gpt-test",
            "execute_tool weather",
            "turn 2",
            "chat gpt-test",
        ]
    )
    by = _by_name(spans)
    run, turn1, turn2 = by["invoke_agent forecaster"], by["turn 1"], by["turn 2"]
    tool_span = by["execute_tool weather"]
    chats = [s for s in spans if s.name == "chat gpt-test"]
    assert run.parent is None
    assert {turn1.parent.span_id, turn2.parent.span_id} == {run.context.span_id}  # type: ignore[union-attr]
    assert tool_span.parent.span_id == turn1.context.span_id  # type: ignore[union-attr]
    assert [c.parent.span_id for c in chats] == [  # type: ignore[union-attr]
        turn1.context.span_id,
        turn2.context.span_id,
    ]
    assert len({s.context.trace_id for s in spans}) == 1
    chat = chats[0].attributes or {}
    assert chat["gen_ai.operation.name"] == "chat"
    assert chat["gen_ai.request.model"] == "gpt-test"
    assert chat["gen_ai.usage.input_tokens"] == 12 and chat["gen_ai.usage.output_tokens"] == 5
    assert chats[1].attributes["gen_ai.response.finish_reasons"] == ("stop",)  # type: ignore[index]
    tool_attrs = tool_span.attributes or {}
    assert tool_attrs["gen_ai.tool.name"] == "weather"
    assert tool_attrs["gen_ai.tool.call.id"] == "c1"
    assert tool_attrs["toolweave.tool.outcome"] == "ok"
    assert tool_attrs["gen_ai.tool.call.arguments"] == "[redacted]"  # secrets stay out
    assert tool_attrs["toolweave.tool.duration_s"] >= 0
    assert turn1.attributes["toolweave.turn.reason"] == "tool_calls"  # type: ignore[index]
    assert turn2.attributes["toolweave.turn.reason"] == "stop"  # type: ignore[index]
    assert run.attributes["gen_ai.usage.input_tokens"] == 24  # type: ignore[index]
    assert run.attributes["gen_ai.agent.name"] == "forecaster"  # type: ignore[index]
    assert run.status.status_code is StatusCode.UNSET
    assert run.start_time <= turn1.start_time <= tool_span.start_time  # type: ignore[operator]
    assert tool_span.end_time <= turn1.end_time <= turn2.start_time <= run.end_time  # type: ignore[operator]


async def test_arguments_are_recorded_only_when_asked() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    agent = Agent(_script(), [weather], tracing=Tracing(provider, redact_arguments=False))
    await agent.run("杭州天气?")
    tool_span = _by_name(exporter.get_finished_spans())["execute_tool weather"]
    recorded = json.loads(str((tool_span.attributes or {})["gen_ai.tool.call.arguments"]))
    assert recorded == {"city": "杭州", "token": "s3"}


async def test_a_failing_tool_and_a_failing_model_mark_their_spans() -> None:
    tracing, exporter = _memory()
    first = Message.assistant("", [ToolCallPart("c1", "broken", {"city": "Oslo"})])
    model = ScriptedModel([first, RuntimeError("provider down")])
    with pytest.raises(RuntimeError, match="provider down"):
        await Agent(model, [broken], tracing=tracing).run("weather?")
    by = _by_name(exporter.get_finished_spans())
    assert by["execute_tool broken"].attributes["toolweave.tool.outcome"] == "error"  # type: ignore[index]
    assert by["execute_tool broken"].status.status_code is StatusCode.ERROR
    assert by["turn 2"].status.status_code is StatusCode.ERROR
    run = by["invoke_agent agent"]
    assert run.status.status_code is StatusCode.ERROR
    assert run.attributes["error.type"] == "RuntimeError"  # type: ignore[index]
    assert [e.name for e in run.events] == ["exception"]


async def test_jsonl_exporter_round_trips_and_trace_show_renders_the_tree(tmp_path: Path) -> None:
    path = tmp_path / "traces" / "run.jsonl"
    agent = Agent(_script(), [weather], name="forecaster", tracing=Tracing.to_jsonl(path))
    await agent.run("杭州天气?")
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 6 and all(json.loads(line)["trace_id"] for line in lines)
    (root,) = read_spans(path)
    assert root.name == "invoke_agent forecaster"
    assert [c.name for c in root.children] == ["turn 1", "turn 2"]
    assert [c.name for c in root.children[0].children] == ["chat gpt-test", "execute_tool weather"]
    assert root.children[0].children[0].attributes["gen_ai.usage.output_tokens"] == 5

    shown = CliRunner().invoke(app, ["trace", "show", str(path)], env={"COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    out = shown.output
    for text in ("invoke_agent forecaster", "turn 1", "chat gpt-test", "execute_tool weather"):
        assert text in out
    assert "in 12 / out 5" in out and "ok" in out
    assert out.index("turn 1") < out.index("execute_tool weather") < out.index("turn 2")


def test_trace_show_names_the_bad_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"name": "x"}\n', encoding="utf-8")
    shown = CliRunner().invoke(app, ["trace", "show", str(path)])
    assert shown.exit_code == 2
    assert "bad.jsonl:1" in shown.output


def test_toolweave_run_trace_writes_the_file_trace_show_reads(tmp_path: Path) -> None:
    from tests.agent.fake_openai import FakeOpenAI, Reply

    path = tmp_path / "cli.jsonl"
    replies = [
        Reply(None, [("call_1", "get_weather", {"city": "北京"})], prompt_tokens=30),
        Reply("北京晴, 12°C."),
    ]
    with FakeOpenAI(replies) as server:
        model = f"openai-compat:{server.base_url}#fake"
        ran = CliRunner().invoke(app, ["run", "北京天气?", "-m", model, "--trace", str(path)])
    assert ran.exit_code == 0, ran.output
    (root,) = read_spans(path)
    names = [s.name for s in root.walk()]
    assert names == [
        "invoke_agent agent",
        "turn 1",
        "chat fake",
        "execute_tool get_weather",
        "turn 2",
        "chat fake",
    ]
    assert root.children[0].children[0].attributes["gen_ai.usage.input_tokens"] == 30


async def test_a_cancelled_run_closes_its_spans() -> None:
    import asyncio

    started = asyncio.Event()

    @tool
    async def slow(city: str) -> str:
        """Waits until cancelled."""
        started.set()
        await asyncio.Event().wait()
        return city

    tracing, exporter = _memory()
    model = ScriptedModel([Message.assistant("", [ToolCallPart("c1", "slow", {"city": "x"})])])
    run = asyncio.ensure_future(Agent(model, [slow], tracing=tracing).run("go"))
    await started.wait()
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    by = _by_name(exporter.get_finished_spans())
    assert set(by) == {"invoke_agent agent", "turn 1", "chat scripted", "execute_tool slow"}
    for name in ("invoke_agent agent", "turn 1", "execute_tool slow"):
        assert by[name].status.status_code is StatusCode.ERROR
        assert by[name].attributes["error.type"] == "cancelled"  # type: ignore[index]
    assert by["chat scripted"].status.status_code is StatusCode.UNSET


def test_trace_show_marks_failures_and_shows_every_run(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    tracing = Tracing.to_jsonl(path)
    Agent(_script(), [weather], name="ok", tracing=tracing).run_sync("杭州天气?")
    failing = ScriptedModel([RuntimeError("模型服务不可用")])
    with pytest.raises(RuntimeError):
        Agent(failing, name="broken", tracing=tracing).run_sync("hi")
    roots = read_spans(path)
    assert [r.name for r in roots] == ["invoke_agent ok", "invoke_agent broken"]
    shown = CliRunner().invoke(app, ["trace", "show", str(path)], env={"COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    assert "invoke_agent broken" in shown.output
    assert "error: 模型服务不可用" in shown.output
