"""`toolweave serve` under hostile clients (second review, classes 14-17), over real HTTP.

14: one client's unanswered approvals filled the console queue and every other client's ask was
refused. 15: request bodies sent a byte at a time held connections forever. 16: a browser page
on another local port opened sessions with `text/plain` bodies until the cap evicted everyone
else's (see also tests/mcp/server/test_hardening_limits.py: past the cap, 429). 17: without a
token the daily quota was keyed on the source address, so other `127.x.y.z` addresses got fresh
quotas; with one token every client shared one bucket. 18 (review2): `GET /ready` needs no
token, and each request ran its own store check: a flood of them took a shared-store
connection each.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx
import pytest

from tests.host.console.console_host import serving
from toolweave.governance import ApprovalRequest
from toolweave.host.console.app import ConsoleApprovals
from toolweave.host.readiness import READY_PATH, Readiness

ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x"}},
}


async def calculate(
    url: str, *, source: str = "127.0.0.1", token: str | None = None,
    name: str = "calculate", arguments: dict[str, Any] | None = None,
) -> Any:  # fmt: skip
    """One session from `source` (a loopback address of this machine) and one tool call."""
    auth = {"Authorization": f"Bearer {token}"} if token else {}
    transport = httpx.AsyncHTTPTransport(local_address=source)
    async with httpx.AsyncClient(transport=transport, timeout=30) as http:
        opened = await http.post(url, json=INIT, headers={**ACCEPT, **auth})
        opened.raise_for_status()
        headers = {**ACCEPT, **auth, "Mcp-Session-Id": opened.headers["mcp-session-id"]}
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        await http.post(url, json=note, headers=headers)
        args = arguments if arguments is not None else {"expression": "6 * 7"}
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": name, "arguments": args}}  # fmt: skip
        answer = await http.post(url, json=call, headers=headers)
        return answer.json()["result"]


async def test_the_whole_loopback_range_is_one_client_for_the_quota() -> None:
    async with serving(daily_calls_per_client=2) as host:
        results = [
            await calculate(host.config.url, source=source)
            for source in ("127.0.0.1", "127.0.0.2", "127.9.8.7", "127.0.0.3")
        ]
    assert [r.get("isError", False) for r in results] == [False, False, True, True]
    assert "daily calls quota exceeded" in results[2]["content"][0]["text"]


async def test_each_client_token_is_its_own_principal_and_quota() -> None:
    tokens = {"alice": "alice-" + "a" * 32, "bob": "bob-" + "b" * 32}
    async with serving(tokens=tokens, daily_calls_per_client=1) as host:
        url = host.config.url
        alice = [await calculate(url, token=tokens["alice"]) for _ in range(2)]
        bob = await calculate(url, token=tokens["bob"])
        async with httpx.AsyncClient() as http:
            stranger = await http.post(url, json=INIT, headers={**ACCEPT,
                                       "Authorization": "Bearer guess"})  # fmt: skip
    assert [r.get("isError", False) for r in alice] == [False, True]  # alice's own bucket ran out
    assert not bob.get("isError", False)  # bob's did not
    assert stranger.status_code == 401


async def test_a_post_must_be_json() -> None:
    async with serving() as host, httpx.AsyncClient() as http:
        url = host.config.url
        for kind in ("text/plain", "application/x-www-form-urlencoded", None):
            headers = {"Accept": ACCEPT["Accept"], **({"Content-Type": kind} if kind else {})}
            page = await http.post(url, content=httpx.Request("POST", url, json=INIT).content,
                                   headers=headers)  # fmt: skip
            assert page.status_code == 415 and "mcp-session-id" not in page.headers, kind
            assert "Content-Type: application/json" in page.json()["error"]["message"]
        assert not host.server.sessions


async def test_a_body_dripped_slowly_is_cut_at_body_read_timeout() -> None:
    async with serving(body_read_timeout=0.5) as host:
        reader, writer = await asyncio.open_connection("127.0.0.1", host.config.port)
        head = (
            f"POST {host.config.path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"jsonrpc"'
        )
        started = time.perf_counter()
        writer.write(head.encode())
        await writer.drain()
        status = await reader.readline()  # the server answers without the rest of the body
        elapsed = time.perf_counter() - started
        writer.close()
    assert b" 408 " in status
    assert 0.4 < elapsed < 5


def request(requester: str, call: int) -> ApprovalRequest:
    return ApprovalRequest("bash", {"command": f"echo {call}"}, "asks", f"s-{requester}",
                           requester=requester, call_id=str(call))  # fmt: skip


async def test_one_clients_approval_flood_never_refuses_another() -> None:
    queue = ConsoleApprovals(max_pending_per_client=3, timeout=60)
    flood = [asyncio.ensure_future(queue(request("address:loopback", n))) for n in range(5)]
    await queue.wait_pending(3)
    assert await flood[3] is False and await flood[4] is False  # refused at once
    other = asyncio.ensure_future(queue(request("principal:client:bob", 99)))
    (pending,) = [p for p in await queue.wait_pending(4) if p.request.requester.endswith("bob")]
    assert queue.answer(pending.id, "approve")
    assert await other is True
    for task in flood[:3]:
        task.cancel()
    await asyncio.gather(*flood[:3], return_exceptions=True)
    assert queue.pending() == []


async def test_a_served_flood_of_asks_leaves_room_for_another_client() -> None:
    tokens = {"alice": "alice-" + "a" * 32, "bob": "bob-" + "b" * 32}
    table = {"tokens": tokens, "console_approvals": True, "approvals_per_client": 2,
             "rules": {"ask": ["get_weather"]}}  # fmt: skip
    async with serving(**table) as host:
        queue = host.console.approvals
        url = host.config.url

        def weather(who: str, city: str) -> Any:
            return asyncio.ensure_future(calculate(url, token=tokens[who], name="get_weather",
                                                   arguments={"city": city}))  # fmt: skip

        flood = [weather("alice", city) for city in ("北京", "上海")]
        await queue.wait_pending(2)
        refused = await weather("alice", "广州")  # alice's third: refused at once
        bob = weather("bob", "London")
        waiting = await queue.wait_pending(3)
        (mine,) = [p for p in waiting if p.request.requester == "principal:client:bob"]
        assert queue.answer(mine.id, "approve")
        answered = await bob
        for item in queue.pending():
            queue.answer(item.id, "deny")
        await asyncio.gather(*flood)
    assert refused.get("isError") and not answered.get("isError")


def test_the_tokens_table_is_checked() -> None:
    from toolweave.errors import ConfigError
    from toolweave.host import parse_config

    def config(**serve: Any) -> None:
        parse_config({"serve": {"transport": "http", **serve}}, env={}).check()

    with pytest.raises(ConfigError, match="share a token"):
        config(tokens={"a": "same-token-123", "b": "same-token-123"})
    with pytest.raises(ConfigError, match="empty token"):
        config(tokens={"a": " "})
    with pytest.raises(ConfigError, match="console_token"):
        config(tokens={"a": "x" * 20}, console_token="x" * 20)
    config(host="0.0.0.0", tokens={"a": "y" * 20})  # per-client tokens alone protect it


async def test_concurrent_ready_probes_share_one_store_check() -> None:
    from starlette.applications import Starlette

    checks: list[int] = []
    answer = asyncio.Event()
    down = False

    async def ping() -> None:
        checks.append(1)
        await answer.wait()
        if down:
            raise ConnectionError("the shared Postgres does not answer")

    readiness = Readiness(ping)
    probes = [asyncio.ensure_future(readiness.reason()) for _ in range(50)]
    await asyncio.sleep(0)  # one turn of the loop: each probe runs until it waits for the store
    answer.set()
    assert await asyncio.gather(*probes) == [None] * 50 and len(checks) == 1
    down = True  # a later probe asks the store again, through the route a balancer calls
    transport = httpx.ASGITransport(app=Starlette(routes=readiness.routes()))
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
        later = await http.get(READY_PATH)
    assert (later.status_code, later.json()) == (
        503,
        {"ready": False, "reason": "store unreachable"},
    )
    assert len(checks) == 2
