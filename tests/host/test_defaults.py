"""The host's defaults work with a client that cannot answer elicitation (the official MCP SDK
client in its default mode and in legacy mode): read-only actions of the all-in-one `note`, `kb`
and `memory` tools, and writes to the host's own stores, run unasked; a destructive action is
refused with the exact `[serve.rules]` line that allows it. Also the per-action decision in
plan mode (memory searching is read-only; adding is not)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import types
from mcp.client import Client

from tests.host.test_governance import _port, serve_config
from toolweave.governance import CallBlocked, GateContext, Governance
from toolweave.host import parse_config
from toolweave.kb import NoteStore, NoteTool
from toolweave.memory import MemoryManager
from toolweave.memory.tool import MemoryTool
from toolweave.tools.base import call_annotations


async def _serve_defaults() -> AsyncIterator[str]:
    """A host with no toolweave.toml settings beyond where it listens: `make run`'s config."""
    async for url in serve_config(parse_config({"serve": {"transport": "http", "port": _port()}})):
        yield url


def _text(result: Any) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_default_host_serves_reads_and_its_own_writes_unasked(
    temporary_home: Path, mode: str
) -> None:
    async for url in _serve_defaults():
        async with Client(url, mode=mode) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            stats = await client.call_tool("kb", {"action": "stats"})
            created = await client.call_tool(
                "note", {"action": "create", "title": "计划", "content": "先读后写。"}
            )
            remembered = await client.call_tool(
                "memory", {"action": "add", "content": "用户喜欢简短的回答"}
            )
            found = await client.call_tool("memory", {"action": "search", "query": "简短"})
            listed = await client.call_tool("note", {"action": "list"})
            note_id = json.loads(_text(created))["created"]["id"]
            deleted = await client.call_tool("note", {"action": "delete", "note_id": note_id})
        for result in (listed, stats, created, remembered, found):
            assert not result.is_error, _text(result)
        assert "简短" in _text(found)
        assert json.loads(_text(listed))["notes"][0]["file"] == f"{note_id}.md"
        for result in (listed, stats, created, remembered, found, deleted):  # no host paths
            assert str(temporary_home) not in _text(result), _text(result)
        # Nothing published that cannot be used: no skills, so no skill_read & co.; the served
        # kb tool has no file roots, so no file_path.
        assert not {"skill_read", "skill_resource", "skill_data", "skill_run"} & set(tools)
        assert "file_path" not in tools["kb"].input_schema["properties"]
        assert "action" in tools["kb"].input_schema["properties"]
        assert deleted.is_error
        refusal = _text(deleted)
        assert "note" in refusal and '[serve.rules] allow = ["note"]' in refusal
        assert (temporary_home / ".toolweave" / "notes").is_dir()


async def test_plan_mode_lets_memory_and_notes_read_and_blocks_their_writes(
    tmp_path: Path,
) -> None:
    governance = Governance()
    plan = GateContext("s1", mode="plan")
    async with MemoryManager(tmp_path / "memory.db", embedder="hash") as manager:
        memory = MemoryTool(manager)
        governance.precheck("memory", memory, plan, {"action": "search", "query": "x"})
        governance.precheck("memory", memory, plan, {"action": "stats"})
        with pytest.raises(CallBlocked) as blocked:
            governance.precheck("memory", memory, plan, {"action": "add", "content": "x"})
        assert blocked.value.stage == "plan"
    note = NoteTool(NoteStore(tmp_path / "notes"))
    governance.precheck("note", note, plan, {"action": "list"})
    with pytest.raises(CallBlocked):
        governance.precheck("note", note, plan, {"action": "delete", "note_id": "n1"})
    with pytest.raises(CallBlocked):  # an action the tool does not know keeps the whole tool's
        governance.precheck("note", note, plan, {"action": "frobnicate"})
    assert call_annotations(note, {"action": "read"}).read_only
    assert call_annotations(note, {"action": "delete"}).destructive
    assert not call_annotations(note, {"action": "create"}).destructive
    assert call_annotations(note, None) == note.annotations
