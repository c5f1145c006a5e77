"""`HybridToolIndex`: tool search on the retrieval layer (`toolweave.tools.search.ToolIndex`).

Each tool's text (`tool_text`: name words, title, description, parameters) is a record of a
`TextIndex`, so tool search gets what memory and the knowledge base have: FTS5 over
jieba-segmented text (Chinese words, snake_case split as unicode61 splits it) fused with vectors
from the same embedders (`embedder="e5"` finds an English-described tool from a Chinese query),
on embedded SQLite (in memory by default) or on Postgres + Qdrant (pass that index). The default
index fuses with `TOOL_SEARCH_FUSION`, measured on a public tool-retrieval set.

The index follows the registry it serves: every search first writes the tools whose text changed
since they were indexed (a digest per tool; only tool objects it has not read yet are read),
then searches only among the names it was handed, so a removed tool, or one this caller may not
use that another caller's search indexed, is never returned. Records of removed tools stay until
`close` (a few hundred bytes each): the candidates differ per caller, so absence from one search
says nothing about the registry.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from toolweave.storage.retrieval.embedders import Embedder
from toolweave.storage.retrieval.fusion import FusionWeights
from toolweave.storage.retrieval.index import Record, SearchMode, TextIndex, check_mode
from toolweave.storage.retrieval.sqlite_index import SQLiteTextIndex
from toolweave.tools.search import Searchable, ToolMatch, text_digest, tool_text

TOOL_COLLECTION = "tools"
"""The index collection tool records live in."""
TOOL_SEARCH_FUSION = FusionWeights(latin=0.2, cjk=0.05)
"""The vector weight of the default index's hybrid search, chosen on the tune halves of two
public sets (benchmarks/tool_search.py) for the larger smallest lead over BM25 (held-out
recall@5: +8.1 and +4.0 points, docs/tools.md). Their queries differ:
MetaTool's name a task in other words than the tool's (WordLlama's vectors alone: recall@5 0.72,
keywords 0.60), Seal-Tools' repeat the tool's words (keywords 0.88, vectors 0.64). Recall@5 over
bm25s's, MetaTool / Seal-Tools: w = 0.2 +6.4 / +8.5 points, 0.3 +7.2 / +5.5, 0.4 +9.4 / +2.2,
0.8 +13 / -6.6. Chinese keeps the passages' 0.05 (WordLlama reads no Chinese)."""


class HybridToolIndex:
    """Ranks tools with a `TextIndex` (see the module docstring). `index` is an opened index
    to keep the records in (a shared Postgres + Qdrant one, say); by default an in-memory
    SQLite index with `embedder`. `mode` is "hybrid", "keyword" or "vector"."""

    def __init__(
        self,
        index: TextIndex | None = None,
        *,
        embedder: Embedder | str = "auto",
        mode: SearchMode = "hybrid",
    ) -> None:
        check_mode(mode)
        self.index: TextIndex = index or SQLiteTextIndex(
            ":memory:",
            embedder,
            name="tools",
            indexed_fields=("name",),
            hnsw_threshold=None,
            fusion=TOOL_SEARCH_FUSION,
        )
        self.mode: SearchMode = mode
        self._digests: dict[str, str] = {}
        self._read: dict[str, Searchable] = {}
        self._lock = asyncio.Lock()

    async def sync(self, tools: Sequence[Searchable]) -> None:
        """Write the tools whose text changed since they were indexed (one transaction). A
        tool object already read is not read again (the registry replaces a changed tool with
        another object; one changed in place is not re-read)."""
        async with self._lock:
            fresh = [tool for tool in tools if self._read.get(tool.name) is not tool]
            texts = {tool.name: tool_text(tool) for tool in fresh}
            changed = [
                Record(name, text, {"name": name, "digest": digest}, TOOL_COLLECTION)
                for name, text in texts.items()
                if self._digests.get(name) != (digest := text_digest(text))
            ]
            if changed:
                await self.index.write(changed)
            self._digests.update({r.id: r.payload["digest"] for r in changed})
            self._read.update({tool.name: tool for tool in fresh})

    async def search(
        self, query: str, tools: Sequence[Searchable], k: int, *, explain: bool = False
    ) -> list[ToolMatch]:
        if not tools or k < 1:
            return []
        await self.sync(tools)
        hits = await self.index.search(
            query,
            limit=k,
            collection=TOOL_COLLECTION,
            where={"name": sorted(tool.name for tool in tools)},
            mode=self.mode,
        )
        return [
            ToolMatch(
                hit.record.id,
                hit.score,
                {
                    "mode": self.mode,
                    "keyword_rank": hit.keyword_rank,
                    "keyword_score": hit.keyword_score,
                    "vector_score": hit.vector_score,
                }
                if explain
                else None,
            )
            for hit in hits
        ]

    async def close(self) -> None:
        await self.index.close()
