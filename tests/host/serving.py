"""A `ToolHost` serving over loopback HTTP for the length of a block, for the host tests; and a
gateway host in front of given downstream servers; a host serving the example skills."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from toolweave.host import ToolHost, parse_config

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@asynccontextmanager
async def serving_http(host: ToolHost) -> AsyncIterator[ToolHost]:
    """`host` serving HTTP (its `url`) until the block ends; then stopped and closed."""
    ready = asyncio.Event()
    task = asyncio.ensure_future(host.serve_http(on_ready=lambda _port: ready.set()))
    await ready.wait()
    try:
        yield host
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await host.close()


@asynccontextmanager
async def serving_gateway(
    tmp_path: Path, servers: dict[str, dict[str, Any]], allow: list[str]
) -> AsyncIterator[str]:
    """The URL of a host with only `[mcpServers]` `servers` (their tools in `allow` run unasked),
    data in `tmp_path`, until the block ends."""
    config = parse_config(
        {
            "serve": {
                "providers": [],
                "transport": "http",
                "port": 0,
                "data_dir": str(tmp_path),
                "rules": {"allow": allow},
            },
            "mcpServers": servers,
        },
        source=tmp_path / "toolweave.toml",
    )
    async with serving_http(ToolHost(config)) as host:
        yield host.url


@asynccontextmanager
async def serving_skills(tmp_path: Path, **skills: Any) -> AsyncIterator[str]:
    """The URL of `toolweave serve` publishing the example skills (more `[skills]` keys in
    `skills`) until the block ends."""
    shutil.copytree(EXAMPLES / "skills", tmp_path / "skills")
    config = parse_config(
        {
            "serve": {
                "providers": ["skills"],
                "transport": "http",
                "port": 0,
                "data_dir": str(tmp_path / "data"),
            },
            "skills": {"roots": ["skills"], **skills},
        },
        source=tmp_path / "toolweave.toml",
    )
    async with serving_http(ToolHost(config)) as host:
        yield host.url
