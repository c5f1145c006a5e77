"""The event stream as a UI receives it: every event carries a distinct `kind` literal, so a
stream serialises to JSON as a tagged union a front end can switch on, and the agent's model
deltas are not the `toolweave.llm` classes of the same meaning."""

from __future__ import annotations

import dataclasses
import json
import typing
from typing import Any

import toolweave.agent as agent_pkg
import toolweave.llm as llm
from tests.agent.script import call, calls, collect
from toolweave.agent import Agent, AgentEvent
from toolweave.llm import Message, ScriptedModel
from toolweave.tools import ToolContext, tool


@tool
async def tell(ctx: ToolContext, city: str) -> str:
    """Tell the user which city is being looked up."""
    await ctx.send_text(f"正在查询 {city}")
    return f"{city}: 晴, 22°C"


def _json(event: Any) -> dict[str, Any]:
    """What a UI would send over a websocket: the event's fields as plain JSON."""
    data = {f.name: getattr(event, f.name) for f in dataclasses.fields(event)}
    return json.loads(json.dumps(data, ensure_ascii=False, default=_plain))


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    return repr(value)


async def test_a_stream_serialises_as_a_tagged_union() -> None:
    model = ScriptedModel(
        [calls(call("tell", "c1", city="杭州"), text="Checking"), Message.assistant("晴天")]
    )
    events = await collect(Agent(model, [tell]), "杭州天气?")
    wire = [_json(e) for e in events]
    assert [w["kind"] for w in wire] == [
        "run_started",
        "model_text_delta",
        "tool_call_requested",
        "tool_execution_started",
        "user_output_sent",
        "tool_execution_completed",
        "turn_completed",
        "model_text_delta",
        "turn_completed",
        "run_completed",
    ]
    assert wire[0]["prompt"] == "杭州天气?"
    assert wire[2]["call"]["arguments"] == {"city": "杭州"}
    assert wire[4]["output"]["text"] == "正在查询 杭州" and wire[4]["tool"] == "tell"
    assert wire[7]["text"] == "晴天"


def test_every_event_kind_is_a_distinct_literal() -> None:
    members = typing.get_args(AgentEvent)
    kinds = set()
    for cls in members:
        kind = {f.name: f for f in dataclasses.fields(cls)}["kind"]
        assert kind.default == _snake(cls.__name__) and not kind.init, cls
        literal = str(kind.type).replace("'", '"')  # a literal type checkers narrow on
        assert literal == f'Literal["{kind.default}"]', cls
        kinds.add(kind.default)
    assert len(kinds) == len(members) == 13


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name).lstrip("_")


def test_agent_deltas_are_not_the_llm_classes() -> None:
    exported = set(agent_pkg.__all__)
    assert "TextDelta" not in exported and "ThinkingDelta" not in exported
    assert agent_pkg.ModelTextDelta is not llm.TextDelta
    assert {"ModelTextDelta", "ModelThinkingDelta", "UserOutputSent"} <= exported
