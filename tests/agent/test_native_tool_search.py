"""Native tool search (`ToolSearch(native=True)`): the provider searches the deferred
definitions. Through the real Anthropic and OpenAI Responses adapters (httpx mock transport,
bodies checked against the official SDKs' request types): every tool but the pinned ones goes
deferred with the provider's search tool, the tool list is byte-identical across turns, the
provider's search call and result go back with the history, a found tool runs through the chain,
and a tool the rules deny is never sent."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.agent.test_tool_search import catalog, tools_json
from tests.llm.mock import Answers
from tests.llm.oracles import check_anthropic, check_openai_responses
from toolweave.agent import Agent, Session, ToolSearch
from toolweave.errors import ConfigError
from toolweave.governance import Governance, Rules
from toolweave.llm import AnthropicModel, OpenAIChatModel, OpenAIResponsesModel

RAW = "VG86IGJvYkBleGFtcGxlLmNvbQ=="
PINNED = {"read_notes", "read_result"}

ANTHROPIC_SEARCH: list[dict[str, Any]] = [
    {
        "type": "server_tool_use",
        "id": "srvtoolu_1",
        "name": "tool_search_tool_bm25",
        "input": {"query": "send an email"},
    },
    {
        "type": "tool_search_tool_result",
        "tool_use_id": "srvtoolu_1",
        "content": {
            "type": "tool_search_tool_search_result",
            "tool_references": [{"type": "tool_reference", "tool_name": "gmail_send_message"}],
        },
    },
    {"type": "tool_use", "id": "toolu_1", "name": "gmail_send_message", "input": {"raw": RAW}},
]

RESPONSES_SEARCH: list[dict[str, Any]] = [
    {
        "type": "tool_search_call",
        "id": "tsc_1",
        "call_id": None,
        "execution": "server",
        "status": "completed",
        "arguments": {"query": "send an email"},
    },
    {
        "type": "tool_search_output",
        "id": "tso_1",
        "call_id": None,
        "execution": "server",
        "status": "completed",
        "tools": [
            {
                "type": "function",
                "name": "gmail_send_message",
                "description": "Sends the specified message to the recipients.",
                "parameters": {"type": "object"},
                "strict": False,
                "defer_loading": True,
            }
        ],
    },
    {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_1",
        "name": "gmail_send_message",
        "arguments": json.dumps({"raw": RAW}),
        "status": "completed",
    },
]


def anthropic_reply(content: list[dict[str, Any]], stop: str = "end_turn") -> dict[str, Any]:
    usage = {"input_tokens": 900, "output_tokens": 40}
    return {"type": "message", "role": "assistant", "content": content, "stop_reason": stop} | {
        "id": "m",
        "usage": usage,
    }


def agent_with(model: Any, rules: Rules | None = None) -> Agent:
    settings = ToolSearch(native=True, always_load=["read_notes"])
    return Agent(model, catalog(), tool_search=settings, governance=Governance(rules=rules))


async def test_anthropic_defers_all_but_the_pinned_tools_and_round_trips_its_search() -> None:
    answers = Answers()
    answers.json(anthropic_reply(ANTHROPIC_SEARCH, "tool_use"))
    answers.json(anthropic_reply([{"type": "text", "text": "Sent."}]))
    model = AnthropicModel("claude-sonnet-4-5", api_key="k", client=answers.client())
    result = await agent_with(model).run("Email Bob that the build is green.", Session())
    assert result.output == "Sent." and [inv.name for inv in result.invocations] == [
        "gmail_send_message"
    ]
    first, second = answers.bodies()
    check_anthropic(first)  # (pydantic-core panics materialising the SDK's nested
    # tool_references iterator, so the second body's history is compared with what the API sent)
    tools = first["tools"]
    search = [t for t in tools if t.get("type") == "tool_search_tool_bm25_20251119"]
    assert search == [  # last, so it carries the tools' cache breakpoint
        {
            "type": "tool_search_tool_bm25_20251119",
            "name": "tool_search_tool_bm25",
            "cache_control": {"type": "ephemeral"},
        }
    ]
    functions = [t for t in tools if "input_schema" in t]
    assert len(functions) == 301  # the 300 tools and read_result, all of them sent
    assert {t["name"] for t in functions if not t.get("defer_loading")} == PINNED
    assert tools_json(first) == tools_json(second)  # the cached prefix never moves
    assistant = second["messages"][1]["content"]
    assert assistant == ANTHROPIC_SEARCH  # the provider's search goes back as it came
    assert second["messages"][2]["content"][0]["type"] == "tool_result"


async def test_openai_responses_defers_tools_and_sends_its_search_items_back() -> None:
    answers = Answers()
    answers.json(
        {
            "id": "r1",
            "object": "response",
            "status": "completed",
            "output": RESPONSES_SEARCH,
            "usage": {"input_tokens": 800, "output_tokens": 30},
        }
    )
    answers.json(
        {
            "id": "r2",
            "object": "response",
            "status": "completed",
            "output": [
                {
                    "type": "message",
                    "id": "msg_1",
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": "Sent.", "annotations": []}],
                }
            ],
            "usage": {"input_tokens": 850, "output_tokens": 3},
        }
    )
    model = OpenAIResponsesModel("gpt-5.4", api_key="k", client=answers.client())
    result = await agent_with(model).run("Email Bob that the build is green.", Session())
    assert result.output == "Sent." and result.invocations[0].ok
    first, second = answers.bodies()
    for body in (first, second):
        check_openai_responses(body)
    functions = [t for t in first["tools"] if t["type"] == "function"]
    assert {t["name"] for t in functions if not t.get("defer_loading")} == PINNED
    assert [t for t in first["tools"] if t["type"] == "tool_search"] == [{"type": "tool_search"}]
    assert first["tools"] == second["tools"]
    kinds = [item.get("type") for item in second["input"]]
    assert kinds[1:5] == [
        "tool_search_call",
        "tool_search_output",
        "function_call",
        "function_call_output",
    ]


async def test_a_tool_the_rules_deny_outright_is_never_sent_for_the_provider_to_find() -> None:
    answers = Answers()
    answers.json(anthropic_reply([{"type": "text", "text": "No."}]))
    model = AnthropicModel("claude-sonnet-4-5", api_key="k", client=answers.client())
    rules = Rules(deny=["gmail_send_message", "slack_*"])
    await agent_with(model, rules).run("Email Bob.", Session())
    (body,) = answers.bodies()
    names = {t.get("name") for t in body["tools"]}
    assert "gmail_send_message" not in names and not any(n.startswith("slack_") for n in names)
    assert "github_create_issue" in names


def test_native_search_needs_a_provider_that_has_it() -> None:
    with pytest.raises(ConfigError, match="native=False"):
        Agent(
            OpenAIChatModel("gpt-4o", api_key="k"),
            catalog(),
            tool_search=ToolSearch(native=True),
        )
