"""The web console's JSON API on a real `toolweave serve --http`: its own token (never an MCP
client's) and the Host and Origin checks of /mcp, tools and sessions, served calls in the query
log and usage, approvals answered over HTTP so a waiting agent run continues, and no
self-approval by a client."""

from __future__ import annotations

import asyncio

import httpx
from mcp.client import Client

from tests.host.console.console_host import gated_weather_agent, serving
from toolweave.accounting import QueryRecord
from toolweave.host.console.log import percentile, usage_summary
from toolweave.mcp import MCPClient, as_tools
from toolweave.tools import FunctionTool

TOKEN = "s3cret-令牌"


async def test_the_api_needs_the_token_and_a_loopback_host() -> None:
    async with serving(token="s3cret") as host:
        base = host.console_url
        assert base is not None
        async with httpx.AsyncClient() as http:
            page = await http.get(base)
            assert page.status_code == 200 and "<canvas" in page.text  # the page holds no data
            script = await http.get(f"{base}/static/chart.umd.min.js")
            assert script.status_code == 200 and "Chart.js v4" in script.text[:200]
            assert (await http.get(f"{base}/static/../config.py")).status_code == 404
            assert (await http.get(f"{base}/api/overview")).status_code == 401
            client_auth = {"Authorization": "Bearer s3cret"}  # the /mcp token
            assert (await http.get(f"{base}/api/overview", headers=client_auth)).status_code == 403
            auth = {"Authorization": f"Bearer {host.console.token}"}
            assert (await http.get(f"{base}/api/overview", headers=auth)).status_code == 200
            spoofed = {**auth, "Host": "evil.example"}
            assert (await http.get(f"{base}/api/overview", headers=spoofed)).status_code == 403
            foreign = {**auth, "Origin": "http://evil.example"}
            decide = await http.post(
                f"{base}/api/approvals/1", headers=foreign, json={"decision": "approve"}
            )
            assert decide.status_code == 403


async def test_overview_queries_and_usage_reflect_served_calls() -> None:
    async with serving() as host:
        base = host.console_url
        console = {"Authorization": f"Bearer {host.console.token}"}
        # The official SDK client (a 2025-era session, so it is listed under sessions).
        async with Client(host.url, mode="legacy") as client:
            await client.call_tool("get_weather", {"city": "北京"})
            await client.call_tool("calculate", {"expression": "2 ** 8"})
            await client.call_tool("calculate", {"expression": "1 / 0"})
            async with httpx.AsyncClient(headers=console) as http:
                overview = (await http.get(f"{base}/api/overview")).json()
                rows = (await http.get(f"{base}/api/queries")).json()
                usage = (await http.get(f"{base}/api/usage")).json()
    assert [t["name"] for t in overview["tools"]] == [
        "calculate",
        "celsius_to_fahrenheit",
        "get_weather",
    ]
    assert overview["providers"] == ["demo"]
    (session,) = overview["sessions"]
    assert session["client"] == "mcp" and session["protocol"].startswith("2025")
    assert [r["tools"] for r in rows] == [["calculate"], ["calculate"], ["get_weather"]]
    assert [r["status"] for r in rows] == ["error", "success", "success"]
    assert rows[2]["input"] == 'get_weather {"city": "北京"}' and rows[0]["kind"] == "tool"
    assert rows[0]["session_id"] == "address:loopback (mcp)"  # the quota key, then the name
    by_tool = {t["tool"]: t for t in usage["tools"]}
    assert (by_tool["calculate"]["calls"], by_tool["calculate"]["errors"]) == (2, 1)
    assert by_tool["get_weather"]["p99_ms"] >= by_tool["get_weather"]["p50_ms"] > 0


def lookup(city: str) -> str:
    return city


async def test_the_overview_sends_whole_multi_line_descriptions() -> None:
    description = "查询天气。\n\nSecond paragraph: what the tool returns, and when to call it."
    async with serving() as host:
        host.server.add_tool(FunctionTool(lookup, description=description))
        console = {"Authorization": f"Bearer {host.console.token}"}
        async with httpx.AsyncClient(headers=console) as http:
            overview = (await http.get(f"{host.console_url}/api/overview")).json()
    (tool,) = [t for t in overview["tools"] if t["name"] == "lookup"]
    assert tool["description"] == description


