"""`HybridToolIndex`: tool search on the retrieval layer (`toolweave.tools.search.ToolIndex`).

Each tool's text (`tool_text`: name words, title, description, parameters) is a record of a
`TextIndex`, so tool search gets what memory and the knowledge base have: FTS5 over
jieba-segmented text (Chinese words, snake_case split as unicode61 splits it) fused with vectors
from the same embedders (`embedder="e5"` finds an English-described tool from a Chinese query),
on embedded SQLite (in memory by default) or on Postgres + Qdrant (pass that index). A query
with CJK is matched on the keyword side as the registry's keyword index matches it
(`KeywordToolIndex`: BM25 over each CJK run's characters and character pairs, kept in memory
beside the index): tool texts are short, and jieba often cuts a query's run otherwise than the
same words inside a description ("订机票" against "预订机票"), which the pairs still match
(ACEBench's Chinese half, tune / held-out recall@5: jieba's words 0.942 / 0.950, characters and
pairs 0.966 / 0.982). Passage search keeps jieba's words (pairs cost it hit@1 on DRCD and
XQuAD-zh), so this is the tool index's own text analysis, that of `toolweave.tools.search`.

Hybrid search fuses per query (`ToolFusion`, constants chosen on the tune halves of public sets,
benchmarks/tool_search.py): a short request ("mail a letter") names a task in other words than
the tool's, so the vectors weigh much; a long one repeats the tool's words, so keywords do. A
request of several sentences ("Block device ABC123. Also get the engine RPM of vehicle 49.")
usually needs a tool per sentence: each sentence is searched too, and a tool ranks by its
score for the whole request plus its best score for one sentence. Every score is normalised
(keyword scores by the best, cosines by their range, a search's fused scores by its best), so
no choice depends on a backend's raw score scale.

The index follows the registry it serves: every search first writes the tools whose text changed
since they were indexed (a digest per tool; only tool objects it has not read yet are read),
then searches only among the names it was handed, so a removed tool, or one this caller may not
use that another caller's search indexed, is never returned (its own in-memory index, handed
every tool it holds, needs no filter and skips it). Records of removed tools stay until
`close` (a few hundred bytes each): the candidates differ per caller, so absence from one search
says nothing about the registry.
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
from collections.abc import Mapping, Sequence
from typing import Any

from toolweave.storage.errors import ConfigError
from toolweave.storage.retrieval.embedders import E5_NAME, USE_NAME, Embedder
from toolweave.storage.retrieval.fusion import (
    FUSION_POOL,
    FusionWeights,
    agreed_weight,
    crossed_weight,
    fuse_hits,
)
from toolweave.storage.retrieval.index import (
    IndexHit,
    Record,
    SearchMode,
    TextIndex,
    check_limit,
    check_mode,
)
from toolweave.storage.retrieval.sqlite_index import SQLiteTextIndex
from toolweave.storage.text import has_cjk, query_terms
from toolweave.tools.search import (
    KeywordToolIndex,
    Searchable,
    ToolMatch,
    text_digest,
    tool_text,
)

TOOL_COLLECTION = "tools"
"""The index collection tool records live in."""
TOOL_SEARCH_FUSION = FusionWeights(latin=0.2, cjk=0.05)
"""The vector weights stored with the default index (what its own `search` fuses with; the tool
index's hybrid search fuses per query with `ToolFusion` instead)."""
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|(?<=[。！？；])")
_SENTENCE_MIN_CHARS = 8
"""A piece shorter than this (and of fewer than three words) is no sentence of its own ("OK.")."""


@dataclasses.dataclass(frozen=True, slots=True)
class ToolFusion:
    """How `HybridToolIndex` weighs vectors against keywords, per query.

    `short` is the vector weight of a query of fewer than `long_terms` distinct words
    (`query_terms`: stop words left out), `long` of a longer one, and a query with CJK (of any
    length) has its embedder's weight in `cjk_by_embedder` (by `Embedder.name`), else `cjk`: an
    embedder that reads Chinese earns weight, one that does not (WordLlama) gets little. A
    query of two or more sentences is also searched sentence by sentence (at most
    `max_sentences` searches: the rest of a longer query is the last one), and a tool's score
    is its normalised score for the whole query plus `sentence_share` times its best for one
    sentence. Chosen on the tune halves of MetaTool, Seal-Tools and ACEBench English
    (benchmarks/tool_search.py, WordLlama vectors): recall@5 over bm25s, tune / held-out,
    MetaTool +11.3 / +10.3 points, Seal-Tools +15.4 / +12.2, ACEBench English +0.0 / +0.4; at a
    fixed weight of 0.2 without sentences +6.7 / +6.0, +7.5 / +4.0, +0.7 / +0.4. The Chinese
    weights on ACEBench's Chinese half (tune, 295 queries, recall@5; the keyword side alone
    0.966): e5 0.963 up to 0.1, 0.975 at 0.15, 0.978 at 0.2, 0.981 at 0.3 and 0.4, 0.976-0.980
    at 0.5-0.6; WordLlama 0.963-0.964 up to 0.15, 0.958 at 0.3, 0.842 at 0.8; the multilingual
    USE 0.963 at 0.05, 0.971 at 0.1, 0.978 at 0.2, 0.985 at 0.3, 0.983 at 0.5 (vectors alone
    0.899).
    """

    short: float = 0.8
    long: float = 0.1
    long_terms: int = 14
    cjk: float = 0.05
    cjk_by_embedder: Mapping[str, float] = dataclasses.field(
        default_factory=lambda: {E5_NAME: 0.3, USE_NAME: 0.3}
    )
    sentence_share: float = 1.0
    max_sentences: int = 8

    def __post_init__(self) -> None:
        for field in ("short", "long", "cjk"):
            value = getattr(self, field)
            if not isinstance(value, int | float) or not 0.0 <= value <= 1.0:
                raise ConfigError(f"ToolFusion.{field} must be a number from 0 to 1, not {value!r}")
        if not isinstance(self.sentence_share, int | float) or self.sentence_share < 0:
            raise ConfigError(
                f"ToolFusion.sentence_share must be a number of 0 or more, not"
                f" {self.sentence_share!r}"
            )
        for name, value in self.cjk_by_embedder.items():
            if not isinstance(value, int | float) or not 0.0 <= value <= 1.0:
                raise ConfigError(
                    f"ToolFusion.cjk_by_embedder[{name!r}] must be a number from 0 to 1, not"
                    f" {value!r}"
                )
        check_limit(self.long_terms, name="ToolFusion.long_terms")
        check_limit(self.max_sentences, name="ToolFusion.max_sentences")

    def weight(self, query: str, embedder: str = "") -> float:
        """The vector weight for `query` searched with vectors of `embedder` (its name): by the
        query's script, then by its length."""
        if has_cjk(query):
            return self.cjk_by_embedder.get(embedder, self.cjk)
        return self.short if len(query_terms(query)) < self.long_terms else self.long

    def sentences(self, query: str) -> list[str]:
        """The sentences of `query` searched on their own: none for a query of one sentence."""
        pieces = [p.strip() for p in _SENTENCE_END.split(query)]
        found = [p for p in pieces if len(p) >= _SENTENCE_MIN_CHARS or len(p.split()) >= 3]
        if len(found) < 2:
            return []
        head = self.max_sentences - 1
        return (
            found if len(found) <= self.max_sentences else [*found[:head], " ".join(found[head:])]
        )


DEFAULT_TOOL_FUSION = ToolFusion()


class HybridToolIndex:
    """Ranks tools with a `TextIndex` (see the module docstring). `index` is an opened index
    to keep the records in (a shared Postgres + Qdrant one, say); by default an in-memory
    SQLite index with `embedder`. `mode` is "hybrid", "keyword" or "vector"; `fusion` sets how
    hybrid search weighs the two per query (`ToolFusion`)."""

    def __init__(
        self,
        index: TextIndex | None = None,
        *,
        embedder: Embedder | str = "auto",
        mode: SearchMode = "hybrid",
        fusion: ToolFusion = DEFAULT_TOOL_FUSION,
    ) -> None:
        check_mode(mode)
        self._private = index is None
        if not isinstance(fusion, ToolFusion):
            raise ConfigError(f"HybridToolIndex fusion must be a ToolFusion, not {fusion!r}")
        self.index: TextIndex = index or SQLiteTextIndex(
            ":memory:",
            embedder,
            name="tools",
            indexed_fields=("name",),
            hnsw_threshold=None,
            fusion=TOOL_SEARCH_FUSION,
        )
        self.mode: SearchMode = mode
        self.fusion = fusion
        self._digests: dict[str, str] = {}
        self._read: dict[str, Searchable] = {}
        self._texts: dict[str, str] = {}
        self._chinese = KeywordToolIndex()
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
            self._texts.update(texts)

    async def search(
        self, query: str, tools: Sequence[Searchable], k: int, *, explain: bool = False
    ) -> list[ToolMatch]:
        if not tools or k < 1:
            return []
        await self.sync(tools)
        names = sorted(tool.name for tool in tools)
        # Every tool our own index holds (none removed, none only another caller may use): no
        # filter. An index handed in may hold tools others wrote (a shared store).
        every = self._private and len(names) == len(self._digests)
        where = None if every else {"name": names}
        if self.mode == "keyword":
            found = await self._keyword(query, tools, where, k)
            return [_match(hit, hit.score, {"mode": self.mode}, explain) for hit in found]
        if self.mode == "vector":
            found = await self.index.search(
                query, limit=k, collection=TOOL_COLLECTION, where=where, mode=self.mode
            )
            return [_match(hit, hit.score, {"mode": self.mode}, explain) for hit in found]
        pool = max(FUSION_POOL, k)
        sentences = self.fusion.sentences(query)
        searched = await asyncio.gather(
            *(self._fused(text, tools, where, pool) for text in [query, *sentences])
        )
        (whole, weight), parts = searched[0], [fused for fused, _ in searched[1:]]
        best: dict[str, float] = {}
        for fused in parts:
            for hit in fused:
                best[hit.record.id] = max(best.get(hit.record.id, 0.0), hit.score)
        hits = {hit.record.id: hit for fused in [*parts[::-1], whole] for hit in fused}
        first = {hit.record.id: rank for rank, hit in enumerate(whole)}
        overall = {hit.record.id: hit.score for hit in whole}
        share = self.fusion.sentence_share
        scores = {key: overall.get(key, 0.0) + share * best.get(key, 0.0) for key in hits}
        order = sorted(scores, key=lambda key: (-scores[key], first.get(key, pool), key))[:k]
        why = {"mode": "hybrid", "weight": weight, "sentences": len(sentences)}
        return [
            _match(hits[key], scores[key], {**why, "sentence_score": best.get(key)}, explain)
            for key in order
        ]

    async def _keyword(
        self, query: str, tools: Sequence[Searchable], where: dict[str, Any] | None, limit: int
    ) -> list[IndexHit]:
        """`query`'s keyword candidates, best first: the index's full-text search, or for a
        query with CJK the registry's keyword index (`KeywordToolIndex`: BM25 over characters
        and character pairs) over the same tools (see the module docstring)."""
        if not has_cjk(query):
            return await self.index.search(
                query, limit=limit, collection=TOOL_COLLECTION, where=where, mode="keyword"
            )
        found = await self._chinese.search(query, tools, limit)
        return [
            IndexHit(
                Record(m.name, self._texts[m.name], {"name": m.name}, TOOL_COLLECTION),
                m.score,
                keyword_rank=rank,
                keyword_score=m.score,
            )
            for rank, m in enumerate(found, start=1)
        ]

    async def _fused(
        self, query: str, tools: Sequence[Searchable], where: dict[str, Any] | None, pool: int
    ) -> tuple[list[IndexHit], float]:
        """`query`'s keyword and vector candidates fused at its weight (`ToolFusion.weight`,
        then `crossed_weight` and `agreed_weight` as every hybrid search), each score divided
        by the best; and the weight."""
        keyword, vector = await asyncio.gather(
            self._keyword(query, tools, where, pool),
            self.index.search(
                query, limit=pool, collection=TOOL_COLLECTION, where=where, mode="vector"
            ),
        )
        weight = crossed_weight(
            self.fusion.weight(query, self.index.embedder.name),
            query,
            keyword,
            vector,
            TOOL_SEARCH_FUSION,
        )
        weight = agreed_weight(weight, keyword, vector)
        fused = fuse_hits(keyword, vector, pool, weight=weight)
        top = fused[0].score if fused and fused[0].score > 0 else 1.0
        for hit in fused:
            hit.score /= top
        return fused, weight

    async def close(self) -> None:
        await self.index.close()


def _match(hit: IndexHit, score: float, why: dict[str, Any], explain: bool) -> ToolMatch:
    """A hit as a `ToolMatch`, with the sides' evidence when `explain`."""
    sides = {
        "keyword_rank": hit.keyword_rank,
        "keyword_score": hit.keyword_score,
        "vector_score": hit.vector_score,
    }
    return ToolMatch(hit.record.id, score, {**why, **sides} if explain else None)
