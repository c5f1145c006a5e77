"""A 2025-era session while the fleet's Postgres is down: its messages are answered 503 with
`Retry-After` and an error naming the store (nothing runs), and once Postgres is back the same
session carries on, on any replica, without a replica restart."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.fleet.harness import Fleet, needs_haproxy
from tests.fleet.test_kill_sessions import _call, _open
from tests.postgres_server import Cluster

pytestmark = needs_haproxy


async def test_a_session_waits_out_a_postgres_restart_with_retryable_errors(
    tmp_path: Path, fleet_cluster: Cluster
) -> None:
    async with Fleet(tmp_path, fleet_cluster, replicas=2) as fleet:
        first, second = (replica.url for replica in fleet.replicas)
        async with httpx.AsyncClient(timeout=30) as http:
            headers = await _open(http, first)
            params = {"name": "count", "arguments": {"call_id": "before"}}
            body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
            before = await _call(http, second, headers, body)
            await fleet.stop_postgres()
            try:
                down = await http.post(second, headers=headers, json={**body, "id": 2})
            finally:
                await fleet.start_postgres()
            after = await _call(
                http,
                first,
                headers,
                {**body, "id": 2, "params": {**params, "arguments": {"call_id": "after"}}},
            )
            runs = await fleet.runs()
    assert before["result"]["content"][0]["text"] == "before ran on r1"
    assert down.status_code == 503 and down.headers["retry-after"] == "1"
    assert "retry" in down.json()["error"]["message"]
    assert after["result"]["content"][0]["text"] == "after ran on r0"
    assert runs == {"before": 1, "after": 1}