async def test_an_approval_answered_over_http_lets_the_run_continue() -> None:
    async with serving(token=TOKEN.encode().hex()) as host:
        token = TOKEN.encode().hex()
        auth = {"Authorization": f"Bearer {token}"}
        async with MCPClient.http(host.url, auth) as client:
            tools = await as_tools(client)
            agent = gated_weather_agent(host, tools, "上海", "上海小雨，带伞。")
            run = asyncio.ensure_future(agent.run("上海天气?"))
            await host.console.approvals.wait_pending()
            console = {"Authorization": f"Bearer {host.console.token}"}
            api = f"{host.console_url}/api"
            async with httpx.AsyncClient(base_url=api, headers=console) as http:
                (pending,) = (await http.get("/approvals")).json()
                assert pending["tool_name"] == "get_weather"
                assert pending["args"] == {"city": "上海"}
                bad = await http.post(f"/approvals/{pending['id']}", json={"decision": "maybe"})
                assert bad.status_code == 400
                ok = await http.post(f"/approvals/{pending['id']}", json={"decision": "approve"})
                assert ok.json() == {"ok": True, "decision": "approve"}
                result = await run
                again = await http.post(f"/approvals/{pending['id']}", json={"decision": "deny"})
                assert again.status_code == 404
                assert (await http.get("/approvals")).json() == []
    assert result.output == "上海小雨，带伞。"
    (invocation,) = result.invocations
    assert invocation.ok and invocation.result.structured["city"] == "上海"


async def test_the_approver_fails_closed() -> None:
    from toolweave.host.console.app import ConsoleApprovals

    approvals = ConsoleApprovals(timeout=0.05, max_pending=1)
    first = asyncio.ensure_future(approvals(object()))
    await approvals.wait_pending()
    assert await approvals(object()) is False  # the queue is full: denied at once
    assert await first is False  # nobody answered within the timeout
    assert approvals.pending() == []


def test_usage_summary_percentiles_and_tokens_per_day() -> None:
    def row(i: int, ms: float, status: str = "success") -> QueryRecord:
        return QueryRecord(
            f"r{i}",
            "{}",
            "s",
            status,
            86400.0 * i,
            1,
            ["t"],
            0,
            ms / 1000,
            "",
            "tool",  # type: ignore[arg-type]
        )

    rows = [row(1, 20.0), row(2, 30.0), row(3, 40.0, "timeout")]
    rows.append(QueryRecord("run", "你好", "s", "success", 86400.0 * 3, tokens=42, kind="run"))
    summary = usage_summary(rows)
    assert summary["tools"] == [
        {"tool": "t", "calls": 3, "errors": 1, "p50_ms": 30.0, "p90_ms": 40.0, "p99_ms": 40.0}
    ]
    assert summary["tokens_per_day"] == [
        {"day": "1970-01-02", "tokens": 0},
        {"day": "1970-01-03", "tokens": 0},
        {"day": "1970-01-04", "tokens": 42},
    ]
    assert percentile([], 50) == 0.0 and percentile([5.0], 99) == 5.0


async def test_a_denial_in_the_console_refuses_the_call_and_the_model_reads_why() -> None:
    async with serving() as host, MCPClient.http(host.url) as client:
        agent = gated_weather_agent(host, await as_tools(client), "北京", "好的，不查了。")
        run = asyncio.ensure_future(agent.run("北京天气?"))
        (pending,) = await host.console.approvals.wait_pending()
        console = {"Authorization": f"Bearer {host.console.token}"}
        async with httpx.AsyncClient(base_url=f"{host.console_url}/api", headers=console) as http:
            denied = await http.post(f"/approvals/{pending.id}", json={"decision": "deny"})
        assert denied.status_code == 200
        result = await run
        assert await host.console.queries(10) == []  # nothing reached the served tool
    assert result.output == "好的，不查了。"
    assert result.invocations == []  # refused before it ran
    (refusal,) = [p for m in result.messages for p in m.tool_results]
    assert refusal.is_error and "said no" in refusal.text


