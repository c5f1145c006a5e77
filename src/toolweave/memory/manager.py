"""`MemoryManager`: one user's four memory types behind one async API.

Working memory lives in this process (`WorkingMemory`); episodic, semantic and perceptual
memories live in a `TextIndex` from `toolweave.storage` (one SQLite file by default, Postgres +
Qdrant with `index=IndexSettings(dsn=...)`), one collection per user, so every write is one
transaction and everything but working memory survives a restart. Semantic memories carry
their relations, which feed the `KnowledgeGraph`; a semantic fact contradicted by a newer one
or by an update is superseded (`valid_to`, `superseded_by`), never deleted, and
`search(as_of=...)` sees history.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from contextlib import nullcontext
from datetime import datetime
from typing import TYPE_CHECKING, Any

from toolweave._extras import RETRIEVAL_MODULES, require
from toolweave.memory import _codec
from toolweave.memory._items import new_item
from toolweave.memory._overview import memory_stats, memory_summary
from toolweave.memory._search import MemoryPeriod, period_end, search_memories
from toolweave.memory.errors import MemoryArgumentError
from toolweave.memory.graph import (
    EXCLUSIVE_PREDICATES,
    KnowledgeGraph,
    extract_relations_with_model,
)
from toolweave.memory.maintenance import consolidate_memories, forget_memories
from toolweave.memory.store import DEFAULT_TABLE, check_user_id, open_memory_index
from toolweave.memory.types import (
    MEMORY_TYPES,
    MemoryHit,
    MemoryItem,
    Relation,
    check_content,
    check_importance,
    check_memory_type,
    check_text,
    to_datetime,
    utc_now,
)
from toolweave.memory.working import (
    DEFAULT_WORKING_CAPACITY,
    DEFAULT_WORKING_TTL_MINUTES,
    WorkingMemory,
)
from toolweave.storage.retrieval import Embedder, TextIndex
from toolweave.storage.retrieval.backend import (
    DEFAULT_INDEX_SETTINGS,
    IndexSettings,
    index_or_open,
)
from toolweave.storage.retrieval.embed_guard import Hits
from toolweave.storage.retrieval.embedders import USE_NAME
from toolweave.storage.retrieval.index import SEARCH_MODES, SearchMode

if TYPE_CHECKING:
    from toolweave.llm import Model

DEFAULT_MEMORY_PATH = "memory.db"
DEFAULT_USER_ID = "default"
DEFAULT_MAX_MEMORIES = 10_000
"""`forget("capacity_based")` keeps at most this many persisted memories per user."""
DEFAULT_MIN_SIMILARITY = 0.25
"""Cosine a memory found only by vector search needs to be returned (WordLlama's scale:
paraphrases score 0.5-0.7, unrelated texts below 0.1)."""
MIN_SIMILARITY_BY_EMBEDDER: dict[str, float] = {USE_NAME: 0.1}
"""`min_similarity` of the embedders whose cosines sit lower than WordLlama's (by name; USE's
figures, MADial-Bench, in docs/memory.md)."""
DEFAULT_MAX_SEARCH_LIMIT = 100
"""Most hits one `search` may ask for (a tool caller chooses `limit`)."""
DEFAULT_MAX_QUERY_CHARS = 2_000
"""Longest `search` query accepted, in characters."""


class MemoryManager:
    """Add, search, update, forget and consolidate one user's memories.

    `embedder`: "auto" (WordLlama), "minilm", "e5" or "use" (multilingual), "hash",
    "openai-compat:<url>#<model>" or an `Embedder`. `model`, when given, extracts relations from
    semantic memories after each write (off the `add` path). `index` is an `IndexSettings`
    (the backend, Postgres + Qdrant with `dsn=`, `hnsw_threshold`, `max_query_terms`,
    `embed_retry`: the index the manager opens at `path` and closes), or an open `TextIndex`
    shared between managers of different users (`for_user`), which the manager does not close.
    `table` names the tables (and the Qdrant collection), so several stores can share one
    database. `min_similarity` is the cosine a memory found only by its vector needs to be
    returned, unless hybrid search ranks it at or above a keyword match (in any mode, the floor
    never drops what hybrid search keeps; by default `MIN_SIMILARITY_BY_EMBEDDER`'s, else
    `DEFAULT_MIN_SIMILARITY`); `max_search_limit` bounds `limit`.
    """

    def __init__(
        self,
        path: str | Any = DEFAULT_MEMORY_PATH,
        user_id: str = DEFAULT_USER_ID,
        embedder: Embedder | str = "auto",
        working_capacity: int = DEFAULT_WORKING_CAPACITY,
        working_ttl_minutes: float = DEFAULT_WORKING_TTL_MINUTES,
        *,
        index: IndexSettings | TextIndex = DEFAULT_INDEX_SETTINGS,
        model: Model | None = None,
        max_memories: int = DEFAULT_MAX_MEMORIES,
        exclusive_predicates: Iterable[str] = EXCLUSIVE_PREDICATES,
        table: str = DEFAULT_TABLE,
        min_similarity: float | None = None,
        max_search_limit: int = DEFAULT_MAX_SEARCH_LIMIT,
        max_query_chars: int = DEFAULT_MAX_QUERY_CHARS,
    ) -> None:
        self.user_id = check_user_id(user_id)
        self.index, self._owns_index = index_or_open(
            index,
            "MemoryManager",
            lambda settings: open_memory_index(path, embedder, settings, table),
        )
        self.working = WorkingMemory(working_capacity, working_ttl_minutes)
        self.model = model
        self.max_memories = max_memories
        self.min_similarity = (
            MIN_SIMILARITY_BY_EMBEDDER.get(self.embedder.name, DEFAULT_MIN_SIMILARITY)
            if min_similarity is None
            else min_similarity
        )
        self.max_search_limit = max_search_limit
        self.max_query_chars = max_query_chars
        self.exclusive_predicates = frozenset(exclusive_predicates)
        self._graph: KnowledgeGraph | None = None
        self._graph_lock = asyncio.Lock()
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def embedder(self) -> Embedder:
        return self.index.embedder

    def for_user(self, user_id: str) -> MemoryManager:
        """A manager for another user over the same store (its own working memory)."""
        return MemoryManager(
            user_id=user_id,
            working_capacity=self.working.capacity,
            working_ttl_minutes=self.working.ttl_minutes,
            index=self.index,
            model=self.model,
            max_memories=self.max_memories,
            exclusive_predicates=self.exclusive_predicates,
            min_similarity=self.min_similarity,
            max_search_limit=self.max_search_limit,
            max_query_chars=self.max_query_chars,
        )

    # -- adding --------------------------------------------------------------------------------

    async def add(
        self,
        content: str,
        memory_type: str = "working",
        importance: float = 0.5,
        metadata: Mapping[str, Any] | None = None,
        timestamp: datetime | float | str | None = None,
        relations: Iterable[Any] | None = None,
        file_path: str | None = None,
        modality: str | None = None,
    ) -> str:
        """Store one memory and return its id; identical content returns the existing id."""
        require("memory", "MemoryManager.add", RETRIEVAL_MODULES)
        item = new_item(
            self.user_id,
            content,
            memory_type,
            importance,
            metadata,
            timestamp,
            relations,
            file_path,
            modality,
        )
        return (await self._add_items([item]))[0]

    async def add_many(self, items: Iterable[Mapping[str, Any]]) -> list[str]:
        """Add many memories (each a mapping of `add`'s arguments) in one transaction."""
        built = []
        for position, raw in enumerate(items):
            if not isinstance(raw, Mapping):
                raise MemoryArgumentError(f"items[{position}] must be a mapping of add() arguments")
            try:
                built.append(new_item(self.user_id, **raw))
            except TypeError as exc:
                raise MemoryArgumentError(f"items[{position}]: {exc}") from None
            except MemoryArgumentError as exc:
                raise MemoryArgumentError(f"items[{position}]: {exc}") from None
        return await self._add_items(built)

    async def _add_items(self, items: Sequence[MemoryItem]) -> list[str]:
        ids: list[str] = []
        persisted: dict[str, MemoryItem] = {}
        hashes = {i.id: _codec.content_hash(i.content) for i in items if i.memory_type != "working"}
        existing = await self.existing_by_hash(set(hashes.values()))
        graph = await self.graph() if any(i.memory_type == "semantic" for i in items) else None
        superseded: dict[str, MemoryItem] = {}
        now = utc_now()
        for item in items:
            if item.memory_type == "working":
                found = self.working.find_content(item.content)
                if found is None:
                    self.working.put(item)
                ids.append(found.id if found else item.id)
                continue
            key = (item.memory_type, hashes[item.id])
            if key in existing:
                ids.append(existing[key])
                continue
            existing[key] = item.id
            persisted[item.id] = item
            ids.append(item.id)
            if graph is not None and item.relations:
                for old_id in graph.conflicts(item.relations, self.exclusive_predicates):
                    superseded[old_id] = superseded.get(old_id) or await self._required(old_id)
                    superseded[old_id].valid_to, superseded[old_id].superseded_by = now, item.id
        upserts = [
            _codec.to_record(i, hashes.get(i.id))
            for i in [*superseded.values(), *persisted.values()]
        ]
        if upserts:
            await self.index.write(upserts)
        if graph is not None:
            for old_id in superseded:
                graph.remove(old_id)
            for item in persisted.values():
                if item.memory_type == "semantic":
                    graph.add(item.id, item.relations)
                    self._schedule_extraction(item)
        return ids

    async def existing_by_hash(self, hashes: set[str]) -> dict[tuple[str, str], str]:
        """Ids of current memories by (memory type, content hash): what a write deduplicates
        against (package-internal: `maintenance` uses it too)."""
        if not hashes:
            return {}
        found = await self.index.find(self.user_id, {"content_hash": sorted(hashes)})
        return {
            (r.payload["memory_type"], r.payload["content_hash"]): r.id
            for r in found
            if r.payload["valid_to"] == _codec.FOREVER
        }

    def _schedule_extraction(self, item: MemoryItem) -> None:
        if self.model is None:
            return
        task = asyncio.get_running_loop().create_task(self._extract_with_model(item))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _extract_with_model(self, item: MemoryItem) -> None:
        assert self.model is not None
        found = await extract_relations_with_model(self.model, item.content)
        current = await self.get(item.id)
        known = {(r.subject, r.predicate, r.object) for r in (current.relations if current else [])}
        extra = [r for r in found if (r.subject, r.predicate, r.object) not in known]
        if current is None or not current.current or not extra:
            return
        current.relations = [*current.relations, *extra]
        graph = await self.graph()
        stale = graph.conflicts(extra, self.exclusive_predicates) - {item.id}
        now = utc_now()
        older = [await self._required(i) for i in stale]
        for old in older:
            old.valid_to, old.superseded_by = now, item.id
        await self.index.write([_codec.to_record(x) for x in [*older, current]])
        for old in older:
            graph.remove(old.id)
        graph.add(item.id, current.relations)

    async def wait_for_background(self) -> None:
        """Wait for relation extraction still running after earlier writes."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks))

    # -- reading -------------------------------------------------------------------------------

    async def get(self, id: str) -> MemoryItem | None:
        """The memory with this id, current or superseded; None if there is none."""
        found = self.working.get(id)
        if found is not None:
            return found
        records = await self.index.get([id], self.user_id)
        return _codec.to_item(records[0]) if records else None

    async def _required(self, id: str) -> MemoryItem:
        item = await self.get(id)
        if item is None:
            raise MemoryArgumentError(f"no memory with id {id!r} for user {self.user_id!r}")
        return item

    async def search(
        self,
        query: str,
        limit: int = 5,
        memory_types: Sequence[str] | None = None,
        min_importance: float = 0.1,
        *,
        explain: bool = False,
        as_of: datetime | float | str | None = None,
        modality: str | None = None,
        mode: SearchMode = "hybrid",
        session_id: str | None = None,
        since: datetime | float | str | None = None,
        until: datetime | float | str | None = None,
    ) -> Hits[MemoryHit]:
        """The best `limit` memories for `query` across `memory_types` (all by default).

        Current facts only unless `as_of` asks what was valid then; `modality` restricts
        perceptual memories; `session_id` keeps the memories made in that conversation (the
        session id `add` stamped into their metadata) and `since`/`until` those whose timestamp
        (when it happened) lies in that range, both ends included: episodic recall ("what did we
        decide in that session", "what happened last week"). `mode` is "hybrid" (keyword and
        vector scores fused), "keyword" or "vector"; `explain=True` attaches each hit's keyword
        rank and score, cosine, fused relevance and its type formula's tie-break factors.
        """
        require("memory", "MemoryManager.search", RETRIEVAL_MODULES)
        if mode not in SEARCH_MODES:
            raise MemoryArgumentError(f"mode must be one of {list(SEARCH_MODES)}, got {mode!r}")
        if not isinstance(query, str) or not query.strip():
            raise MemoryArgumentError("query must be a non-empty string")
        check_text(query, "query", self.max_query_chars, "max_query_chars", "use fewer words")
        if (
            not isinstance(limit, int)
            or isinstance(limit, bool)
            or not 1 <= limit <= self.max_search_limit
        ):
            raise MemoryArgumentError(
                f"limit must be an integer from 1 to {self.max_search_limit}"
                f" (max_search_limit), got {limit!r}"
            )
        types = [check_memory_type(t, field="memory_types") for t in memory_types or MEMORY_TYPES]
        check_importance(min_importance, field="min_importance")
        moment = to_datetime(as_of, field="as_of") if as_of is not None else None
        period = MemoryPeriod(
            session_id=_codec.check_session_id(session_id),
            since=to_datetime(since, field="since") if since is not None else None,
            until=period_end(until) if until is not None else None,
        )
        # The index's background work (`FusedSearch.search_gate`) waits for all of it; an index
        # of the caller's own may have no gate.
        with getattr(self.index, "search_gate", None) or nullcontext():
            graph = await self.graph() if "semantic" in types else None
            return await search_memories(
                self,
                query,
                limit=limit,
                types=types,
                min_importance=min_importance,
                explain=explain,
                as_of=moment,
                modality=_codec.check_modality(modality) if modality else None,
                graph=graph,
                mode=mode,
                period=period,
            )

    async def related(self, entity: str, depth: int = 1) -> list[Relation]:
        """Relations of current semantic facts within `depth` hops of `entity`."""
        if not isinstance(entity, str) or not entity.strip():
            raise MemoryArgumentError("entity must be a non-empty string")
        return (await self.graph()).related(entity.strip(), depth)

    async def graph(self) -> KnowledgeGraph:
        """The knowledge graph of current semantic memories, read from the store on first use
        and then kept in step by every write (`update_graph`)."""
        async with self._graph_lock:
            if self._graph is None:
                graph = KnowledgeGraph()
                where = {"memory_type": "semantic", **_codec.validity(None)}
                for record in await self.index.find(self.user_id, where):
                    if record.payload.get("relations"):  # most facts state no relation
                        graph.add(record.id, _codec.to_item(record).relations)
                self._graph = graph
            return self._graph

    def update_graph(self, removed: Iterable[str] = (), added: Iterable[MemoryItem] = ()) -> None:
        """Keep a loaded graph in step with a write that removed and added these memories (an
        unloaded one is read whole when first needed; package-internal, as `existing_by_hash`)."""
        if self._graph is None:
            return
        for memory_id in removed:
            self._graph.remove(memory_id)
        for item in added:
            self._graph.add(item.id, item.relations)

    # -- changing ------------------------------------------------------------------------------

    async def update(
        self,
        id: str,
        content: str | None = None,
        importance: float | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> MemoryItem | None:
        """Change a memory; returns its current version (None if there is no such memory).

        New content for a semantic fact supersedes it: a new fact is stored and the old one
        keeps its text with `valid_to`/`superseded_by` set. `metadata` keys replace those keys.
        """
        item = await self.get(id)
        if item is None:
            return None
        if content is not None:
            check_content(content)
        if importance is not None:
            item.importance = check_importance(importance)
        if metadata is not None:
            item.metadata.update(_codec.check_metadata(dict(metadata)))
        if item.memory_type == "working":
            if content is not None:
                item.content = content
            self.working.put(item)
            return item
        if content is not None and content != item.content and item.memory_type == "semantic":
            if not item.current:
                raise MemoryArgumentError(
                    f"memory {id!r} was superseded by {item.superseded_by!r}; update that one"
                )
            newer = new_item(self.user_id, content, "semantic", item.importance, item.metadata)
            item.valid_to, item.superseded_by = utc_now(), newer.id
            await self.index.write([_codec.to_record(item), _codec.to_record(newer)])
            graph = await self.graph()
            graph.remove(item.id)
            graph.add(newer.id, newer.relations)
            return newer
        if content is not None:
            item.content = content
        await self.index.write([_codec.to_record(item)])
        return item

    async def remove(self, id: str) -> bool:
        """Delete a memory from every index; True if it existed."""
        if self.working.remove(id) is not None:
            return True
        if not await self.index.get([id], self.user_id):
            return False
        await self.index.write(delete=[(self.user_id, id)])
        self.update_graph(removed=[id])
        return True

    async def forget(
        self,
        strategy: str = "importance_based",
        threshold: float = 0.1,
        max_age_days: float = 30,
    ) -> int:
        """Delete memories by importance (< threshold), age (> max_age_days) or capacity
        (beyond `max_memories`, least important first); returns how many, one transaction."""
        return await forget_memories(self, strategy, threshold, max_age_days)

    async def consolidate(
        self,
        from_type: str = "working",
        to_type: str = "episodic",
        importance_threshold: float = 0.7,
    ) -> int:
        """Move memories of importance >= threshold from one type to a longer-lived one.

        The copies are written and the originals deleted in one transaction (a persisted memory
        keeps its id and changes type in place); importance grows by `CONSOLIDATION_BOOST`,
        capped at 1. Returns how many memories moved.
        """
        return await consolidate_memories(self, from_type, to_type, importance_threshold)

    async def clear_all(self) -> int:
        """Delete every memory of this user; returns how many."""
        count = self.working.clear() + await self.index.delete_where(self.user_id)
        self._graph = None
        return count

    # -- overview ------------------------------------------------------------------------------

    async def stats(self) -> dict[str, Any]:
        """Counts per type (current and superseded), the store and the embedder."""
        return await memory_stats(self)

    async def summary(self, per_type: int = 3) -> str:
        """A short text overview: counts, then the most important current memories per type."""
        return await memory_summary(self, per_type)

    async def close(self) -> None:
        """Finish background extraction and close the store (unless it is shared)."""
        await self.wait_for_background()
        if self._owns_index:
            await self.index.close()

    async def __aenter__(self) -> MemoryManager:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
