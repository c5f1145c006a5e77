"""The retrieval index contract memory and the knowledge base share, and its pure helpers.

A `TextIndex` holds text records with a JSON payload, grouped in collections (a user, a
knowledge-base namespace), and finds them three ways: keywords (jieba-segmented full text,
substrings), vectors (cosine over unit embeddings) and both fused (`fusion`: normalised scores,
a vector weight per embedder and query script, a fixed candidate pool). Two
implementations keep the same contract and the same tests: `SQLiteTextIndex` (one file,
embedded) and `PostgresQdrantIndex` (scale-out). Payload filters (`where`) are a small,
backend-neutral language: `{"field": value}` equality, `{"field": [a, b]}` any of,
`{"field": {"gte": x, "lt": y}}` ranges (gt, gte, lt, lte).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
from collections.abc import Mapping, Sequence
from contextlib import nullcontext
from typing import Any, Literal, Protocol, runtime_checkable

from toolweave.storage.errors import ConfigError
from toolweave.storage.retrieval._background import SearchGate
from toolweave.storage.retrieval.embed_guard import EmbedderGuard, Hits
from toolweave.storage.retrieval.embedders import Embedder
from toolweave.storage.retrieval.fusion import (
    FusionWeights,
    agreed_weight,
    crossed_weight,
    fuse_hits,
    phrase_boost,
    pool_size,
)

DEFAULT_COLLECTION = "default"
DEFAULT_RRF_K = 60
"""Reciprocal rank fusion constant (Cormack et al. 2009): score = sum of 1 / (k + rank); used
to merge the rankings of several phrasings of one query (the knowledge base's expansions)."""
DEFAULT_OVERSAMPLE = 2
"""Candidates fetched per wanted hit before payload filters are applied (both sides widen the
fetch when the filters reject more): with the fusion pool of 50, twice is 100 rows a side."""

DEFAULT_MAX_QUERY_TERMS = 64
"""Distinct words one keyword search scores at most: a longer query keeps its rarest in the
collection (the highest idf, which carry its bm25), never merely its first words; the vector
side reads the whole query."""

DEFAULT_POSTINGS_KEPT = 8_000_000
"""Word postings (record, frequency) the embedded index keeps in memory over all terms, 16 bytes
each (128 MB): read ahead in the background when the index opens and after writes, so no query
walks FTS5's index for them; past it the first this many (in term order) are read ahead and the
other words as queries ask for them."""

SUBSTRING_FALLBACK = 10
"""Keyword search looks for substring matches (trigrams, short CJK terms) only while fewer
records than this matched as words, and up to this many: they are the fallback for a query
whose words are rare or misspelt, not candidates to fill the fusion pool with."""

SearchMode = Literal["hybrid", "keyword", "vector"]
Where = Mapping[str, Any]
_FIELD = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
RANGE_OPERATORS = {"gt": ">", "gte": ">=", "lt": "<", "lte": "<="}


@dataclasses.dataclass(slots=True)
class Record:
    """One indexed text. `id` is unique within its `collection`. A record of empty `text` has
    nothing to embed: it gets no vector (and is not missing one), and is read by id or payload
    (`get`, `find`), never found by `search`."""

    id: str
    text: str
    payload: dict[str, Any] = dataclasses.field(default_factory=dict)
    collection: str = DEFAULT_COLLECTION


@dataclasses.dataclass(slots=True)
class IndexHit:
    """A search result: the record, the fused `score` (0..1), and what produced it.

    `keyword_rank` is the 1-based rank among keyword matches (None: no keyword match) and
    `keyword_score` its full-text score (bm25, higher is better); `vector_score` the
    cosine similarity (None: not among the vector candidates).
    """

    record: Record
    score: float
    keyword_rank: int | None = None
    vector_score: float | None = None
    keyword_score: float | None = None


@runtime_checkable
class TextIndex(Protocol):
    """Records with full-text and vector search; every write is one transaction."""

    embedder: Embedder
    guard: EmbedderGuard
    """The embedder behind retries; `guard.warning` says why search runs by keywords only."""

    async def write(
        self, upsert: Sequence[Record] = (), delete: Sequence[tuple[str, str]] = ()
    ) -> None:
        """Add or replace `upsert` and remove `delete` ((collection, id) pairs), all or nothing."""
        ...

    async def get(self, ids: Sequence[str], collection: str = DEFAULT_COLLECTION) -> list[Record]:
        """The records with these ids that exist, in the order asked."""
        ...

    async def find(
        self,
        collection: str = DEFAULT_COLLECTION,
        where: Where | None = None,
        *,
        limit: int | None = None,
        order_by: str | None = None,
        descending: bool = False,
    ) -> list[Record]:
        """Records matching `where`, optionally ordered by a numeric payload field."""
        ...

    async def count(
        self, collection: str = DEFAULT_COLLECTION, where: Where | None = None
    ) -> int: ...

    async def delete_where(
        self, collection: str = DEFAULT_COLLECTION, where: Where | None = None
    ) -> int:
        """Remove every matching record from every index; returns how many."""
        ...

    async def search(
        self,
        query: str,
        *,
        limit: int = 5,
        collection: str = DEFAULT_COLLECTION,
        where: Where | None = None,
        mode: SearchMode = "hybrid",
    ) -> Hits[IndexHit]:
        """Best `limit` records for `query`, keyword and vector scores fused (`fuse_hits`);
        by keywords only, with `warning` set, while the embedder fails."""
        ...

    async def reembed(self) -> int:
        """Embed the records stored without a vector (written while the embedder failed);
        returns how many got one. Runs by itself once the embedder answers again."""
        ...

    async def missing_vectors(self, collection: str | None = None) -> int:
        """Records (of `collection`, or of all) stored without a vector."""
        ...

    async def collections(self) -> list[str]: ...

    async def stored_fusion(self) -> FusionWeights:
        """The vector weights hybrid search fuses with (stored in the index)."""
        ...

    async def recorded_embedder(self) -> tuple[str, int] | None:
        """The embedder name and dimension the stored vectors were made with (which may differ
        from `embedder`, the one this index was opened with); None while none is recorded (an
        index records it when first used)."""
        ...

    async def close(self) -> None: ...


async def _nothing(value: list[IndexHit]) -> list[IndexHit]:
    return value


class FusedSearch:
    """`search` for a backend that has `keyword_search` and `vector_search`: both, run
    concurrently (SQLite's keyword queries overlap the vector scan's thread), then fused.

    `fusion` holds the vector weights; a backend replaces the embedder's defaults with the
    weights stored in the index (`stored_fusion`) when it opens.
    """

    fusion: FusionWeights | None = None
    guard: EmbedderGuard
    #: Counts this index's searches in flight for its background work (None: it has none).
    search_gate: SearchGate | None = None

    async def stored_fusion(self) -> FusionWeights:
        """The fusion weights this index ranks with (read from the store on first use)."""
        raise NotImplementedError

    async def keyword_search(
        self, query: str, *, limit: int, collection: str, where: Where | None
    ) -> list[IndexHit]:
        raise NotImplementedError

    async def vector_search(
        self, query: str, *, limit: int, collection: str, where: Where | None
    ) -> list[IndexHit]:
        raise NotImplementedError

    async def reembed(self) -> int:
        raise NotImplementedError

    async def query_vector(self, query: str) -> Any | None:
        """The query's vector, or None while the embedder fails; the first vector after an
        outage also re-embeds the records stored without one (`reembed`)."""
        vectors = await asyncio.to_thread(self.guard.embed, [query])
        if vectors is None:
            return None
        if self.guard.missing:
            await self.reembed()
        return vectors[0]

    async def search(
        self,
        query: str,
        *,
        limit: int = 5,
        collection: str = DEFAULT_COLLECTION,
        where: Where | None = None,
        mode: SearchMode = "hybrid",
    ) -> Hits[IndexHit]:
        """Best `limit` records for `query`: keyword scores with the phrase bonus
        (`phrase_boost`) and vector scores fused (`fuse_hits`) at the index's vector weight for
        the query's script and length (`FusionWeights.for_query`), another for a query over
        records of the other script (`crossed_weight`), halved when the sides disagree
        (`agreed_weight`); each side asked for the same pool of
        candidates whatever `limit` is. While the embedder fails (`guard`), by keywords only,
        the hits carrying the guard's warning. The index's background work waits meanwhile
        (`search_gate`)."""
        check_limit(limit)
        check_mode(mode)
        with self.search_gate or nullcontext():
            return await self._fused(query, limit, collection, where, mode)

    async def _fused(
        self, query: str, limit: int, collection: str, where: Where | None, mode: SearchMode
    ) -> Hits[IndexHit]:
        none: list[IndexHit] = []
        pool = pool_size(limit)
        weights = await self.stored_fusion()
        weight = {"keyword": 0.0, "vector": 1.0}.get(mode)
        if weight is None:
            weight = weights.for_query(query)
        # The vector search starts first: its quick bookkeeping query then goes ahead of the
        # keyword query in SQLite's queue, and its embedding and scan overlap the keyword one.
        vector, keyword = await asyncio.gather(
            self.vector_search(query, limit=pool, collection=collection, where=where)
            if weight > 0.0
            else _nothing(none),
            self.keyword_search(query, limit=pool, collection=collection, where=where)
            if weight < 1.0
            else _nothing(none),
        )
        keyword = phrase_boost(query, keyword)
        warning = self.guard.warning if weight > 0.0 else None
        if warning is not None:
            weight = 0.0 if weight < 1.0 else weight
        weight = crossed_weight(weight, query, keyword, vector, weights)
        weight = agreed_weight(weight, keyword, vector)
        return Hits(fuse_hits(keyword, vector, limit, weight=weight), warning)


async def embedding_health(index: TextIndex, collection: str) -> dict[str, Any]:
    """What `stats()` says of the embedder: `embedding_warning` (None while it answers) and
    `missing_vectors`, the records of `collection` stored without a vector until re-embedded."""
    return {
        "embedding_warning": index.guard.warning,
        "missing_vectors": await index.missing_vectors(collection),
    }


def check_where(where: Where | None) -> list[tuple[str, str, Any]]:
    """`where` as (field, operator, value) triples; operator is `=`, `in` or a range operator.

    Raises ValueError naming the bad field, so a typo never silently matches everything.
    """
    clauses: list[tuple[str, str, Any]] = []
    for field, value in (where or {}).items():
        if not _FIELD.match(field):
            raise ConfigError(
                f"where: field {field!r} must be an identifier (letters, digits, underscore)"
            )
        if isinstance(value, Mapping):
            unknown = set(value) - set(RANGE_OPERATORS)
            if unknown or not value:
                raise ConfigError(
                    f"where[{field!r}]: use range operators {sorted(RANGE_OPERATORS)},"
                    f" got {sorted(map(str, value))}"
                )
            clauses.extend((field, op, bound) for op, bound in value.items())
        elif isinstance(value, list | tuple | set | frozenset):
            clauses.append((field, "in", list(value)))
        else:
            clauses.append((field, "=", value))
    return clauses


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[str]], *, k: int = DEFAULT_RRF_K
) -> dict[str, float]:
    """Fuse rankings of ids: each id scores the sum of `1 / (k + rank)` over the lists."""
    fused: dict[str, float] = {}
    for ranking in rankings:
        for rank, key in enumerate(ranking, start=1):
            fused[key] = fused.get(key, 0.0) + 1.0 / (k + rank)
    return fused