async def test_served_calls_that_ask_wait_in_the_console_when_switched_on() -> None:
    rules = {"ask": ["get_weather"]}
    async with (
        serving(rules=rules, console_approvals=True) as host,
        MCPClient.http(host.url) as client,  # stateless: it cannot be asked itself
    ):
        call = asyncio.ensure_future(client.call_tool("get_weather", {"city": "上海"}))
        (pending,) = await host.console.approvals.wait_pending()
        assert pending.request.tool_name == "get_weather" and not call.done()
        host.console.approvals.answer(pending.id, "approve")
        result = await call
        console = {"Authorization": f"Bearer {host.console.token}"}
        async with httpx.AsyncClient(headers=console) as http:
            api = f"{host.console_url}/api"
            (decision,) = (await http.get(f"{api}/audit", params={"tool": "get_weather"})).json()
            (row,) = (await http.get(f"{api}/queries", params={"outcome": "ran"})).json()
            bad = await http.get(f"{api}/queries", params={"since": "soon"})
            none = (await http.get(f"{api}/audit", params={"decided_by": "elicitation"})).json()
    assert not result.is_error and result.structured["city"] == "上海"
    assert (decision["decision"], decision["decided_by"]) == ("approved", "console")
    assert decision["args"] == '{"city": "上海"}' and none == []
    assert (row["tool"], row["client"], row["outcome"]) == (
        "get_weather",
        "address:loopback",
        "ran",
    )
    assert bad.status_code == 400 and "since='soon'" in bad.json()["error"]
    async with serving(rules=rules) as host, MCPClient.http(host.url) as client:
        refused = await client.call_tool("get_weather", {"city": "上海"})  # off by default
    assert refused.is_error and "toolweave.toml" in refused.text
    assert host.console.approvals.pending() == []


async def test_a_client_cannot_approve_its_own_admin_only_call() -> None:
    rules = {"ask": ["get_weather"]}
    async with (
        serving(token="mcp-token", rules=rules, console_approvals=True) as host,
        MCPClient.http(host.url, {"Authorization": "Bearer mcp-token"}) as client,
    ):
        call = asyncio.ensure_future(client.call_tool("get_weather", {"city": "上海"}))
        (pending,) = await host.console.approvals.wait_pending()
        decide = f"{host.console_url}/api/approvals/{pending.id}"
        approve = {"decision": "approve"}
        async with httpx.AsyncClient() as http:
            with_client_token = await http.post(
                decide, json=approve, headers={"Authorization": "Bearer mcp-token"}
            )
            without_token = await http.post(decide, json=approve)  # loopback, no token
        assert with_client_token.status_code == 403 and without_token.status_code == 401
        assert "MCP client's token" in with_client_token.json()["error"]
        assert not call.done() and host.console.approvals.pending()  # still waiting
        async with httpx.AsyncClient() as http:
            console = {"Authorization": f"Bearer {host.console.token}"}
            answered = await http.post(decide, json={"decision": "deny"}, headers=console)
        result = await call
    assert answered.status_code == 200 and result.is_error


async def test_the_console_body_has_the_max_body_bytes_bound() -> None:
    async with serving(max_body_bytes=1024) as host:
        console = {"Authorization": f"Bearer {host.console.token}"}
        big = b'{"decision": "approve", "pad": "' + b"x" * 4096 + b'"}'
        async with httpx.AsyncClient(headers=console) as http:
            refused = await http.post(
                f"{host.console_url}/api/approvals/1",
                content=big,
                headers={"Content-Type": "application/json"},
            )
    assert refused.status_code == 413 and "max_body_bytes (1024 bytes)" in refused.json()["error"]


def test_the_console_token_must_differ_from_the_client_token() -> None:
    import pytest

    from toolweave.host import ToolHost, parse_config

    same = {"serve": {"token": "same", "console_token": "same"}}
    with pytest.raises(ValueError, match="console_token equals"):
        ToolHost(parse_config(same, env={}))
