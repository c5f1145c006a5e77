"""Framework time per agent turn, toolweave vs openai-agents, with the model and tools excluded.

Both loops run the same script: nine turns that each call one trivial async tool, then a text
answer. The models return prebuilt responses and the time spent inside them and inside the tool
function is measured and subtracted, so what remains is each framework's own work per turn
(building requests, dispatching and validating calls, shaping results, bookkeeping).
Goal: toolweave at most one third of openai-agents.

Run: .venv/bin/python benchmarks/loop_overhead.py
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import AsyncIterator
from typing import Any

TURNS = 10  # model calls per run: 9 with a tool call, then the answer
RUNS = 150
ROUNDS = 5


class Clock:
    """Time spent outside the framework (in the model and in the tool body)."""

    def __init__(self) -> None:
        self.excluded = 0.0


# -- toolweave ---------------------------------------------------------------------------


def toolweave_agent(clock: Clock) -> Any:
    from toolweave.agent import Agent
    from toolweave.llm import Message, ModelRequest, ModelResponse, ToolCallPart, Usage
    from toolweave.tools import tool

    responses = [
        ModelResponse(Message.assistant("", [ToolCallPart(f"call_{i}", "noop", {"x": i})]))
        for i in range(TURNS - 1)
    ] + [ModelResponse(Message.assistant("done"), usage=Usage(1, 1))]

    class Scripted:
        model_name = "bench"

        def __init__(self) -> None:
            self.index = 0

        async def complete(self, request: ModelRequest) -> ModelResponse:
            start = time.perf_counter()
            response = responses[self.index % TURNS]
            self.index += 1
            clock.excluded += time.perf_counter() - start
            return response

        async def stream(self, request: ModelRequest) -> AsyncIterator[Any]:
            raise NotImplementedError
            yield

    @tool
    async def noop(x: int) -> int:
        """Return x."""
        start = time.perf_counter()
        clock.excluded += time.perf_counter() - start
        return x

    return Agent(Scripted(), [noop], max_turns=TURNS)


async def toolweave_run(agent: Any) -> None:
    result = await agent.run("go")
    assert result.output == "done" and result.turns == TURNS


# -- openai-agents -----------------------------------------------------------------------


def openai_agents_agent(clock: Clock) -> Any:
    from agents import Agent, function_tool, set_tracing_disabled
    from agents.items import ModelResponse
    from agents.models.interface import Model
    from agents.usage import Usage
    from openai.types.responses import (
        ResponseFunctionToolCall,
        ResponseOutputMessage,
        ResponseOutputText,
    )

    set_tracing_disabled(True)
    responses = [
        ModelResponse(
            output=[
                ResponseFunctionToolCall(
                    arguments=f'{{"x": {i}}}',
                    call_id=f"call_{i}",
                    name="noop",
                    type="function_call",
                    id=f"fc_{i}",
                    status="completed",
                )
            ],
            usage=Usage(),
            response_id=None,
        )
        for i in range(TURNS - 1)
    ] + [
        ModelResponse(
            output=[
                ResponseOutputMessage(
                    id="msg",
                    content=[ResponseOutputText(annotations=[], text="done", type="output_text")],
                    role="assistant",
                    status="completed",
                    type="message",
                )
            ],
            usage=Usage(),
            response_id=None,
        )
    ]

    class Scripted(Model):
        def __init__(self) -> None:
            self.index = 0

        async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
            start = time.perf_counter()
            response = responses[self.index % TURNS]
            self.index += 1
            clock.excluded += time.perf_counter() - start
            return response

        def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
            raise NotImplementedError

    @function_tool
    async def noop(x: int) -> int:
        """Return x."""
        start = time.perf_counter()
        clock.excluded += time.perf_counter() - start
        return x

    return Agent(name="bench", model=Scripted(), tools=[noop])


async def openai_agents_run(agent: Any) -> None:
    from agents import Runner

    result = await Runner.run(agent, "go", max_turns=TURNS)
    assert result.final_output == "done"


# -- measurement -------------------------------------------------------------------------


async def per_turn_us(build: Any, run: Any) -> float:
    """Median over rounds of (wall time - excluded time) / model calls, in microseconds."""
    clock = Clock()
    agent = build(clock)
    for _ in range(20):  # warm up imports, caches and validators
        await run(agent)
    samples = []
    for _ in range(ROUNDS):
        clock.excluded = 0.0
        start = time.perf_counter()
        for _ in range(RUNS):
            await run(agent)
        elapsed = time.perf_counter() - start - clock.excluded
        samples.append(elapsed / (RUNS * TURNS) * 1e6)
    return statistics.median(samples)


async def main() -> None:
    ours = await per_turn_us(toolweave_agent, toolweave_run)
    theirs = await per_turn_us(openai_agents_agent, openai_agents_run)
    ratio = ours / theirs
    print(f"framework time per turn ({TURNS} turns x {RUNS} runs, median of {ROUNDS} rounds)")
    print(f"  toolweave      {ours:8.1f} us")
    print(f"  openai-agents  {theirs:8.1f} us")
    print(
        f"  ratio          {ratio:8.3f}  (goal <= 0.333: {'met' if ratio <= 1 / 3 else 'MISSED'})"
    )


if __name__ == "__main__":
    asyncio.run(main())
