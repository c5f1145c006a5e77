"""A tool result's content is text or content parts: a dict is sent as its JSON, anything else is
refused when the part is built (it used to reach every provider as an empty string)."""

from __future__ import annotations

import json

import pytest

from toolweave.errors import ConfigError
from toolweave.llm import Message, ToolCallPart
from toolweave.llm.messages import ToolResultPart
from toolweave.llm.openai_chat import chat_messages


def test_a_dict_result_is_sent_as_json() -> None:
    result = Message.tool_result("c1", "lookup", {"城市": "北京", "temp": 30})
    assert result.tool_results[0].content == '{"temp": 30, "城市": "北京"}'
    history = [
        Message.user("weather?"),
        Message.assistant("", [ToolCallPart("c1", "lookup", {})]),
        result,
    ]
    sent = chat_messages(history)[-1]
    assert sent["role"] == "tool"
    assert json.loads(sent["content"]) == {"城市": "北京", "temp": 30}


def test_a_list_of_values_is_json_and_parts_stay_parts() -> None:
    assert Message.tool_result("c1", "t", [1, "a"]).tool_results[0].content == '[1, "a"]'
    assert Message.tool_result("c1", "t", []).tool_results[0].content == []


@pytest.mark.parametrize("content", [{"a": 1}, 42, None, [{"a": 1}]])
def test_a_part_built_with_anything_else_is_a_config_error(content: object) -> None:
    with pytest.raises(ConfigError, match=r"ToolResultPart.content for call 'c1'.*json"):
        ToolResultPart("c1", "t", content)  # type: ignore[arg-type]


def test_values_that_are_not_json_are_refused_with_the_call_named() -> None:
    with pytest.raises(ConfigError, match=r"call 'c9' is not JSON"):
        Message.tool_result("c9", "t", {"when": object()})
