"""Input-required `requestState`s in a fleet: replicas sharing `[serve].state_key` and
`[serve].store_dsn` accept a state issued by another replica, and accept each state once across
the fleet (two real `toolweave serve` replicas, one real Postgres, raw 2026-07-28 requests)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.host.test_serve_fleet import replica
from tests.host.test_serve_sessions import RUNS, _provider
from tests.support import postgres_schema_dsn
from toolweave.errors import ConfigError
from toolweave.host import ToolHost, parse_config

__all__ = ["_provider"]
KEY = "a-fleet-wide-secret-of-32-bytes!"
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
}
HEADERS = {
    "MCP-Protocol-Version": "2026-07-28",
    "Mcp-Method": "tools/call",
    "Mcp-Name": "run_command",
}


def _call(request_id: int, **extra: Any) -> dict[str, Any]:
    params = {"name": "run_command", "arguments": {"command": "make"}, "_meta": META, **extra}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


async def test_a_state_from_replica_a_is_accepted_once_by_the_fleet(
    tmp_path: Path, postgres_dsn: str
) -> None:
    dsn = postgres_schema_dsn(postgres_dsn)
    fleet = {"providers": ["counting"], "state_key": KEY}
    async with (
        replica(tmp_path, dsn, "a", **fleet) as (host_a, url_a),
        replica(tmp_path, dsn, "b", **fleet) as (_, url_b),
        httpx.AsyncClient(timeout=30) as http,
    ):
        asked = (await http.post(url_a, json=_call(1), headers=HEADERS)).json()["result"]
        answers = {key: {"action": "accept", "content": {}} for key in asked["inputRequests"]}
        retry = {"inputResponses": answers, "requestState": asked["requestState"]}
        ran = (await http.post(url_b, json=_call(2, **retry), headers=HEADERS)).json()
        replays = [
            (await http.post(url, json=_call(3, **retry), headers=HEADERS)).json()
            for url in (url_a, url_b)
        ]
    assert asked["resultType"] == "input_required"
    assert ran["result"]["content"][0]["text"] == "ran make" and RUNS["make"] == 1
    for replay in replays:
        assert replay["error"]["code"] == -32602 and "already used" in replay["error"]["message"]
    assert not any("state_key" in note for note in host_a.notes)


def test_a_fleet_without_a_shared_state_key_is_told_and_a_short_key_refused(
    tmp_path: Path,
) -> None:
    source = tmp_path / "toolweave.toml"
    serve = {"providers": ["counting"], "store_dsn": "postgresql://db.internal/toolweave"}
    host = ToolHost(parse_config({"serve": serve}, source=source))
    assert any("[serve].state_key is not set" in note for note in host.notes)
    with pytest.raises(ConfigError, match=r"\[serve\].state_key is 5 bytes"):
        ToolHost(parse_config({"serve": {**serve, "state_key": "short"}}, source=source))
