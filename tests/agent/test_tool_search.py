"""Tool-search mode in real agent runs over 300 tools: the model sees pinned tools and
`tool_search`; a search loads tools at the END of the definitions, so the serialized provider
request (through the real Anthropic and OpenAI adapters' `build_body`) keeps its prefix byte for
byte; loaded and used tools stay for the session; a tool the rules deny is never found."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolweave.agent import Agent, Session, SQLiteSessionStore, ToolSearch
from toolweave.errors import ConfigError
from toolweave.governance import Governance, Rules
from toolweave.llm import Message, ModelRequest, ScriptedModel, ToolCallPart
from toolweave.llm.anthropic import AnthropicModel
from toolweave.llm.openai_chat import OpenAIChatModel
from toolweave.storage.retrieval.tool_index import HybridToolIndex
from toolweave.tools import FunctionTool, InvalidArguments, Tool, ToolRegistry
from toolweave.tools.search_mode import TOOL_SEARCH

SERVICES = ("github", "slack", "jira", "drive", "stripe", "notion", "trello", "zoom", "hubspot")
VERBS = ("create", "list", "get", "update", "delete", "archive")
OBJECTS = ("issue", "channel", "ticket", "file", "invoice", "page")


def gmail_send_message(raw: str) -> str:
    """Sends the specified message to the recipients in the To, Cc, and Bcc headers.

    Args:
        raw: The entire email message in an RFC 2822 formatted and base64url encoded string.
    """
    return f"sent {len(raw)} bytes"


def read_notes(topic: str) -> str:
    """Read the user's notes on a topic.

    Args:
        topic: What the notes are about.
    """
    return f"no notes on {topic}"


def _api_tool(service: str, verb: str, obj: str) -> Tool:
    def call(identifier: str) -> str:
        return f"{service}: {verb} {obj} {identifier}"

    description = (
        f"{verb.capitalize()} a {obj} in {service.capitalize()} through its REST API; returns "
        f"the {obj} as JSON."
    )
    return FunctionTool(call, name=f"{service}_{verb}_{obj}", description=description)


def catalog() -> ToolRegistry:
    """300 tools: 324 API methods of nine services, trimmed, beside an email sender and a notes
    reader."""
    tools = [_api_tool(s, v, o) for s in SERVICES for v in VERBS for o in OBJECTS][:298]
    registry = ToolRegistry()
    registry.register_all([*tools, FunctionTool(gmail_send_message), FunctionTool(read_notes)])
    assert len(registry.names()) == 300
    return registry


def call(call_id: str, name: str, **args: object) -> Message:
    return Message.assistant(tool_calls=[ToolCallPart(call_id, name, dict(args))])


def names(request: ModelRequest) -> list[str]:
    return [d.name for d in request.tools]


def tools_json(body: dict[str, Any]) -> str:
    """The definitions as sent, without Anthropic's `cache_control` marker: it is not part of
    the cached content, and it moves to the last definition (the breakpoint) by design."""
    tools = [{k: v for k, v in d.items() if k != "cache_control"} for d in body["tools"]]
    return json.dumps(tools, ensure_ascii=False, separators=(",", ":"))


def bodies(request: ModelRequest) -> list[dict[str, Any]]:
    """The request as the real adapters would send it to Anthropic and to OpenAI."""
    return [
        AnthropicModel("claude-sonnet-4-5", api_key="k").build_body(request, stream=False),
        OpenAIChatModel("gpt-4o", api_key="k").build_body(request, stream=False),
    ]


async def test_a_load_appends_and_the_serialized_prefix_stays_byte_identical() -> None:
    model = ScriptedModel(
        [
            call("s", TOOL_SEARCH, query="send an email, then create a jira ticket"),
            call("g", "gmail_send_message", raw="VG86IGJvYkBleGFtcGxlLmNvbQ=="),
            Message.assistant("Sent."),
            Message.assistant("Still here."),
            Message.assistant("A fresh session."),
        ]
    )
    registry = catalog()
    agent = Agent(model, registry, tool_search=ToolSearch(always_load=["read_notes"], k=3))
    session = Session()
    result = await agent.run("Email Bob that the build is green.", session=session)
    await agent.run("Anything else?", session=session)
    await agent.run("Hello", session=Session())

    before, after, answered, next_run, fresh = model.requests
    assert names(before) == ["read_notes", TOOL_SEARCH]
    loaded = names(after)[2:]
    assert names(after)[:2] == names(before) and "gmail_send_message" in loaded
    assert len(loaded) == 3
    assert names(answered) == names(after) == names(next_run)  # loaded for the whole session
    assert names(fresh) == names(before)  # another session starts from the pinned tools
    found, sent = result.invocations
    assert found.result.structured == {"loaded": loaded} and sent.ok

    for body_before, body_after in zip(bodies(before), bodies(after), strict=True):
        head, whole = tools_json(body_before), tools_json(body_after)
        assert whole.startswith(head[:-1] + ",")  # the same bytes, then the loaded tools
        assert len(whole) > len(head)
    anthropic = bodies(after)[0]["tools"]
    assert [("cache_control" in d) for d in anthropic] == [False] * 4 + [True]

    eager = len(json.dumps([d.parameters for d in registry.definitions()])) + sum(
        len(d.name) + len(d.description) for d in registry.definitions()
    )
    searched = sum(
        len(d.name) + len(d.description) + len(json.dumps(d.parameters)) for d in after.tools
    )
    assert searched < eager / 10


async def test_below_the_threshold_every_tool_is_sent_and_no_search_tool() -> None:
    model = ScriptedModel([Message.assistant("ok")])
    small = ToolRegistry()
    small.register_all([FunctionTool(gmail_send_message), FunctionTool(read_notes)])
    await Agent(model, small, tool_search=True).run("hi")
    assert names(model.requests[0]) == ["gmail_send_message", "read_notes", "read_result"]


async def test_a_tool_the_rules_deny_outright_is_never_found() -> None:
    query = "send an email message to a slack channel"

    async def found(governance: Governance) -> tuple[list[str], ModelRequest]:
        model = ScriptedModel(
            [call("s", TOOL_SEARCH, query=query, k=10), Message.assistant("done")]
        )
        agent = Agent(model, catalog(), governance=governance, tool_search=True)
        result = await agent.run("Tell Bob and the team.")
        return result.invocations[0].result.structured["loaded"], model.requests[1]

    everything, _ = await found(Governance())
    assert "gmail_send_message" in everything and "slack_create_channel" in everything
    # A deny rule without a pattern refuses every call: such tools are never found; a rule
    # with a pattern decides per call, so its tool stays findable.
    rules = Rules(deny=["gmail_send_message", "slack_*", "drive_list_channel(x*)"])
    loaded, after = await found(Governance(rules=rules))
    assert loaded and "gmail_send_message" not in loaded
    assert not any(name.startswith("slack_") for name in loaded)
    assert "drive_list_channel" in loaded
    assert not any(n.startswith("slack_") or n == "gmail_send_message" for n in names(after))


async def test_a_resumed_session_starts_with_the_tools_its_history_used(tmp_path: Path) -> None:
    model = ScriptedModel(
        [
            call("s", TOOL_SEARCH, query="create a jira ticket"),
            call("j", "jira_create_ticket", identifier="OPS-1"),
            Message.assistant("Created."),
            Message.assistant("Resumed."),
        ]
    )
    agent = Agent(model, catalog(), tool_search=ToolSearch(k=2))
    async with SQLiteSessionStore(tmp_path / "sessions.db") as store:
        first = Session("s1", store=store)
        await agent.run("Open a ticket for the outage.", session=first)
        await agent.run("Thanks", session=Session("s1", store=store))
    assert "jira_create_ticket" in names(model.requests[1])
    assert names(model.requests[3]) == [TOOL_SEARCH, "jira_create_ticket"]


def test_settings_name_the_bad_field() -> None:
    with pytest.raises(ConfigError, match=r"ToolSearch\(k=0\)"):
        ToolSearch(k=0)
    with pytest.raises(ConfigError, match="always_load=\\['read_notes'\\]"):
        ToolSearch(always_load="read_notes")
    with pytest.raises(ConfigError, match="threshold"):
        ToolSearch(threshold=-1)
    assert ToolSearch(k=3, max_k=8).size(None) == 3 and ToolSearch(max_k=8).size(50) == 8
    with pytest.raises(InvalidArguments, match="positive integer"):
        ToolSearch().size(0)
    taken = ToolRegistry()
    taken.register(FunctionTool(read_notes, name=TOOL_SEARCH))
    with pytest.raises(ConfigError, match="already has a tool of that name"):
        Agent(ScriptedModel([]), taken, tool_search=True)


async def test_search_mode_ranks_with_the_hybrid_index_it_is_given() -> None:
    model = ScriptedModel(
        [call("s", TOOL_SEARCH, query="mail a letter to my colleague"), Message.assistant("found")]
    )
    index = HybridToolIndex(mode="vector")  # the keyword index finds nothing for this query
    try:
        agent = Agent(model, catalog(), tool_search=ToolSearch(k=1, index=index))
        result = await agent.run("Email Bob.")
    finally:
        await index.close()
    assert result.invocations[0].result.structured == {"loaded": ["gmail_send_message"]}
    assert names(model.requests[1]) == [TOOL_SEARCH, "gmail_send_message"]