_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_")
SEARCH_MODES = ("hybrid", "keyword", "vector")


def check_name(name: str) -> str:
    """A table (and Qdrant collection) name: lower-case letters, digits, underscores."""
    if not name or not set(name) <= _NAME_CHARS or name[0].isdigit():
        raise ConfigError(f"name {name!r}: use lower-case letters, digits and underscores")
    return name


def check_mode(mode: str) -> SearchMode:
    if mode not in SEARCH_MODES:
        raise ConfigError(f"mode must be one of {list(SEARCH_MODES)}, got {mode!r}")
    return mode  # type: ignore[return-value]


def check_unique(records: Sequence[Record]) -> list[tuple[str, str]]:
    """The (collection, id) keys of one write, which must not repeat; a collection, id or text
    holding a NUL character is refused."""
    keys = [(r.collection, r.id) for r in records]
    if len(set(keys)) != len(keys):
        raise ConfigError("upsert: the same (collection, id) appears twice in one write")
    for record in records:
        for field in ("collection", "id", "text"):
            if "\x00" in getattr(record, field):
                raise ConfigError(_nul_message(record, field))
    return keys


_ESCAPED_NUL = re.compile(r"(?<!\\)(?:\\\\)*\\u0000")
"""A NUL character in JSON text: `\\u0000` after an even number of backslashes."""


_PAYLOAD_JSON = json.JSONEncoder(ensure_ascii=False, sort_keys=True, separators=(",", ":"))
"""One encoder for every payload (`json.dumps` with options builds a new one per call)."""


def holds_nul(encoded: str) -> bool:
    """Whether JSON text `encoded` holds a NUL character (in a string or a key)."""
    return "\\u0000" in encoded and _ESCAPED_NUL.search(encoded) is not None


def payload_json(record: Record) -> str:
    """The record's payload as compact JSON, as both backends store it; a NUL character in it
    is refused."""
    encoded = _PAYLOAD_JSON.encode(record.payload)
    if holds_nul(encoded):
        raise ConfigError(_nul_message(record, "payload"))
    return encoded


def _nul_message(record: Record, field: str) -> str:
    return (
        f"upsert: record {record.id!r} has a NUL character (\\x00) in its {field}; no backend"
        " stores one (SQLite's JSON reader would cut the value there, Postgres refuses it):"
        " remove it (for example with .replace('\\x00', ''))"
    )


def check_limit(limit: int, *, name: str = "limit") -> int:
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise ConfigError(f"{name} must be a positive integer, got {limit!r}")
    return limit
