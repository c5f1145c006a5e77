"""The seed's canonical scenario through the real OpenAIChatModel and a loopback server:
query Beijing's weather, convert Celsius to Fahrenheit, advise what to wear."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from tests.agent.fake_openai import FakeOpenAI, Reply
from toolweave.agent import (
    Agent,
    ModelTextDelta,
    OutputDelta,
    RunCompleted,
    ToolCallRequested,
    ToolExecutionCompleted,
)
from toolweave.llm import OpenAIChatModel, Usage
from toolweave.tools.demo import celsius_to_fahrenheit, get_weather

PROMPT = "What's the weather in Beijing in Fahrenheit, and what should I wear?"
ANSWER = "Beijing is sunny at 12°C (53.6°F): wear a light jacket and long trousers."


def scenario() -> list[Reply]:
    return [
        Reply("Let me check the weather.", [("call_w", "get_weather", {"city": "Beijing"})]),
        Reply(None, [("call_f", "celsius_to_fahrenheit", {"celsius": 12.0})]),
        Reply(ANSWER, prompt_tokens=30, completion_tokens=12),
    ]


def model_for(server: FakeOpenAI, **options: Any) -> OpenAIChatModel:
    return OpenAIChatModel("fake-gpt", base_url=server.base_url, api_key="sk-test", **options)


def check_wire(requests: list[dict[str, Any]]) -> None:
    assert len(requests) == 3
    tool_lists = [r["tools"] for r in requests]
    assert all(t == tool_lists[0] for t in tool_lists)
    assert [t["function"]["name"] for t in tool_lists[0]] == [
        "celsius_to_fahrenheit",
        "get_weather",
        "read_result",  # pages through a result cut to fit the context
    ]
    first, second, third = (r["messages"] for r in requests)
    assert first[0] == {"role": "system", "content": "You are a concise travel assistant."}
    assert first[-1]["role"] == "user" and "Beijing" in first[-1]["content"]
    tool_reply = second[-1]
    assert tool_reply["role"] == "tool" and tool_reply["tool_call_id"] == "call_w"
    assert '"celsius": 12.0' in tool_reply["content"] and "<tool_output" in tool_reply["content"]
    assert third[-1]["tool_call_id"] == "call_f" and "53.6" in third[-1]["content"]
    assert third[-2]["tool_calls"][0]["function"]["name"] == "celsius_to_fahrenheit"


async def test_weather_scenario_end_to_end() -> None:
    with FakeOpenAI(scenario()) as server:
        async with model_for(server) as model:
            agent = Agent(
                model,
                [get_weather, celsius_to_fahrenheit],
                instructions="You are a concise travel assistant.",
            )
            result = await agent.run(PROMPT)
    assert result.output == ANSWER
    assert [i.name for i in result.invocations] == ["get_weather", "celsius_to_fahrenheit"]
    assert result.invocations[1].result.structured == 53.6
    assert result.usage == Usage(50, 22)
    assert all(not r.get("stream") for r in server.requests)
    check_wire(server.requests)


async def test_weather_scenario_streamed_end_to_end() -> None:
    with FakeOpenAI(scenario()) as server:
        async with model_for(server) as model:
            agent = Agent(
                model,
                [get_weather, celsius_to_fahrenheit],
                instructions="You are a concise travel assistant.",
            )
            events = [e async for e in agent.run_stream(PROMPT)]
    assert all(r.get("stream") for r in server.requests)
    check_wire(server.requests)
    text = "".join(e.text for e in events if isinstance(e, ModelTextDelta))
    assert text == "Let me check the weather." + ANSWER
    assert [e.call.name for e in events if isinstance(e, ToolCallRequested)] == [
        "get_weather",
        "celsius_to_fahrenheit",
    ]
    completed = [e for e in events if isinstance(e, ToolExecutionCompleted)]
    assert [e.call.id for e in completed] == ["call_w", "call_f"]
    final = events[-1]
    assert isinstance(final, RunCompleted) and final.result.output == ANSWER
    assert final.result.usage == Usage(50, 22)


async def test_parallel_calls_and_structured_advice_over_the_wire() -> None:
    class Advice(BaseModel):
        fahrenheit: float
        wear: str

    replies = [
        Reply(
            None,
            [
                ("call_a", "get_weather", {"city": "Beijing"}),
                ("call_b", "celsius_to_fahrenheit", {"celsius": 12.0}),
            ],
        ),
        Reply('```json\n{"fahrenheit": 53.6, "wear": "a light jacket",}\n```'),
    ]
    with FakeOpenAI(replies) as server:
        async with model_for(server) as model:
            agent = Agent(model, [get_weather, celsius_to_fahrenheit], output_type=Advice)
            assert agent.output_mode == "native"
            events = [e async for e in agent.run_stream(PROMPT)]
    final = events[-1]
    assert isinstance(final, RunCompleted)
    assert final.result.output == Advice(fahrenheit=53.6, wear="a light jacket")
    assert [e.partial for e in events if isinstance(e, OutputDelta)][-1] == {
        "fahrenheit": 53.6,
        "wear": "a light jacket",
    }
    second = server.requests[1]
    assert second["response_format"]["type"] == "json_schema"
    assert [m.get("tool_call_id") for m in second["messages"][-2:]] == ["call_a", "call_b"]


async def test_the_agent_accepts_a_model_string() -> None:
    with FakeOpenAI(scenario()) as server:
        agent = Agent(
            f"openai-compat:{server.base_url}#fake-gpt",
            [get_weather, celsius_to_fahrenheit],
            instructions="You are a concise travel assistant.",
        )
        assert isinstance(agent.model, OpenAIChatModel)
        async with agent.model:
            assert (await agent.run(PROMPT)).output == ANSWER
    check_wire(server.requests)


async def test_a_server_error_fails_the_run() -> None:
    from toolweave.llm import ModelError

    with FakeOpenAI([]) as server:
        async with model_for(server, max_retries=0) as model:
            with pytest.raises(ModelError, match="script exhausted"):
                await Agent(model).run("hi")
