"""`toolweave serve` publishes a server icon in its `serverInfo` (issue 34): the official MCP
SDK client sees it in its default (2026, `server/discover`) and legacy (`initialize`) modes, as
an inline SVG `data:` URI (nothing to fetch from anywhere)."""

from __future__ import annotations

import base64
from pathlib import Path
from xml.etree import ElementTree

import pytest
from mcp.client import Client

from tests.host.test_governance import _port, serve_config
from toolweave.host import parse_config

DATA_PREFIX = "data:image/svg+xml;base64,"


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_sdk_client_sees_the_hosts_icon(tmp_path: Path, mode: str) -> None:
    serve = {"providers": [], "transport": "http", "port": _port(), "data_dir": str(tmp_path)}
    config = parse_config({"serve": serve})
    async for url in serve_config(config):
        async with Client(url, mode=mode) as client:
            version = client.protocol_version
            info = client.server_info
    assert version == ("2026-07-28" if mode == "auto" else "2025-11-25")
    assert info is not None and info.name == "toolweave" and info.icons
    icon = info.icons[0]
    assert icon.mime_type == "image/svg+xml" and icon.sizes == ["any"]
    assert icon.src.startswith(DATA_PREFIX)
    svg = ElementTree.fromstring(base64.b64decode(icon.src.removeprefix(DATA_PREFIX)))
    assert svg.tag == "{http://www.w3.org/2000/svg}svg" and svg.get("viewBox") == "0 0 64 64"
