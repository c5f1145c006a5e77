"""An approval asked of a 2026-07-28 client through an input-required round: the retry goes on
with the same call, so the daily quota and the query log count it once and PreToolUse hooks run
once, and so do PermissionRequest and Notification hooks (once per approval the call asks);
answers sent without the `requestState` they answer are refused. Driven by the official
MCP SDK client (2026 mode) and raw HTTP for the malformed retry."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
from mcp.client import Client

from tests.host.test_governance import (  # the governed provider, registered per test
    Elicitor,
    _provider,  # noqa: F401
    _serve,
    _text,
)
from toolweave.accounting.calls import PAUSED_ERROR, AccountingSettings, open_query_log

_MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
}
_HEADERS = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call"}


def _counting_hook(tmp_path: Path) -> Path:
    """A PreToolUse hook on run_command that appends one line per run to `runs.txt`."""
    hooks = tmp_path / "hooks.json"
    command = f"echo ran >> {tmp_path / 'runs.txt'}"
    entry = {"matcher": "run_command", "hooks": [{"type": "command", "command": command}]}
    hooks.write_text(json.dumps({"hooks": {"PreToolUse": [entry]}}))
    return tmp_path / "runs.txt"


async def test_an_approved_2026_call_counts_once_logs_once_and_hooks_once(tmp_path: Path) -> None:
    runs = _counting_hook(tmp_path)
    data = tmp_path / "data"
    serve = {
        "hooks": "hooks.json",
        "data_dir": str(data),
        "query_log": True,
        "daily_calls_per_client": 2,  # counted twice, the second call would be refused
    }
    async for url in _serve(tmp_path, serve):
        yes = Elicitor("accept", {})
        async with Client(url, mode="auto", elicitation_callback=yes) as client:
            first = await client.call_tool("run_command", {"command": "make 构建"})
            second = await client.call_tool("run_command", {"command": "make test"})
            third = await client.call_tool("run_command", {"command": "make all"})
    assert len(yes.messages) == 2  # each call asked once
    assert _text(first) == "ran make 构建" and _text(second) == "ran make test"
    assert third.is_error and "daily_calls_per_client" in _text(third)
    assert runs.read_text().splitlines() == ["ran", "ran"]  # the hook ran once per call
    log = open_query_log(AccountingSettings(data_dir=data, query_log=True))
    try:
        rows = await log.recent(10)
    finally:
        await log.close()
    finished = sorted((row.input, row.status) for row in rows if row.status == "success")
    assert finished == [
        ('run_command {"command": "make test"}', "success"),
        ('run_command {"command": "make 构建"}', "success"),
    ]
    assert len(rows) == 3 and all(PAUSED_ERROR not in row.error for row in rows)


async def test_permission_request_and_notification_hooks_run_once_per_approval(
    tmp_path: Path,
) -> None:
    """The approval is asked in one round and answered in the retry: each of its hooks ran in
    the first round only (before, the retry ran them again)."""
    log = tmp_path / "hooks.log"
    hooks = {
        event: [{"matcher": matcher, "hooks": [{"type": "command", "command": command}]}]
        for event, matcher, command in (
            ("PermissionRequest", "run_command", f"echo permission >> {log}"),
            ("Notification", "permission_prompt", f"echo notified >> {log}"),
        )
    }
    (tmp_path / "hooks.json").write_text(json.dumps({"hooks": hooks}))
    serve = {"hooks": "hooks.json", "data_dir": str(tmp_path / "data")}
    async for url in _serve(tmp_path, serve):
        yes = Elicitor("accept", {})
        async with Client(url, mode="auto", elicitation_callback=yes) as client:
            first = await client.call_tool("run_command", {"command": "make 构建"})
            second = await client.call_tool("run_command", {"command": "make test"})
    assert _text(first) == "ran make 构建" and _text(second) == "ran make test"
    assert len(yes.messages) == 2
    assert log.read_text().splitlines() == ["permission", "notified"] * 2


async def test_an_unanswered_round_is_logged_as_waiting_and_counted_once(tmp_path: Path) -> None:
    data = tmp_path / "data"
    serve = {"data_dir": str(data), "query_log": True, "daily_calls_per_client": 1}
    params = {"name": "run_command", "arguments": {"command": "make"}, "_meta": _MODERN_META}
    headers = {**_HEADERS, "Mcp-Name": "run_command"}
    async for url in _serve(tmp_path, serve):
        async with httpx.AsyncClient() as http:
            body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
            asked = (await http.post(url, json=body, headers=headers)).json()["result"]
            answers = {key: {"action": "accept", "content": {}} for key in asked["inputRequests"]}
            retry = {**params, "inputResponses": answers, "requestState": asked["requestState"]}
            body = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": retry}
            done = (await http.post(url, json=body, headers=headers)).json()["result"]
    assert asked["resultType"] == "input_required"
    assert done["content"][0]["text"] == "ran make" and not done.get("isError")
    log = open_query_log(AccountingSettings(data_dir=data, query_log=True))
    try:
        rows = await log.recent(10)
    finally:
        await log.close()
    assert [(row.status, row.error) for row in rows] == [("success", "")]


async def test_input_responses_without_a_request_state_are_refused(tmp_path: Path) -> None:
    params = {
        "name": "run_command",
        "arguments": {"command": "rm -rf build"},
        "_meta": _MODERN_META,
        "inputResponses": {"elicitation-1": {"action": "accept", "content": {}}},
    }
    headers = {**_HEADERS, "Mcp-Name": "run_command"}
    async for url in _serve(tmp_path, {"data_dir": str(tmp_path / "data")}):
        async with httpx.AsyncClient() as http:
            body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
            answer = (await http.post(url, json=body, headers=headers)).json()
    error = answer["error"]
    assert error["code"] == -32602
    assert "params.inputResponses" in error["message"]
    assert "params.requestState" in error["message"]
