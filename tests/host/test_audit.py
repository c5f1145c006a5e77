"""Served calls as an audit: each call's client and outcome (ran, failed, refused by which
stage) and each elicited approval decision land in the host's query log, and `toolweave log`
filters them; driven by the official MCP SDK client in its 2026 and legacy modes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp.client import Client
from typer.testing import CliRunner

from tests.host.test_governance import Elicitor, GovernedProvider, _port, serve_config
from toolweave.cli import app
from toolweave.host.config import load_host_config
from toolweave.host.providers import base as host_providers

pytestmark = pytest.mark.usefixtures("_provider")


@pytest.fixture
def _provider(monkeypatch: pytest.MonkeyPatch) -> None:
    target = f"{GovernedProvider.__module__}:GovernedProvider"
    monkeypatch.setitem(host_providers.PROVIDERS, "governed", target)


def _log(toml: Path, *args: str) -> list[dict[str, Any]]:
    result = CliRunner().invoke(app, ["log", "--config", str(toml), "--json", *args])
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.output.splitlines()]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_served_calls_and_approvals_are_an_audit(tmp_path: Path, mode: str) -> None:
    toml = tmp_path / "toolweave.toml"
    toml.write_text(
        f'[serve]\nproviders = ["governed"]\ntransport = "http"\nport = {_port()}\n'
        f'data_dir = "{tmp_path / "data"}"\n'
        '[serve.rules]\ndeny = ["run_command(rm *)"]\n',
        encoding="utf-8",
    )
    config = load_host_config(toml)
    async for url in serve_config(config):
        yes, no = Elicitor("accept", {}), Elicitor("decline")
        async with Client(url, mode=mode, elicitation_callback=yes) as client:
            assert not (await client.call_tool("run_command", {"command": "make 构建"})).is_error
            assert not (await client.call_tool("status", {})).is_error
            assert (await client.call_tool("run_command", {"command": "rm -rf /"})).is_error
        async with Client(url, mode=mode, elicitation_callback=no) as client:
            assert (await client.call_tool("run_command", {"command": "make"})).is_error
    rows = _log(toml)
    # A 2026 client's approval round continues the same call: one row, finished by the retry.
    assert _log(toml, "--outcome", "asked") == []
    assert [(r["tool"], r["outcome"]) for r in rows] == [
        ("run_command", "refused:approval"),
        ("run_command", "refused:rules"),
        ("status", "ran"),
        ("run_command", "ran"),
    ]
    assert {r["client"] for r in rows} == {"address:loopback"}
    assert [r["input"] for r in _log(toml, "--outcome", "refused:approval")] == [
        'run_command {"command": "make"}'
    ]
    assert len(_log(toml, "--outcome", "refused", "--tool", "run_command")) == 2
    assert [r["tool"] for r in _log(toml, "--tool", "status", "--since", "1h")] == ["status"]
    assert (
        len(_log(toml, "--client", "loopback")) == len(_log(toml))
        and _log(toml, "--client", "bob") == []
    )
    decisions = _log(toml, "--approvals")
    assert [(d["decision"], d["args"]) for d in decisions] == [
        ("denied", '{"command": "make"}'),
        ("approved", '{"command": "make 构建"}'),
    ]
    assert {d["decided_by"] for d in decisions} == {"elicitation:address:loopback"}
    assert all(d["asked"] <= d["decided"] and d["kind"] == "user" for d in decisions)
    bad = CliRunner().invoke(app, ["log", "--config", str(toml), "--outcome", "maybe"])
    assert bad.exit_code == 2 and "refused:<stage>" in bad.output
