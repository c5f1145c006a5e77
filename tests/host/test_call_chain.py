"""The governance scenario table through `toolweave serve`, driven by the official MCP SDK
client: the same rows, the same outcomes as through an agent (tests/governance). Rows that ask
a person use the legacy session mode, where the client answers by elicitation; the others run
in the SDK's default 2026 (stateless) mode. The issue's timeout case runs in both modes."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from mcp import types
from mcp.client import Client

from tests.governance.call_scenarios import (
    RAN,
    RULES,
    SCENARIOS,
    SLOW_ANSWER,
    TOOL_TIMEOUT,
    TOOLS,
    Scenario,
    hook_script,
)
from tests.host.serving import serving_http
from toolweave.agent.orchestration.circuit import CircuitBreaker
from toolweave.host import ToolHost, parse_config
from toolweave.host.providers import base as host_providers


class ChainProvider:
    name = "chain"

    def __init__(self, config: Any) -> None:
        self.config = config

    async def tools(self) -> list[Any]:
        return list(TOOLS)

    async def close(self) -> None:
        return None


@pytest.fixture(autouse=True)
def _provider(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(host_providers.PROVIDERS, "chain", f"{__name__}:ChainProvider")


@asynccontextmanager
async def serving(tmp_path: Path, **serve: Any) -> AsyncIterator[ToolHost]:
    """A host serving the table's tools with its rules, hooks and tool timeout over HTTP."""
    toml = tmp_path / "toolweave.toml"
    toml.write_text("")  # relative paths resolve against tmp_path
    hooks = hook_script(tmp_path)
    table = {
        "providers": ["chain"],
        "transport": "http",
        "port": 0,
        "rules": RULES,
        "hooks": hooks.name,
        "tool_timeout": TOOL_TIMEOUT,
        "data_dir": str(tmp_path / "data"),
        **serve,
    }
    async with serving_http(ToolHost(parse_config({"serve": table}, source=toml))) as host:
        yield host


class Elicitor:
    """The person behind the client: answers after `delay` seconds."""

    def __init__(self, accept: bool, delay: float = 0.0) -> None:
        self.accept, self.delay = accept, delay
        self.messages: list[str] = []

    async def __call__(self, context: Any, params: Any) -> types.ElicitResult:
        self.messages.append(params.message)
        if self.delay:
            await asyncio.sleep(self.delay)  # the person's answer, not a wait for work
        if self.accept:
            return types.ElicitResult(action="accept", content={"always": False})
        return types.ElicitResult(action="decline")


def _text(result: Any) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


@pytest.mark.parametrize("row", SCENARIOS, ids=[row.name for row in SCENARIOS])
async def test_the_scenario_table_through_serve(row: Scenario, tmp_path: Path) -> None:
    RAN.clear()
    async with serving(tmp_path) as host:
        governance = host.governance.governance
        if row.mode is not None:
            governance = replace(governance, mode=row.mode)  # type: ignore[arg-type]
        if row.circuit_open:
            breaker = CircuitBreaker(failures=1)
            breaker.record("", row.tool, True)  # a stateless request has no session id
            governance = replace(governance, gates=(breaker,))
        host.governance.governance = governance
        elicitor = Elicitor(row.answer, row.delay) if row.answer is not None else None
        mode = "legacy" if elicitor is not None else "auto"
        async with Client(host.url, mode=mode, elicitation_callback=elicitor) as client:
            result = await client.call_tool(row.tool, row.args)
    assert ([row.ran] if row.ran is not None else []) == RAN
    assert result.is_error is row.error and row.text in _text(result)
    assert (len(elicitor.messages) if elicitor is not None else 0) == row.asked


async def test_an_approval_after_the_tool_timeout_runs_the_tool_in_2026_mode(
    tmp_path: Path,
) -> None:
    """The issue's case in the SDK's default mode: a stateless request cannot be asked, so the
    console's queue asks; the admin approves after the tool timeout, and the tool runs."""
    RAN.clear()
    async with (
        serving(tmp_path, console_approvals=True) as host,
        Client(host.url) as client,
    ):
        call = asyncio.ensure_future(client.call_tool("act", {"command": "make 构建"}))
        (pending,) = await host.console.approvals.wait_pending()
        await asyncio.sleep(SLOW_ANSWER)  # the admin's answer comes after the tool timeout
        host.console.approvals.answer(pending.id, "approve")
        result = await call
    assert not result.is_error and _text(result) == "ran make 构建"
    assert RAN == ["make 构建"]


async def test_an_approval_after_the_tool_timeout_runs_the_tool_in_legacy_mode(
    tmp_path: Path,
) -> None:
    RAN.clear()
    async with serving(tmp_path) as host:
        elicitor = Elicitor(True, SLOW_ANSWER)
        async with Client(host.url, mode="legacy", elicitation_callback=elicitor) as client:
            result = await client.call_tool("act", {"command": "make 构建"})
    assert not result.is_error and _text(result) == "ran make 构建"
    assert RAN == ["make 构建"] and len(elicitor.messages) == 1


async def test_the_tool_timeout_still_bounds_running_a_served_tool(tmp_path: Path) -> None:
    async with serving(tmp_path) as host, Client(host.url) as client:
        result = await client.call_tool("stall", {})
    assert result.is_error and f"timed out after {TOOL_TIMEOUT:g}s" in _text(result)
