"""`[memory.embed_retry]` and `[kb.embed_retry]`: a failing embedder's retry settings read from
`toolweave.toml` by `toolweave serve`, reaching the stores it serves, and refused with the key,
its line and the bound when a value is wrong."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from typer.testing import CliRunner

from tests.outage_embedder import Embeddings, Endpoint, endpoint, spec
from toolweave.host import ToolHost, load_host_config
from toolweave.host.providers.kb import KBProvider
from toolweave.host.providers.memory import MemoryProvider
from toolweave.storage.retrieval import EmbedRetry, SQLiteTextIndex

__all__ = ["endpoint"]  # the fixture

TOOLWEAVE = Path(sys.executable).with_name("toolweave")
MEMORY_RETRY = EmbedRetry(attempts=2, backoff=0.0, recheck=4321.0)
KB_RETRY = EmbedRetry(attempts=1, backoff=0.0, recheck=1234.0)


def write_config(tmp_path: Path, embedder: str, kb_retry: str | None = None) -> Path:
    """Memory and the knowledge base on `embedder`, each with its own retry table."""
    config = tmp_path / "toolweave.toml"
    config.write_text(
        '[serve]\nproviders = ["memory", "kb"]\n'
        f"data_dir = {json.dumps(str(tmp_path / 'data'))}\n\n"
        f"[memory]\nembedder = {json.dumps(embedder)}\n\n"
        "[memory.embed_retry]\nattempts = 2\nbackoff = 0\nrecheck = 4321\n\n"
        f"[kb]\nembedder = {json.dumps(embedder)}\n\n"
        + (kb_retry or "[kb.embed_retry]\nattempts = 1\nbackoff = 0.0\nrecheck = 1234.0\n"),
        encoding="utf-8",
    )
    return config


async def test_the_tables_reach_the_served_stores(tmp_path: Path, endpoint: Endpoint) -> None:
    host = ToolHost(load_host_config(write_config(tmp_path, spec(endpoint)), env={}))
    memory, kb = host.providers
    assert isinstance(memory, MemoryProvider) and isinstance(kb, KBProvider)
    await memory.tools()
    assert memory._manager is not None
    indexes = (memory._manager.index, kb.kb.index)
    await host.close()
    for index, retry in zip(indexes, (MEMORY_RETRY, KB_RETRY), strict=True):
        assert isinstance(index, SQLiteTextIndex) and index.guard.retry == retry
    default = ToolHost(load_host_config(write_config(tmp_path, "hash", kb_retry="\n"), env={}))
    assert isinstance(default.providers[1], KBProvider)
    assert default.providers[1].kb.index.guard.retry == EmbedRetry()  # no table: the defaults
    await default.close()


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_toolweave_serve_retries_as_configured_then_searches_by_keywords(
    tmp_path: Path, endpoint: Endpoint, mode: str
) -> None:
    config = write_config(tmp_path, spec(endpoint))
    params = StdioServerParameters(
        command=str(TOOLWEAVE), args=["serve", "--stdio", "--config", str(config)], cwd=tmp_path
    )
    async with Client(params, mode=mode) as client:  # type: ignore[arg-type]
        await client.list_tools()  # both stores open while the embedder answers
        Embeddings.fail_next, opened = 10**6, Embeddings.calls  # now every request gets 503
        await client.call_tool(
            "memory",
            {"action": "add", "content": "用户每天早上喝乌龙茶", "memory_type": "episodic"},
        )
        found = await client.call_tool("memory", {"action": "search", "query": "乌龙茶"})
        memory_calls = Embeddings.calls - opened
        await client.call_tool("kb_add", {"content": "# 茶\n\n乌龙茶用九十度的水。", "title": "茶"})
        hits = await client.call_tool("kb_search", {"query": "乌龙茶", "k": 1})
    # Each store tries `attempts` times, then keeps off the embedder for `recheck` seconds (the
    # search right after asks nothing).
    assert memory_calls == MEMORY_RETRY.attempts
    assert Embeddings.calls - opened - memory_calls == KB_RETRY.attempts
    assert found.structured_content is not None and hits.structured_content is not None
    assert "tried again after 4321 s" in found.structured_content["warning"]
    assert "tried again after 1234 s" in hits.structured_content["warning"]
    assert hits.structured_content["results"][0]["title"] == "茶"  # by keywords


def test_a_bad_value_is_refused_naming_the_key_its_line_and_the_bound(tmp_path: Path) -> None:
    from toolweave.cli import app

    bad = "[kb.embed_retry]\nattempts = 0\nbackof = 1.0\nrecheck = -1\n"
    config = write_config(tmp_path, "hash", kb_retry=bad)
    result = CliRunner().invoke(app, ["serve", "--stdio", "--config", str(config)])
    assert result.exit_code == 2 and "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 3  # every problem at once, each with its line
    expected = [
        "toolweave.toml:17: [kb.embed_retry].attempts: Input should be greater than or equal to 1,"
        " not 0",
        "toolweave.toml:18: [kb.embed_retry].backof is not a known key; the keys of"
        " [kb.embed_retry] are attempts, backoff, recheck",
        "toolweave.toml:19: [kb.embed_retry].recheck: Input should be greater than or equal to 0,"
        " not -1",
    ]
    for message in expected:
        assert any(message in line for line in lines), (message, lines)


def test_unbounded_retry_values_are_refused(tmp_path: Path) -> None:
    from toolweave.cli import app

    bad = "[kb.embed_retry]\nattempts = 11\nbackoff = inf\nrecheck = nan\n"
    config = write_config(tmp_path, "hash", kb_retry=bad)
    result = CliRunner().invoke(app, ["serve", "--stdio", "--config", str(config)])
    assert result.exit_code == 2 and "Traceback" not in result.stderr
    expected = [
        "toolweave.toml:17: [kb.embed_retry].attempts: Input should be less than or equal to 10",
        "toolweave.toml:18: [kb.embed_retry].backoff: Input should be a finite number",
        "toolweave.toml:19: [kb.embed_retry].recheck: Input should be a finite number",
    ]
    for message in expected:
        assert message in result.stderr, (message, result.stderr)
