"""2025-era sessions through HAProxy round-robin while a replica is SIGKILLed and restarted: a
session client completes 1,000 calls and none runs twice. The sessions are stored on the
fleet's Postgres, so every message of a session may land on any replica; the `count` tool
records each run per call id in Postgres.

The client is a plain 2025-11-25 session client written with httpx, because the retry it makes
is the point: a call whose answer did not arrive (its replica died, HAProxy answered 502) is
sent again with the *same request id in the same session*, and the fleet answers it from the
call's record, never by running the tool again. A call the kill cut in the middle has no record
of its outcome, and its retry is refused as such (it ran at most once, the client is told it
cannot know); those are at most the calls in flight at the kill. Heavy: about 1,000 calls
through three replicas (marked `heavy`)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.fleet.harness import Fleet, needs_haproxy
from tests.postgres_server import Cluster

pytestmark = [needs_haproxy, pytest.mark.heavy]

CALLS = 1000
WORKERS = 10
VERSION = "2025-11-25"
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
NO_OUTCOME = "has no outcome yet"


async def _open(http: httpx.AsyncClient, url: str) -> dict[str, str]:
    """A new session through the balancer: its headers for every later message."""
    params = {
        "protocolVersion": VERSION,
        "capabilities": {},
        "clientInfo": {"name": "k", "version": "1"},
    }
    body = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}
    opened = await http.post(url, headers=ACCEPT, json=body)
    opened.raise_for_status()
    headers = {
        **ACCEPT,
        "Mcp-Session-Id": opened.headers["mcp-session-id"],
        "MCP-Protocol-Version": VERSION,
    }
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    (await http.post(url, headers=headers, json=note)).raise_for_status()
    return headers


async def _call(
    http: httpx.AsyncClient, url: str, headers: dict[str, str], body: dict[str, Any]
) -> dict[str, Any]:
    """The call's JSON-RPC answer, sending the same request again until one arrives."""
    while True:
        try:
            answer = await http.post(url, headers=headers, json=body)
        except httpx.TransportError:  # the connection was cut: send it again
            continue
        if answer.status_code == 200:
            reply: dict[str, Any] = answer.json()
            return reply
        assert answer.status_code in (502, 503), answer.text  # the replica died under it


async def test_a_session_client_completes_1000_calls_while_a_replica_is_killed_and_restarted(
    tmp_path: Path, fleet_cluster: Cluster
) -> None:
    done = 0
    third = asyncio.Event()
    results: dict[str, str] = {}
    unknown: list[str] = []

    async def worker(ids: list[str]) -> None:
        nonlocal done
        async with httpx.AsyncClient(timeout=60) as http:
            headers = await _open(http, fleet.url)
            for request_id, call_id in enumerate(ids, start=1):
                params = {"name": "count", "arguments": {"call_id": call_id}}
                body = {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "method": "tools/call",
                    "params": params,
                }
                reply = await _call(http, fleet.url, headers, body)
                if "error" in reply:
                    assert NO_OUTCOME in reply["error"]["message"], reply
                    unknown.append(call_id)
                else:
                    results[call_id] = reply["result"]["content"][0]["text"]
                done += 1
                if done == CALLS // 3:
                    third.set()

    async with Fleet(tmp_path, fleet_cluster, replicas=3) as fleet:
        ids = [f"s{i}" for i in range(CALLS)]
        load = asyncio.gather(*(worker(ids[w::WORKERS]) for w in range(WORKERS)))
        await third.wait()
        killed = await fleet.crash(1)
        await load
        runs = await fleet.runs()
    assert killed == -9
    assert len(results) + len(unknown) == CALLS  # every call answered
    assert all(runs.get(call_id) == 1 for call_id in results)  # each ran once, retries or not
    assert all(runs.get(call_id, 0) <= 1 for call_id in unknown)  # cut by the kill: never twice
    assert len(unknown) <= WORKERS  # at most the calls in flight when the replica died
    assert {text.rpartition(" ")[2] for text in results.values()} == {"r0", "r1", "r2"}
