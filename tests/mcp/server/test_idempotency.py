"""Idempotency keys of 2026-era `tools/call` requests, served over real HTTP on loopback: the
official MCP SDK client sends `_meta["io.toolweave/idempotency-key"]`; a retry with the same key
returns the recorded answer without running the tool again, is refused while the first attempt
has no outcome, and works in one process (memory) and across two replicas on one Postgres
(`PostgresMCPSessionStore`); toolweave's own `MCPClient` sends a key on every call."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import pytest
from mcp.client import Client
from mcp.shared.exceptions import MCPError as SDKError

from tests.mcp.server.inprocess import serve_in_process
from tests.support import postgres_schema_dsn
from toolweave.mcp import Context, MCPClient, MCPServer
from toolweave.mcp.server.idempotency import MemoryCallRecords
from toolweave.mcp.server.postgres_sessions import PostgresMCPSessionStore
from toolweave.mcp.shared.constants import MAX_IDEMPOTENCY_KEY_CHARS, META_IDEMPOTENCY_KEY

NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


class Counted:
    """A server whose tools count their runs; `held` waits until the test releases it."""

    def __init__(self) -> None:
        self.runs: Counter[str] = Counter()
        self.keys: list[str] = []
        self.started = asyncio.Event()
        self.release = asyncio.Event()
        self.server = MCPServer("idempotency-test")

        @self.server.tool
        def count(call_id: str, ctx: Context) -> str:
            self.runs[call_id] += 1
            self.keys.append(str(ctx.meta.get(META_IDEMPOTENCY_KEY)))
            return f"counted {call_id} ({self.runs[call_id]})"

        @self.server.tool
        async def two_rounds(ctx: Context) -> str:
            self.runs["rounds"] += 1
            first = await ctx.elicit("First?", NAME_SCHEMA)
            second = await ctx.elicit("Second?", NAME_SCHEMA)
            return f"{first['content']['name']}+{second['content']['name']}"

        @self.server.tool
        async def held(call_id: str) -> str:
            self.runs[call_id] += 1
            self.started.set()
            await self.release.wait()
            return f"held {call_id}"


@asynccontextmanager
async def replicas(counted: Counted, dsn: str | None) -> AsyncIterator[tuple[str, str]]:
    """Two endpoint URLs: one process's endpoint twice (no store), or two endpoints on `dsn`."""
    async with AsyncExitStack() as stack:
        if dsn is None:
            url = await stack.enter_async_context(serve_in_process(counted.server))
            yield url, url
            return
        urls = []
        for _ in range(2):
            store = PostgresMCPSessionStore(dsn)
            stack.push_async_callback(store.close)
            urls.append(
                await stack.enter_async_context(
                    serve_in_process(counted.server, session_store=store)
                )
            )
        yield urls[0], urls[1]


@pytest.fixture(params=["memory", "postgres"])
def dsn(request: pytest.FixtureRequest) -> str | None:
    if request.param == "memory":
        return None
    return postgres_schema_dsn(request.getfixturevalue("postgres_dsn"))


def _text(result: object) -> str:
    return str(result.content[0].text)  # type: ignore[attr-defined]


async def test_a_retry_with_the_same_key_returns_the_recorded_answer_without_running_again(
    dsn: str | None,
) -> None:
    counted = Counted()
    async with (
        replicas(counted, dsn) as (url_a, url_b),
        Client(url_a) as on_a,
        Client(url_b) as on_b,
    ):
        first = await on_a.call_tool("count", {"call_id": "x"}, meta={META_IDEMPOTENCY_KEY: "k1"})
        again = await on_b.call_tool("count", {"call_id": "x"}, meta={META_IDEMPOTENCY_KEY: "k1"})
        other = await on_b.call_tool("count", {"call_id": "x"}, meta={META_IDEMPOTENCY_KEY: "k2"})
        unkeyed = [await on_a.call_tool("count", {"call_id": "y"}) for _ in range(2)]
        with pytest.raises(SDKError, match=r"idempotency-key.*non-empty string"):
            await on_a.call_tool("count", {"call_id": "z"}, meta={META_IDEMPOTENCY_KEY: "k" * 999})
    assert _text(first) == _text(again) == "counted x (1)"
    assert _text(other) == "counted x (2)"  # another key is another call
    assert [_text(result) for result in unkeyed] == ["counted y (1)", "counted y (2)"]
    assert counted.runs == Counter({"x": 2, "y": 2})  # "z" (a key too long) never ran
    assert len("k" * 999) > MAX_IDEMPOTENCY_KEY_CHARS


async def test_a_retry_while_the_first_attempt_has_no_outcome_is_refused_and_never_runs(
    dsn: str | None,
) -> None:
    counted = Counted()
    key = {META_IDEMPOTENCY_KEY: "slow-1"}
    async with (
        replicas(counted, dsn) as (url_a, url_b),
        Client(url_a) as on_a,
        Client(url_b) as on_b,
    ):
        first = asyncio.ensure_future(on_a.call_tool("held", {"call_id": "h"}, meta=key))
        await counted.started.wait()
        with pytest.raises(SDKError, match="ran at most once and did not complete") as refused:
            await on_b.call_tool("held", {"call_id": "h"}, meta=key)
        counted.release.set()
        answered = await first
        replayed = await on_b.call_tool("held", {"call_id": "h"}, meta=key)
    assert "send a new key" in str(refused.value)
    assert _text(answered) == _text(replayed) == "held h"
    assert counted.runs == Counter({"h": 1})


async def test_mcp_client_sends_a_fresh_key_on_every_call() -> None:
    counted = Counted()
    async with serve_in_process(counted.server) as url, MCPClient.http(url) as client:
        results = [await client.call_tool("count", {"call_id": "c"}) for _ in range(2)]
        named = await client.call_tool("count", {"call_id": "c"}, meta={META_IDEMPOTENCY_KEY: "n"})
    assert [result.text for result in results] == ["counted c (1)", "counted c (2)"]
    assert named.text == "counted c (3)"
    assert len(set(counted.keys)) == 3 and counted.keys[2] == "n"
    assert all(len(key) == 32 for key in counted.keys[:2])  # uuid4 hex, one per call


async def test_each_input_required_round_under_one_key_runs_and_completes() -> None:
    counted = Counted()
    asked: list[str] = []

    async def answer(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params["message"])
        return {"action": "accept", "content": {"name": f"n{len(asked)}"}}

    async with (
        serve_in_process(counted.server) as url,
        MCPClient.http(url, elicitation_handler=answer) as client,
    ):
        result = await client.call_tool("two_rounds", {}, meta={META_IDEMPOTENCY_KEY: "r"})
    assert result.text == "n1+n2" and asked == ["First?", "Second?"]
    assert counted.runs["rounds"] == 3  # the tool re-runs each round: 3 rounds, one key


async def test_memory_records_keep_at_most_max_keys_each_for_its_ttl() -> None:
    records = MemoryCallRecords(max_keys=2)
    assert [await records.claim("key:", k) for k in ("a", "b", "a")] == [None, None, "running"]
    await records.settle("key:", "a", {"id": 1, "result": {}})
    assert await records.claim("key:", "a") == {"id": 1, "result": {}}
    assert await records.claim("key:", "c") is None  # the oldest ("a") is forgotten for it
    assert await records.claim("key:", "a") is None
    with pytest.raises(ValueError, match="max_keys"):
        MemoryCallRecords(max_keys=0)
