"""Sampling and roots requests through the gateway (issue 34): a downstream toolkit server's
`ctx.sample` and `ctx.list_roots` (2026-07-28 over stdio, asked through input-required results)
reach the upstream client of the call, the way elicitation does: a request on a 2025 session, an
input-required round for a 2026 client (the downstream call held between the rounds). A client
that did not declare the capability gets -32021 naming it. Upstream: the official MCP SDK client
with its sampling and roots callbacks, in its default (2026) and legacy modes."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import types
from mcp.client import Client
from mcp.shared.exceptions import MCPError

from tests.host.serving import serving_gateway
from tests.host.test_gateway_elicitation import MODES, TOOLKIT, _text
from toolweave.mcp.shared.errors import MISSING_CLIENT_CAPABILITY

SUMMARIZE, FOLDERS = "toolkit__summarize", "toolkit__folders"
SERVERS = {"toolkit": {"command": sys.executable, "args": [str(TOOLKIT)]}}
ROOTS = [("alpha", "file:///work/projects/alpha"), ("beta", "file:///work/projects/beta")]


class Model:
    """The upstream client's model: answers every sampling request and records the prompts."""

    def __init__(self) -> None:
        self.prompts: list[str] = []

    async def __call__(
        self, context: Any, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        content = params.messages[0].content
        self.prompts.append(content.text if isinstance(content, types.TextContent) else "")
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="梅雨の季節は六月"),
            model="upstream-model",
            stop_reason="endTurn",
        )


async def list_roots(context: Any) -> types.ListRootsResult:
    return types.ListRootsResult(roots=[types.Root(uri=uri, name=name) for name, uri in ROOTS])


@pytest.mark.parametrize("mode", MODES)
async def test_sampling_and_roots_reach_the_upstream_client(tmp_path: Path, mode: str) -> None:
    model = Model()
    async with (
        serving_gateway(tmp_path, SERVERS, [SUMMARIZE, FOLDERS]) as url,
        Client(url, mode=mode, sampling_callback=model, list_roots_callback=list_roots) as client,
    ):
        summary = await client.call_tool(SUMMARIZE, {"text": "六月は雨が多い。"})
        folders = await client.call_tool(FOLDERS, {})
    assert not summary.is_error, _text(summary)
    assert _text(summary) == "summary (upstream-model): 梅雨の季節は六月"
    assert model.prompts == ["Summarize in one line: 六月は雨が多い。"]
    assert not folders.is_error, _text(folders)
    assert _text(folders) == "alpha=file:///work/projects/alpha, beta=file:///work/projects/beta"


@pytest.mark.parametrize("mode", MODES)
async def test_a_client_without_sampling_or_roots_gets_a_refusal_naming_it(
    tmp_path: Path, mode: str
) -> None:
    async with (
        serving_gateway(tmp_path, SERVERS, [SUMMARIZE, FOLDERS]) as url,
        Client(url, mode=mode) as client,
    ):
        with pytest.raises(MCPError) as no_sampling:
            await client.call_tool(SUMMARIZE, {"text": "x"})
        with pytest.raises(MCPError) as no_roots:
            await client.call_tool(FOLDERS, {})
    assert no_sampling.value.code == MISSING_CLIENT_CAPABILITY
    assert "did not declare the 'sampling' capability" in str(no_sampling.value)
    assert no_roots.value.code == MISSING_CLIENT_CAPABILITY
    assert "did not declare the 'roots' capability" in str(no_roots.value)
