"""What tracing costs per agent turn: the same ten-turn run untraced, traced into the
OpenTelemetry SDK's in-memory exporter, and traced into a JSONL file (`Tracing.to_jsonl`).

Each turn calls one trivial async tool; the model returns prebuilt responses. The report is
microseconds per turn, the traced/untraced ratio, and the floor: the same number of bare
OpenTelemetry spans per turn (3.1: turn, chat, execute_tool and a tenth of the run span)
started and ended directly on the same provider, measured in the same run (medians of rounds).
What tracing adds beyond the floor is toolweave's own share (events, attributes, the wrapper).

Run: .venv/bin/python benchmarks/tracing_overhead.py
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

TURNS = 10
RUNS = 100
ROUNDS = 5


def agent(tracing: Any) -> Any:
    from toolweave.agent import Agent
    from toolweave.llm import Message, ModelResponse, ScriptedModel, ToolCallPart, Usage
    from toolweave.tools import tool

    @tool
    async def noop(x: int) -> int:
        """Return x."""
        return x

    steps = [
        ModelResponse(Message.assistant("", [ToolCallPart(f"c{i}", "noop", {"x": i})]))
        for i in range(TURNS - 1)
    ] + [ModelResponse(Message.assistant("done"), usage=Usage(1, 1))]

    def build() -> Any:
        return Agent(ScriptedModel(list(steps)), [noop], max_turns=TURNS, tracing=tracing)

    return build


async def per_turn_us(build: Any) -> float:
    rounds = []
    for _ in range(ROUNDS):
        agents = [build() for _ in range(RUNS)]
        start = time.perf_counter()
        for a in agents:
            await a.run("go")
        rounds.append((time.perf_counter() - start) / (RUNS * TURNS) * 1e6)
    return statistics.median(rounds)


def floor_us(provider: Any) -> float:
    """Bare SDK spans, as many per turn as a traced turn records, with similar attributes."""
    from opentelemetry import trace

    tracer = trace.get_tracer("floor", tracer_provider=provider)
    n = RUNS * TURNS
    rounds = []
    for _ in range(ROUNDS):
        start = time.perf_counter()
        for i in range(n):
            turn = tracer.start_span("turn", attributes={"toolweave.turn": i})
            parent = trace.set_span_in_context(turn)
            for name in ("chat bench", "execute_tool noop"):
                tracer.start_span(name, context=parent, attributes={"a": 1, "b": "x"}).end()
            turn.end()
            if i % TURNS == 0:
                tracer.start_span("invoke_agent").end()
        rounds.append((time.perf_counter() - start) / n * 1e6)
    return statistics.median(rounds)


async def main() -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from toolweave.agent.tracing import Tracing

    memory = TracerProvider()
    memory.add_span_processor(SimpleSpanProcessor(InMemorySpanExporter()))
    with tempfile.TemporaryDirectory() as folder:
        cases = {
            "untraced": agent(None),
            "traced, in-memory exporter": agent(Tracing(memory)),
            "traced, JSONL file": agent(Tracing.to_jsonl(Path(folder) / "bench.jsonl")),
        }
        await per_turn_us(cases["untraced"])  # warm up imports and caches
        results = {name: await per_turn_us(build) for name, build in cases.items()}
    floor_provider = TracerProvider()
    floor_provider.add_span_processor(SimpleSpanProcessor(InMemorySpanExporter()))
    floor = floor_us(floor_provider)
    base = results["untraced"]
    print(f"{'case':<30} {'us/turn':>9} {'added':>9} {'ratio':>7}")
    for name, value in results.items():
        print(f"{name:<30} {value:>9.1f} {value - base:>9.1f} {value / base:>6.2f}x")
    added = results["traced, in-memory exporter"] - base
    print(f"floor: the same spans straight on the SDK (in-memory): {floor:.1f} us/turn")
    print(f"in-memory tracing adds {added / floor:.2f}x the floor")


if __name__ == "__main__":
    asyncio.run(main())
