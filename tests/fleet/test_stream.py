"""A replica SIGKILLed in the middle of a streamed tool call (a 2025-era session, its events in
the shared Postgres event store): the client resumes the stream through HAProxy with
`Last-Event-ID`, which reaches the other replica; it replays the events the client missed, and
when the killed replica comes back it ends the stream it left with an error saying the call did
not finish. Each event arrives exactly once, and the tool ran once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import psycopg

from tests.fleet.harness import Fleet, needs_haproxy
from tests.mcp.server.test_postgres_events import events, open_session
from tests.postgres_server import Cluster
from toolweave.mcp.server.postgres_events import CHANNEL

pytestmark = needs_haproxy


async def test_a_stream_cut_by_a_killed_replica_resumes_on_another_and_ends_once(
    tmp_path: Path, fleet_cluster: Cluster
) -> None:
    call = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {
            "name": "count",
            "arguments": {"call_id": "streamed", "steps": 3, "seconds": 600},
            "_meta": {"progressToken": "p"},
        },
    }
    seen: list[tuple[str, dict[str, Any]]] = []
    async with (
        Fleet(tmp_path, fleet_cluster, replicas=2) as fleet,
        httpx.AsyncClient(timeout=60) as http,
    ):
        killed = fleet.replicas[0]
        headers = await open_session(http, killed.url)
        stored = await psycopg.AsyncConnection.connect(fleet.dsn, autocommit=True)
        await stored.execute(f"LISTEN {CHANNEL}")  # each event the store writes is NOTIFYed
        async with http.stream("POST", killed.url, headers=headers, json=call) as first:
            async for event in events(first):
                seen.append(event)
                if len(seen) == 2:
                    break  # the client read two progress events and lost the connection
        async with stored:
            async for _ in stored.notifies(stop_after=3):
                pass  # the third progress event is stored too: now the replica dies
        await killed.kill()
        await fleet.until("r0", "DOWN")
        resume = {**headers, "Accept": "text/event-stream", "Last-Event-ID": seen[-1][0]}
        async with http.stream("GET", fleet.url, headers=resume) as rest:
            async for event in events(rest):
                seen.append(event)
                if len(seen) == 3:  # the missed event, replayed by r1: now r0 comes back
                    await killed.start()
        runs = await fleet.runs()
    stream_id = seen[0][0].rpartition(".")[0]
    assert [event_id for event_id, _ in seen] == [f"{stream_id}.{n}" for n in range(1, 5)]
    assert [message["params"]["progress"] for _, message in seen[:3]] == [1, 2, 3]
    assert seen[3][1]["id"] == 7
    assert seen[3][1]["error"]["message"] == (
        "the replica 'r0' stopped before answering this request; "
        "the call did not finish (it may have run in part)"
    )
    assert runs == {"streamed": 1}
