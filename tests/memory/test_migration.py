"""docs/memory.md's migration from SQLite to Postgres + Qdrant, run as written."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

from toolweave.memory import MemoryManager
from toolweave.storage.retrieval import Embedder, IndexSettings

DOCS = Path(__file__).resolve().parents[2] / "docs" / "memory.md"


def migrate_function() -> Any:
    block = next(
        b
        for b in re.findall(r"```python\n(.*?)```", DOCS.read_text(), re.DOTALL)
        if "def migrate" in b
    )
    namespace: dict[str, Any] = {}
    exec(compile(block, str(DOCS), "exec"), namespace)
    return namespace["migrate"]


async def test_the_documented_migration_moves_everything(
    tmp_path: Path, postgres_dsn: str, embedder: Embedder, monkeypatch: Any
) -> None:
    sqlite_path = str(tmp_path / "memory.db")
    alice = MemoryManager(sqlite_path, user_id="alice", embedder=embedder)
    paris = await alice.add("Alice lives in Paris.", "semantic")
    london = await alice.add("Alice lives in London.", "semantic")
    await alice.add("周一和团队讨论了预算", "episodic", 0.7, {"room": "A1"})
    await alice.for_user("bob").add("Bob 喜欢乌龙茶", "episodic")
    await alice.close()

    # The doc's MemoryManager calls use the defaults; point them at this test's services.
    table = f"mig_{tmp_path.name[-8:].lower().replace('-', '_')}"
    qdrant = str(tmp_path / "qdrant")

    def manager(path: Any = "memory.db", **kwargs: Any) -> MemoryManager:
        if "index" in kwargs:
            index = dataclasses.replace(kwargs["index"], qdrant_url=None, qdrant_path=qdrant)
            kwargs.update(index=index, table=table)
        return MemoryManager(path, embedder=embedder, **kwargs)

    migrate = migrate_function()
    monkeypatch.setitem(migrate.__globals__, "MemoryManager", manager)
    moved = await migrate(sqlite_path, postgres_dsn, "http://unused:6333", batch=2)
    assert moved == 4

    target = MemoryManager(
        user_id="alice",
        embedder=embedder,
        index=IndexSettings(dsn=postgres_dsn, qdrant_path=qdrant),
        table=table,
    )
    old = await target.get(paris)
    assert old is not None and old.superseded_by == london
    hits = await target.search("预算", limit=1)
    assert hits[0].item.metadata == {"room": "A1"}
    found = await target.search("Where does Alice live?", memory_types=["semantic"], limit=5)
    assert [h.item.content for h in found] == ["Alice lives in London."]
    assert (await target.for_user("bob").stats())["types"]["episodic"]["count"] == 1
    await target.close()
