"""Structured output: native vs forced final tool, messy answers, one retry, partial objects."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field

from toolweave.agent import (
    Agent,
    Output,
    OutputDelta,
    OutputSpec,
    OutputValidationError,
    RunCompleted,
)
from toolweave.llm import Message, ScriptedModel, ToolCallPart
from toolweave.tools.demo import get_weather


class Advice(BaseModel):
    """What to wear."""

    city: str
    fahrenheit: float = Field(description="Temperature in °F")
    wear: list[str]


GOOD: dict[str, Any] = {"city": "Beijing", "fahrenheit": 53.6, "wear": ["jacket", "scarf"]}

MESSY = [
    '{"city": "Beijing", "fahrenheit": 53.6, "wear": ["jacket", "scarf"]}',
    'Sure! Here you go:\n```json\n{"city": "Beijing", "fahrenheit": 53.6, '
    '"wear": ["jacket", "scarf"]}\n```\nStay warm!',
    "{'city': 'Beijing', 'fahrenheit': 53.6, 'wear': ['jacket', 'scarf'],}",
    'The answer is {"city": "Beijing", "fahrenheit": 53.6, "wear": ["jacket", "scarf",],} ok',
    '```\n{"city": "Beijing",\n "fahrenheit": 53.6,\n "wear": ["jacket", "scarf"]\n}\n```',
]


@pytest.mark.parametrize("text", MESSY)
async def test_native_output_parses_messy_text(text: str) -> None:
    model = ScriptedModel([Message.assistant(text)])
    result = await Agent(model, output_type=Output(Advice, mode="native")).run("advise")
    assert result.output == Advice(**GOOD)
    request = model.requests[0]
    assert request.output_schema is not None
    assert request.output_schema["required"] == ["city", "fahrenheit", "wear"]
    assert request.output_name == "final_output" and request.tool_choice == "auto"


async def test_a_validation_error_goes_back_once_then_the_answer_is_accepted() -> None:
    model = ScriptedModel(
        [
            Message.assistant('{"city": "Beijing", "fahrenheit": "warm"}'),
            Message.assistant(str(GOOD)),
        ]
    )
    result = await Agent(model, output_type=Output(Advice, mode="native")).run("advise")
    assert result.output.wear == ["jacket", "scarf"]
    retry = model.requests[1].messages[-1]
    assert retry.role == "user"
    assert "fahrenheit" in retry.text and "wear: Field required" in retry.text


async def test_a_second_validation_error_fails_the_run() -> None:
    bad = Message.assistant('{"city": 1}')
    model = ScriptedModel([bad, bad])
    with pytest.raises(OutputValidationError, match="city") as info:
        await Agent(model, output_type=Output(Advice, mode="native")).run("advise")
    assert info.value.raw == '{"city": 1}' and len(model.requests) == 2
    none = ScriptedModel([Message.assistant("I cannot answer that.")])
    with pytest.raises(OutputValidationError, match="no JSON"):
        await Agent(none, output_type=Output(Advice, mode="native", retries=0)).run("x")


async def test_forced_final_tool_when_the_model_has_no_native_format() -> None:
    model = ScriptedModel(
        [
            Message.assistant("", [ToolCallPart("w", "get_weather", {"city": "Beijing"})]),
            Message.assistant("", [ToolCallPart("o", "final_output", {**GOOD, "wear": []})]),
        ]
    )
    agent = Agent(model, [get_weather], output_type=Advice)
    assert agent.output_mode == "tool"
    result = await agent.run("advise")
    assert result.output == Advice(city="Beijing", fahrenheit=53.6, wear=[])
    request = model.requests[0]
    assert [d.name for d in request.tools] == ["final_output", "get_weather", "read_result"]
    assert request.tool_choice == "required" and request.output_schema is None
    assert request.tools == model.requests[1].tools
    last = result.messages[-1]
    assert last.role == "tool" and last.tool_results[0].text == "Final answer accepted."


async def test_an_invalid_final_tool_call_is_answered_with_the_error_and_retried() -> None:
    model = ScriptedModel(
        [
            Message.assistant("", [ToolCallPart("o1", "final_output", {"city": "Beijing"})]),
            Message.assistant("", [ToolCallPart("o2", "final_output", GOOD)]),
        ]
    )
    result = await Agent(model, output_type=Output(Advice, mode="tool")).run("advise")
    assert result.output == Advice(**GOOD)
    (error,) = [p for m in model.requests[1].messages for p in m.tool_results]
    assert error.is_error and "fahrenheit: Field required" in error.text


async def test_auto_mode_uses_the_native_format_when_the_model_declares_one() -> None:
    class NativeModel(ScriptedModel):
        supports_native_output = True

    model = NativeModel([Message.assistant(str(GOOD))])
    agent = Agent(model, output_type=Advice)
    assert agent.output_mode == "native"
    assert (await agent.run("x")).output == Advice(**GOOD)


async def test_non_object_types_are_wrapped() -> None:
    model = ScriptedModel(
        [Message.assistant("", [ToolCallPart("o", "final_output", {"result": [3, 1]})])]
    )
    agent = Agent(model, output_type=list[int])
    assert (await agent.run("numbers")).output == [3, 1]
    assert model.requests[0].tools[0].parameters["required"] == ["result"]
    native = ScriptedModel([Message.assistant("Numbers: [1, 2, 3]")])
    assert (await Agent(native, output_type=Output(list[int], mode="native")).run("x")).output == [
        1,
        2,
        3,
    ]


async def test_streaming_yields_partial_objects() -> None:
    text = '```json\n{"city": "Beijing", "fahrenheit": 53.6, "wear": ["jacket", "scarf"]}\n```'
    agent = Agent(
        ScriptedModel([Message.assistant(text)]), output_type=Output(Advice, mode="native")
    )
    events: list[Any] = [e async for e in agent.run_stream("advise")]
    partials = [e.partial for e in events if isinstance(e, OutputDelta)]
    assert len(partials) >= 3
    assert partials[0] == {"city": "Beijing"}
    assert partials[-1] == GOOD
    assert any("wear" in p and p["wear"] == ["jacket"] for p in partials)
    assert isinstance(events[-1], RunCompleted) and events[-1].result.output == Advice(**GOOD)

    tool_agent = Agent(
        ScriptedModel([Message.assistant("", [ToolCallPart("o", "final_output", GOOD)])]),
        output_type=Advice,
    )
    tool_events = [e async for e in tool_agent.run_stream("advise")]
    assert [e.partial for e in tool_events if isinstance(e, OutputDelta)] == [GOOD]
    assert not any(type(e).__name__ == "ToolCallRequested" for e in tool_events)


def test_an_output_name_clashing_with_a_tool_is_refused() -> None:
    with pytest.raises(ValueError, match=r"Output\(name="):
        Agent(ScriptedModel([]), [get_weather], output_type=Output(Advice, name="get_weather"))


names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=8)
scalars = st.one_of(
    st.integers(-1000, 1000),
    st.booleans(),
    st.text(alphabet="abc xyz北京", max_size=10),
)
objects = st.dictionaries(names, st.one_of(scalars, st.lists(scalars, max_size=3)), max_size=5)


def sloppy(value: Any) -> str:
    """Python-literal style: single quotes, True/False kept as JSON, trailing commas."""
    if isinstance(value, dict):
        items = "".join(f"'{k}': {sloppy(v)}, " for k, v in value.items())
        return "{" + items + "}"
    if isinstance(value, list):
        return "[" + "".join(f"{sloppy(v)}, " for v in value) + "]"
    if isinstance(value, str):
        return "'" + value + "'"
    return json.dumps(value)


@settings(max_examples=150, deadline=None)
@given(objects, st.sampled_from(["{}", "Here it is: {} Thanks!", "```json\n{}\n```", "{}\n"]))
def test_messy_renderings_of_any_object_parse_back(value: dict[str, Any], frame: str) -> None:
    spec = OutputSpec(dict[str, Any])
    assert spec.parse_text(frame.format(sloppy(value))) == value
    assert spec.parse_text(frame.format(json.dumps(value, ensure_ascii=False))) == value


async def test_an_invalid_answer_on_the_final_answer_call_fails_with_the_validation_error() -> None:
    model = ScriptedModel(
        [
            Message.assistant("", [ToolCallPart("w", "get_weather", {"city": "Beijing"})]),
            Message.assistant('{"city": "Beijing"}'),
        ]
    )
    agent = Agent(
        model,
        [get_weather],
        max_turns=1,
        output_type=Output(Advice, mode="native", on_max_turns="final_answer"),
    )
    with pytest.raises(OutputValidationError, match="fahrenheit"):
        await agent.run("advise")
    assert len(model.requests) == 2  # no retry past the last allowed call
