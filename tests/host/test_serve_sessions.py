"""2025-era sessions stored on `[serve].store_dsn`: two real `toolweave serve` replicas on one
Postgres, and the official MCP SDK client in legacy mode whose HTTP requests alternate between
them (a round-robin balancer, no sticky routing): the session, its approvals by elicitation and
its calls work whichever replica each message reaches; a retried request id never runs twice."""

from __future__ import annotations

import itertools
import json
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client

from tests.host.test_governance import Elicitor, _text
from tests.host.test_serve_fleet import replica
from tests.mcp.server.test_postgres_events import open_session
from tests.support import postgres_schema_dsn
from toolweave.host.providers import base as host_providers
from toolweave.tools import Permission, tool

RUNS: Counter[str] = Counter()
"""How many times each call id ran, across both replicas (they share this process)."""


@tool(permissions=[Permission.SHELL], primary_arg="command")
def run_command(command: str) -> str:
    """Pretend to run a shell command (a call the default rules ask a person about)."""
    RUNS[command] += 1
    return f"ran {command}"


@tool
def count(call_id: str) -> str:
    """Count one run of `call_id`."""
    RUNS[call_id] += 1
    return f"counted {call_id}"


class CountingProvider:
    name = "counting"

    def __init__(self, config: Any) -> None:
        self.config = config

    async def tools(self) -> list[Any]:
        return [run_command, count]

    async def close(self) -> None:
        return None


@pytest.fixture(autouse=True)
def _provider(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(host_providers.PROVIDERS, "counting", f"{__name__}:CountingProvider")
    RUNS.clear()


class Alternating(httpx2.AsyncBaseTransport):
    """A round-robin balancer in the client: each HTTP request goes to the next port."""

    def __init__(self, ports: list[int]) -> None:
        self._next = itertools.cycle(ports)
        self._inner = httpx2.AsyncHTTPTransport()
        self.served: list[tuple[str, int]] = []
        """(what was sent: a GET, a method, or "answer" for a response; the port) per request"""

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        port = next(self._next)
        request.url = request.url.copy_with(port=port)
        sent = json.loads(request.content) if request.method == "POST" else {}
        self.served.append((sent.get("method", "answer") if sent else request.method, port))
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


def _port(url: str) -> int:
    port = httpx.URL(url).port
    assert port is not None
    return port


async def test_a_legacy_client_alternating_between_replicas_keeps_its_session_and_approvals(
    tmp_path: Path, postgres_dsn: str
) -> None:
    dsn = postgres_schema_dsn(postgres_dsn)
    answers = Elicitor("accept", {"always": False})
    async with (
        replica(tmp_path, dsn, "a", providers=["counting"]) as (_, url_a),
        replica(tmp_path, dsn, "b", providers=["counting"]) as (_, url_b),
    ):
        balancer = Alternating([_port(url_a), _port(url_b)])
        async with (
            httpx2.AsyncClient(transport=balancer, timeout=30) as http,
            Client(
                streamable_http_client(url_a, http_client=http),
                mode="legacy",
                elicitation_callback=answers,
            ) as client,
        ):
            await client.set_logging_level("warning")
            tools = await client.list_tools()
            counted = [await client.call_tool("count", {"call_id": f"c{i}"}) for i in range(4)]
            approved = [
                await client.call_tool("run_command", {"command": f"ls {i}"}) for i in range(3)
            ]
            answers.action = "decline"
            refused = await client.call_tool("run_command", {"command": "rm -rf /"})
    assert {tool.name for tool in tools.tools} == {"run_command", "count"}
    assert [_text(result) for result in counted] == [f"counted c{i}" for i in range(4)]
    assert [_text(result) for result in approved] == [f"ran ls {i}" for i in range(3)]
    assert len(answers.messages) == 4  # each call asked the person once, wherever it ran
    assert refused.is_error and "rm -rf /" not in RUNS
    assert Counter({**{f"c{i}": 1 for i in range(4)}, **{f"ls {i}": 1 for i in range(3)}}) == RUNS
    calls = [port for sent, port in balancer.served if sent == "tools/call"]
    assert set(calls) == {_port(url_a), _port(url_b)}  # the calls ran on both replicas
    # and a person's answer reached the other replica than the one asking (and waiting)
    asker, crossed = 0, 0
    for sent, port in balancer.served:
        if sent == "tools/call":
            asker = port
        elif sent == "answer":
            crossed += port != asker
    assert crossed >= 1


async def test_a_retried_request_id_returns_the_recorded_outcome_without_running_again(
    tmp_path: Path, postgres_dsn: str
) -> None:
    dsn = postgres_schema_dsn(postgres_dsn)
    call = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "count", "arguments": {"call_id": "once"}},
    }
    async with (
        replica(tmp_path, dsn, "a", providers=["counting"]) as (_, url_a),
        replica(tmp_path, dsn, "b", providers=["counting"]) as (_, url_b),
        httpx.AsyncClient(timeout=30) as http,
    ):
        headers = await open_session(http, url_a)
        first = await http.post(url_a, headers=headers, json=call)
        again = [await http.post(url, headers=headers, json=call) for url in (url_b, url_a)]
        other = await open_session(http, url_b)
        fresh = await http.post(url_b, headers=other, json=call)  # same id, another session
        ended = await http.delete(url_b, headers=headers)
        gone = await http.post(url_a, headers=headers, json={**call, "id": 8})
    assert first.json()["result"]["content"][0]["text"] == "counted once"
    assert [response.json() for response in again] == [first.json(), first.json()]
    assert RUNS["once"] == 2  # the first call and the other session's, never the retries
    assert fresh.json()["result"]["content"][0]["text"] == "counted once"
    assert ended.status_code == 200
    assert gone.status_code == 404 and "Session not found" in gone.json()["error"]["message"]


async def test_a_stored_session_answers_only_the_principal_that_opened_it(
    tmp_path: Path, postgres_dsn: str
) -> None:
    dsn = postgres_schema_dsn(postgres_dsn)
    tokens = {"alice": "alice-token-0123456789", "bob": "bob-token-0123456789"}
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    async with (
        replica(tmp_path, dsn, "a", providers=["counting"], tokens=tokens) as (_, url_a),
        replica(tmp_path, dsn, "b", providers=["counting"], tokens=tokens) as (_, url_b),
        httpx.AsyncClient(
            timeout=30, headers={"Authorization": "Bearer alice-token-0123456789"}
        ) as alice,
    ):
        headers = await open_session(alice, url_a)
        as_alice = await alice.post(url_b, headers=headers, json=call)
        as_bob = await alice.post(
            url_b, headers={**headers, "Authorization": "Bearer bob-token-0123456789"}, json=call
        )
    assert as_alice.status_code == 200 and len(as_alice.json()["result"]["tools"]) == 2
    assert as_bob.status_code == 404 and "Session not found" in as_bob.json()["error"]["message"]
