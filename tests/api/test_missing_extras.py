"""A feature whose extra is not installed raises `MissingDependency` (a `ToolweaveError` and an
`ImportError`) naming the feature and the `pip install` that fixes it, not a bare
`ModuleNotFoundError` from deep inside. A module set to None in `sys.modules` is one that
cannot be imported, as when the package is absent."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from toolweave import MissingDependency, ToolweaveError
from toolweave.kb import KnowledgeBase
from toolweave.mcp import MCPServer
from toolweave.memory import MemoryManager


async def test_memory_add_names_the_memory_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    manager = MemoryManager(tmp_path / "m.db", embedder="hash")
    monkeypatch.setitem(sys.modules, "numpy", None)
    try:
        with pytest.raises(MissingDependency) as caught:
            await manager.add("记住这个")
        with pytest.raises(MissingDependency):
            await manager.search("记住")
    finally:
        monkeypatch.undo()
        await manager.close()
    error = caught.value
    assert isinstance(error, ToolweaveError) and isinstance(error, ImportError)
    assert str(error) == (
        "MemoryManager.add needs 'numpy', which is not installed: pip install 'toolweave[memory]'"
    )


async def test_kb_add_text_names_the_kb_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kb = KnowledgeBase(tmp_path / "kb.db", "hash")
    monkeypatch.setitem(sys.modules, "rjieba", None)
    try:
        with pytest.raises(MissingDependency, match=r"pip install 'toolweave\[kb\]'") as caught:
            await kb.add_text("# 端口\n\n默认端口是 8765。")
    finally:
        monkeypatch.undo()
        await kb.close()
    assert "KnowledgeBase.add_text needs 'rjieba'" in str(caught.value)


def test_http_serving_names_the_server_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "starlette", None)
    with pytest.raises(MissingDependency, match=r"pip install 'toolweave\[server\]'") as caught:
        MCPServer("x").run("http", port=0)
    assert str(caught.value).startswith("MCPServer.run(\"http\") needs 'starlette'")
