"""Input-required results (SEP-2322): a 2026-07-28 tool asks the client through its result, the
client retries with the answers and a signed `requestState`, and the tool resumes."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from tests.mcp.server.modern import Modern, modern_client
from toolweave.mcp import Context, MCPServer

NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def make_server(**options: Any) -> MCPServer:
    server = MCPServer("mrtr", **options)
    runs: list[str] = []

    @server.tool
    async def greet(ctx: Context, city: str = "上海") -> str:
        runs.append(city)
        answer = await ctx.elicit("你叫什么名字?", NAME_SCHEMA, key="user_name")
        return f"你好, {answer['content']['name']} in {city}"

    @server.tool
    async def survey(ctx: Context) -> str:
        name, model, roots = await asyncio.gather(
            ctx.elicit("Name?", NAME_SCHEMA),
            ctx.sample("Say hi", max_tokens=5),
            ctx.list_roots(),
        )
        return json.dumps([name["content"], model["content"]["text"], roots])

    @server.tool
    async def two_steps(ctx: Context) -> str:
        first = await ctx.elicit("First?", NAME_SCHEMA)
        second = await ctx.elicit("Second?", NAME_SCHEMA)
        return f"{first['content']['name']}+{second['content']['name']}"

    @server.prompt
    async def briefing(ctx: Context) -> str:
        answer = await ctx.elicit("Topic?", NAME_SCHEMA, key="topic")
        return f"Brief me on {answer['content']['name']}"

    server.runs = runs  # type: ignore[attr-defined]
    return server


def accept(name: str) -> dict[str, Any]:
    return {"action": "accept", "content": {"name": name}}


async def test_elicitation_round_trip_resumes_the_tool_with_the_answer() -> None:
    server = make_server()
    async with modern_client(server) as http:
        modern = Modern(http)
        first = await modern.result("tools/call", {"name": "greet", "arguments": {}})
        second = await modern.result(
            "tools/call",
            {
                "name": "greet",
                "arguments": {},
                "inputResponses": {"user_name": accept("李雷"), "unasked": accept("x")},
                "requestState": first["requestState"],
            },
        )
    assert first["resultType"] == "input_required" and "content" not in first
    assert first["inputRequests"] == {
        "user_name": {
            "method": "elicitation/create",
            "params": {"message": "你叫什么名字?", "requestedSchema": NAME_SCHEMA},
        }
    }
    assert second["resultType"] == "complete"
    assert second["content"][0]["text"] == "你好, 李雷 in 上海"
    assert server.runs == ["上海", "上海"]  # type: ignore[attr-defined]


async def test_questions_asked_together_share_one_round_and_rounds_chain() -> None:
    async with modern_client(make_server()) as http:
        modern = Modern(http)
        asked = await modern.result("tools/call", {"name": "survey", "arguments": {}})
        answers = {
            "elicitation-1": accept("Ann"),
            "sampling-2": {"role": "assistant", "content": {"type": "text", "text": "hi"}},
            "roots-3": {"roots": [{"uri": "file:///work", "name": "work"}]},
        }
        done = await modern.result(
            "tools/call",
            {
                "name": "survey",
                "inputResponses": answers,
                "requestState": asked["requestState"],
            },
        )
        step1 = await modern.result("tools/call", {"name": "two_steps"})
        step2 = await modern.result(
            "tools/call",
            {
                "name": "two_steps",
                "inputResponses": {"elicitation-1": accept("a")},
                "requestState": step1["requestState"],
            },
        )
        step3 = await modern.result(
            "tools/call",
            {
                "name": "two_steps",
                "inputResponses": {"elicitation-2": accept("b")},
                "requestState": step2["requestState"],
            },
        )
    assert sorted(asked["inputRequests"]) == ["elicitation-1", "roots-3", "sampling-2"]
    assert asked["inputRequests"]["roots-3"] == {"method": "roots/list", "params": {}}
    assert json.loads(done["content"][0]["text"]) == [
        {"name": "Ann"},
        "hi",
        [{"uri": "file:///work", "name": "work"}],
    ]
    assert list(step1["inputRequests"]) == ["elicitation-1"]
    assert list(step2["inputRequests"]) == ["elicitation-2"]  # the first answer rode in the state
    assert step2["requestState"] != step1["requestState"]
    assert step3["content"][0]["text"] == "a+b"


async def test_tampered_foreign_replayed_and_expired_states_are_refused() -> None:
    server = make_server(request_state_ttl=60)
    async with modern_client(server) as http:
        modern = Modern(http)
        state = (await modern.result("tools/call", {"name": "greet"}))["requestState"]
        answers = {"user_name": accept("Eve")}

        async def retry(name: str, token: str, arguments: dict[str, Any]) -> dict[str, Any]:
            response = await modern.post(
                "tools/call",
                {
                    "name": name,
                    "arguments": arguments,
                    "inputResponses": answers,
                    "requestState": token,
                },
            )
            return Modern.final(response)

        tampered = await retry("greet", state + "-TAMPERED", {})
        forged = await retry("greet", state[:-4] + "AAAA", {})
        other_args = await retry("greet", state, {"city": "北京"})
        other_tool = await retry("two_steps", state, {})
        ok = await retry("greet", state, {})
        replayed = await retry("greet", state, {})
        server.request_states.ttl = -1.0  # states sealed from now on are born expired
        stale = (await modern.result("tools/call", {"name": "greet"}))["requestState"]
        expired = await retry("greet", stale, {})
    for refused, why in [
        (tampered, "integrity"),
        (forged, "integrity"),
        (other_args, "another caller, tool or set of arguments"),
        (other_tool, "another caller, tool or set of arguments"),
        (replayed, "already used"),
        (expired, "expired"),
    ]:
        assert refused["error"]["code"] == -32602, refused
        assert why in refused["error"]["message"]
    assert ok["result"]["content"][0]["text"] == "你好, Eve in 上海"


async def test_a_state_is_bound_to_the_authenticated_caller() -> None:
    one, other = make_server(state_key=b"k" * 32), make_server(state_key=b"k" * 32)
    async with (
        modern_client(one, auth_token="alice-token") as alice,
        modern_client(other, auth_token="bob-token") as bob,
    ):
        state = (
            await Modern(alice).result(
                "tools/call", {"name": "greet"}, headers={"Authorization": "Bearer alice-token"}
            )
        )["requestState"]
        stolen = await Modern(bob).post(
            "tools/call",
            {"name": "greet", "inputResponses": {"user_name": accept("x")}, "requestState": state},
            headers={"Authorization": "Bearer bob-token"},
        )
    assert "another caller" in stolen.json()["error"]["message"]


async def test_malformed_input_responses_and_missing_capabilities_are_errors() -> None:
    async with modern_client(make_server()) as http:
        modern = Modern(http)
        number = Modern.final(
            await modern.post("tools/call", {"name": "greet", "inputResponses": {"user_name": 1}})
        )
        null = Modern.final(
            await modern.post("tools/call", {"name": "greet", "inputResponses": None})
        )
        stateless = Modern.final(  # answers with no question asked: refused, never taken
            await modern.post("tools/call", {"name": "greet", "inputResponses": {"q": accept("x")}})
        )
        no_caps = await modern.post("tools/call", {"name": "survey"}, caps={"sampling": {}})
    assert number["error"]["code"] == null["error"]["code"] == -32602
    assert "inputResponses['user_name']" in number["error"]["message"]
    assert stateless["error"]["code"] == -32602
    assert "params.inputResponses came without params.requestState" in stateless["error"]["message"]
    assert no_caps.status_code == 400
    error = no_caps.json()["error"]
    assert error["code"] == -32021 and error["data"] == {
        "requiredCapabilities": {"elicitation": {}}
    }


async def test_a_prompt_asks_through_its_context_too() -> None:
    async with modern_client(make_server()) as http:
        modern = Modern(http)
        asked = await modern.result("prompts/get", {"name": "briefing"})
        got = await modern.result(
            "prompts/get",
            {
                "name": "briefing",
                "inputResponses": {"topic": accept("tides")},
                "requestState": asked["requestState"],
            },
        )
        listed = await modern.result("prompts/list")
    assert asked["resultType"] == "input_required" and "topic" in asked["inputRequests"]
    assert got["messages"][0]["content"]["text"] == "Brief me on tides"
    assert "arguments" not in listed["prompts"][0]  # the Context parameter is not an argument


def test_state_keys_and_lifetimes_are_checked() -> None:
    with pytest.raises(ValueError, match="state_key must be at least 16 bytes"):
        MCPServer("x", state_key=b"short")
    with pytest.raises(ValueError, match="request_state_ttl"):
        MCPServer("x", request_state_ttl=0)
