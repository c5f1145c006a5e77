"""The console's approvals queue on `[serve].store_dsn`: a call waiting for an admin on replica
A is listed and answered on replica B's console (two real `toolweave serve` replicas, one real
Postgres, the official MCP SDK client); the decision is kept as the audit, an answer counts
once, and what a killed replica left waiting is marked abandoned when it starts again."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
from mcp.client import Client

from tests.host.test_governance import _text
from tests.host.test_serve_fleet import replica
from tests.host.test_serve_sessions import RUNS, _provider
from tests.support import postgres_schema_dsn
from toolweave.host.console.approval_queue import PostgresApprovalQueue

__all__ = ["_provider"]
CONSOLE = {"console": True, "console_token": "console-secret", "console_approvals": True}


async def test_an_approval_answered_on_replica_b_completes_the_call_waiting_on_replica_a(
    tmp_path: Path, postgres_dsn: str
) -> None:
    dsn = postgres_schema_dsn(postgres_dsn)
    fleet = {"providers": ["counting"], **CONSOLE}
    async with (
        replica(tmp_path, dsn, "a", **fleet) as (host_a, url_a),
        replica(tmp_path, dsn, "b", **fleet) as (host_b, _),
        Client(url_a) as client,  # declares no elicitation: the console is asked
    ):
        queue_b = host_b.console.approvals.queue
        assert queue_b is not None
        approved = asyncio.ensure_future(client.call_tool("run_command", {"command": "ls"}))
        (listed,) = await queue_b.wait_pending()
        assert host_b.console.approvals.pending() == []  # nothing of A's waits in B's process
        headers = {"Authorization": "Bearer console-secret"}
        assert host_b.console_url is not None
        async with httpx.AsyncClient(base_url=f"{host_b.console_url}/api", headers=headers) as b:
            shown = (await b.get("/approvals")).json()
            answered = await b.post(f"/approvals/{listed['id']}", json={"decision": "approve"})
            again = await b.post(f"/approvals/{listed['id']}", json={"decision": "deny"})
            result = await approved
            refused = asyncio.ensure_future(client.call_tool("run_command", {"command": "rm"}))
            (second,) = await queue_b.wait_pending()
            denied = await b.post(f"/approvals/{second['id']}", json={"decision": "deny"})
            refusal = await refused
        async with httpx.AsyncClient(base_url=f"{host_a.console_url}/api", headers=headers) as a:
            audit = (await a.get("/approvals/history")).json()  # the same audit on A
        assert await host_a.console.approvals.listing() == []
    assert [item["tool_name"] for item in shown] == ["run_command"]
    assert shown[0]["instance"] == "a" and shown[0]["args"] == {"command": "ls"}
    assert answered.status_code == 200 and again.status_code == 404  # taken once
    assert _text(result) == "ran ls" and RUNS["ls"] == 1
    assert denied.status_code == 200 and refusal.is_error and "rm" not in RUNS
    assert [(row["tool_name"], row["status"], row["instance"]) for row in audit] == [
        ("run_command", "deny", "a"),
        ("run_command", "approve", "a"),
    ]
    assert all(row["decided_by"] == "console on b from 127.0.0.1" for row in audit)


async def test_what_a_killed_run_left_waiting_is_abandoned_when_its_replica_starts_again(
    postgres_dsn: str,
) -> None:
    dsn = postgres_schema_dsn(postgres_dsn)
    killed, other = (
        PostgresApprovalQueue(dsn, instance="a"),
        PostgresApprovalQueue(dsn, instance="b"),
    )
    shown = {"id": "x1", "tool_name": "deploy", "args": {}}
    await killed.add("x1", "client-1", shown)
    await other.add("y1", "client-2", {**shown, "id": "y1"})
    await killed.close()  # its process ends (closing leaves its rows as they are)
    restarted = PostgresApprovalQueue(dsn, instance="a")
    await restarted.start()
    try:
        assert [item["id"] for item in await restarted.pending()] == ["y1"]  # b's still waits
        assert not await restarted.decide("x1", "approve", "admin")  # nobody runs it now
        assert [(row["id"], row["status"]) for row in await restarted.history(5)] == [
            ("x1", "abandoned")
        ]
        assert await restarted.full("client-2", max_pending=10, max_per_client=1)
        assert not await restarted.full("client-3", max_pending=10, max_per_client=1)
    finally:
        await asyncio.gather(restarted.close(), other.close())
