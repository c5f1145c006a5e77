"""Memory's identity and bounds: an argument narrows the caller's identity but never changes
it (served over stdio and over HTTP with a token, through the official MCP SDK client), one
content bound on every write path, and a capped search query."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from toolweave.kb import KnowledgeBaseError
from toolweave.kb.notes import MAX_NOTE_FIELD_CHARS, NoteStore
from toolweave.memory import MemoryArgumentError, MemoryManager
from toolweave.memory.manager import DEFAULT_MAX_QUERY_CHARS
from toolweave.memory.types import MAX_CONTENT_CHARS
from toolweave.storage.retrieval import Embedder, IndexSettings

TOOLWEAVE = Path(sys.executable).with_name("toolweave")


def error_text(result: Any) -> str:
    assert result.is_error
    return str(result.content[0].text)


async def test_served_user_id_narrows_the_meta_identity_never_changes_it(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (tmp_path / "toolweave.toml").write_text(
        f'[serve]\nproviders = ["memory"]\ndata_dir = "{data.as_posix()}"\n'
    )
    params = StdioServerParameters(
        command=str(TOOLWEAVE),
        args=["serve", "--stdio", "-c", "toolweave.toml"],
        cwd=tmp_path,
        env=dict(os.environ),
    )
    bob = {"toolweave/user_id": "bob"}
    alice = {"toolweave/user_id": "alice"}
    async with Client(params, mode="auto") as client:
        await client.call_tool(
            "memory", {"action": "add", "content": "Bob 的银行密码提示"}, meta=bob
        )
        stolen = await client.call_tool(
            "memory", {"action": "search", "query": "银行密码", "user_id": "bob"}, meta=alice
        )
        narrowed = await client.call_tool(
            "memory",
            {"action": "add", "content": "工作笔记", "user_id": "alice/work"},
            meta=alice,
        )
        own = await client.call_tool(
            "memory", {"action": "search", "query": "银行密码", "user_id": "bob"}, meta=bob
        )
    assert "'bob' is not the caller's identity 'alice'" in error_text(stolen)
    assert not narrowed.is_error
    assert own.structured_content is not None and own.structured_content["count"] == 1


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.asynccontextmanager
async def http_serve(tmp_path: Path, token: str) -> AsyncIterator[str]:
    port = free_port()
    config = tmp_path / "toolweave.toml"
    config.write_text(
        f'[serve]\nproviders = ["memory"]\ndata_dir = "{(tmp_path / "data").as_posix()}"\n'
    )
    proc = await asyncio.create_subprocess_exec(
        *(
            str(TOOLWEAVE),
            "serve",
            "--http",
            f"127.0.0.1:{port}",
            "--token",
            token,
            "-c",
            str(config),
        ),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        cwd=tmp_path,
    )
    try:
        assert proc.stdout is not None
        line = b"."
        while line and b"Ctrl+C" not in line:  # the banner ends with it
            line = await proc.stdout.readline()
        assert line, "serve --http exited before it printed its banner"
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        await proc.wait()


async def test_served_over_http_the_token_is_the_identity(tmp_path: Path) -> None:
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    from toolweave.mcp.server._guards import token_principal

    token = "s3cret-令牌".encode().hex()
    principal = token_principal(token)
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        http_serve(tmp_path, token) as url,
        httpx2.AsyncClient(headers=headers) as http,
        Client(streamable_http_client(url, http_client=http), mode="legacy") as client,
    ):
        added = await client.call_tool("memory", {"action": "add", "content": "令牌持有人的记忆"})
        declared = await client.call_tool(
            "memory", {"action": "search", "query": "记忆"}, meta={"toolweave/user_id": "bob"}
        )
        argument = await client.call_tool(
            "memory", {"action": "search", "query": "记忆", "user_id": "default"}
        )
        scoped = await client.call_tool(
            "memory", {"action": "search", "query": "记忆", "user_id": f"{principal}/work"}
        )
    assert not added.is_error and not scoped.is_error
    assert f"'bob' is not the caller's identity {principal!r}" in error_text(declared)
    assert "never change it" in error_text(argument)
    assert scoped.structured_content is not None and scoped.structured_content["count"] == 0


@pytest.fixture
async def manager(tmp_path: Path, embedder: Embedder) -> AsyncIterator[MemoryManager]:
    opened = MemoryManager(tmp_path / "memory.db", embedder=embedder)
    yield opened
    await opened.close()


@pytest.mark.parametrize("memory_type", ["working", "episodic", "semantic"])
async def test_update_has_the_bound_add_has(manager: MemoryManager, memory_type: str) -> None:
    memory_id = await manager.add("小明喜欢喝乌龙茶", memory_type=memory_type)
    too_long = "长" * (MAX_CONTENT_CHARS + 1)
    with pytest.raises(MemoryArgumentError, match=r"MAX_CONTENT_CHARS"):
        await manager.add(too_long, memory_type=memory_type)
    with pytest.raises(MemoryArgumentError, match=r"MAX_CONTENT_CHARS"):
        await manager.update(memory_id, content=too_long)
    item = await manager.get(memory_id)
    assert item is not None and item.content == "小明喜欢喝乌龙茶"


async def test_search_query_length_is_capped_and_a_long_query_keeps_its_rarest_words(
    manager: MemoryManager, tmp_path: Path, embedder: Embedder
) -> None:
    """A query over `max_query_chars` is refused; one of more than `max_query_terms` distinct
    words is scored by its rarest words in the user's memories, not its first: the one word a
    memory holds, the 250th of 300, still finds it (the vector reads the whole query)."""
    memories = ["word250 appears here", "word1 word2 word3 are everywhere", "word1 again"]
    for content in memories:
        await manager.add(content, memory_type="episodic")
    with pytest.raises(MemoryArgumentError, match="max_query_chars"):
        await manager.search("x" * (DEFAULT_MAX_QUERY_CHARS + 1))
    long_query = " ".join(f"w{i}" if i != 250 else "word250" for i in range(1, 301))
    assert len(long_query) <= DEFAULT_MAX_QUERY_CHARS
    hits = await manager.search(long_query, mode="keyword")
    assert "word250 appears here" in [h.item.content for h in hits]
    narrow = MemoryManager(
        tmp_path / "narrow.db", embedder=embedder, index=IndexSettings(max_query_terms=1)
    )
    try:
        for content in memories:
            await narrow.add(content, memory_type="episodic")
        hits = await narrow.search("word1 word250", mode="keyword", explain=True)
        assert hits[0].item.content == "word250 appears here"  # word1 matches as a substring
        assert all(h.explanation and h.explanation["keyword_rank"] for h in hits)
    finally:
        await narrow.close()


async def test_note_titles_tags_and_types_share_one_bound(tmp_path: Path) -> None:
    store = NoteStore(tmp_path / "notes", embedder="hash")
    try:
        long = "题" * (MAX_NOTE_FIELD_CHARS + 1)
        with pytest.raises(KnowledgeBaseError, match="title: 201 characters"):
            await store.create(long, "正文")
        note = await store.create("会议纪要", "正文", tags=["工作"])
        for field in ({"title": long}, {"type": long}, {"tags": [long]}):
            with pytest.raises(KnowledgeBaseError, match="MAX_NOTE_FIELD_CHARS"):
                await store.update(note.id, **field)  # type: ignore[arg-type]
        assert (await store.read(note.id)).title == "会议纪要"
    finally:
        await store.close()
