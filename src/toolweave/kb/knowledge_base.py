"""`KnowledgeBase`: documents in, cited passages out, on the shared retrieval index.

A document becomes Markdown (`convert`), then heading-aware chunks (`chunking`), then records of
the storage layer's `TextIndex` (the same one memory uses: FTS5 with jieba plus trigram, vectors,
reciprocal rank fusion; SQLite embedded, Postgres + Qdrant scaled out). Each namespace is two
collections of that index: its chunks (each headed by its document's title, the only place the
title is indexed and embedded), and one record per document (title, source, content hash,
chunk count, the Markdown, metadata in its payload; its text is empty, so it costs no
embedding). Adding or replacing a document is one `write`, so a crash mid-file leaves the
previous state and re-running an ingest resumes where it stopped (unchanged files are skipped by
content hash).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolweave._extras import RETRIEVAL_MODULES, require
from toolweave.errors import ConfigError
from toolweave.kb._documents import (
    DOCS_SUFFIX,
    Spec,
    chunk_id,
    digest,
    document_records,
    file_digest,
    file_fields,
    first_line,
    normalize_for_dedupe,
    unchanged_file,
)
from toolweave.kb._embedding import BatchedEmbedder
from toolweave.kb.chunking import (
    DEFAULT_CHUNK_TOKENS,
    DEFAULT_MAX_CHUNK_CHARS,
    DEFAULT_OVERLAP_TOKENS,
    Unit,
    check_chunking,
)
from toolweave.kb.convert import (
    DEFAULT_LIMITS,
    ConversionLimits,
    convert_file,
    describe_text,
)
from toolweave.kb.errors import KnowledgeBaseError
from toolweave.kb.expand import EXPANSIONS, Expansion, expand_query
from toolweave.kb.results import (
    AddResult,
    AddStatus,
    Document,
    KBHit,
    ProgressCallback,
    document_from_record,
    fused_hits,
    hit_from_index,
)
from toolweave.storage.retrieval.backend import (
    DEFAULT_INDEX_SETTINGS,
    IndexSettings,
    index_or_open,
    open_index,
)
from toolweave.storage.retrieval.embed_guard import Hits
from toolweave.storage.retrieval.embedders import DEFAULT_EMBED_BATCH, Embedder, load_embedder
from toolweave.storage.retrieval.index import (
    Record,
    SearchMode,
    TextIndex,
    embedding_health,
    holds_nul,
)

if TYPE_CHECKING:
    from toolweave.llm import Model

logger = logging.getLogger("toolweave.kb")

DEFAULT_NAMESPACE = "default"
DEFAULT_MAX_DOCS = 10_000
"""Documents one namespace may hold (`[kb].max_docs`): a model adding text in a loop stops
at a bound instead of filling the disk."""
DEFAULT_INDEX_NAME = "kb"
"""Table (and Qdrant collection) name of the knowledge base's index."""
DEFAULT_SEARCH_K = 5
FUSION_CANDIDATES = 20
"""Candidates fetched per query before an expanded search fuses the rankings."""
MAX_SEARCH_K = 50
"""Largest `k` a search accepts."""
INDEXED_FIELDS = ("content_hash",)
"""Payload fields with a B-tree index: the duplicate check looks a document up by its hash."""
_DOCS = DOCS_SUFFIX
_TEXT_ARGUMENTS = frozenset(
    ("text", "title", "metadata", "doc_id", "chunk_size", "chunk_overlap", "unit")
)
_NAMESPACE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$")
_MODES = ("hybrid", "vector", "keyword")


class KnowledgeBase:
    """Documents split into cited chunks, searched by keywords, vectors or both.

    `path` is the SQLite file (embedded default). `index` is an `IndexSettings` (its `dsn` +
    `qdrant_url`, or `qdrant_path` for Qdrant's local mode, select the scale-out backend:
    Postgres rows and full text, Qdrant vectors; its `embed_retry` sets a failing embedder's
    retries before keyword-only search, the hits' `warning`), or any open `TextIndex` to share
    (not closed by this instance). `index_name` names its tables (and Qdrant collection).
    `model` enables query expansion and `ask`. Chunk sizes are `chunk_tokens` /
    `overlap_tokens` in `unit` ("tokens" or "chars"), and at most `max_chunk_chars` characters
    whatever the unit.
    """

    def __init__(
        self,
        path: str | Path = "kb.db",
        embedder: str | Embedder = "auto",
        namespace: str = DEFAULT_NAMESPACE,
        *,
        index: IndexSettings | TextIndex = DEFAULT_INDEX_SETTINGS,
        index_name: str = DEFAULT_INDEX_NAME,
        model: Model | None = None,
        max_docs: int = DEFAULT_MAX_DOCS,
        chunk_tokens: int = DEFAULT_CHUNK_TOKENS,
        overlap_tokens: int = DEFAULT_OVERLAP_TOKENS,
        unit: Unit = "tokens",
        max_chunk_chars: int = DEFAULT_MAX_CHUNK_CHARS,
        batch_size: int = DEFAULT_EMBED_BATCH,
        conversion: ConversionLimits = DEFAULT_LIMITS,
    ) -> None:
        self.namespace = check_namespace(namespace)
        self.conversion = conversion
        if max_docs < 1:
            raise ConfigError(f"max_docs must be a positive integer, not {max_docs}")
        check_chunking(chunk_tokens, overlap_tokens, unit, max_chunk_chars)
        self.max_chunk_chars = max_chunk_chars
        self.model = model
        self.max_docs = max_docs
        self.chunk_tokens, self.overlap_tokens, self.unit = chunk_tokens, overlap_tokens, unit
        self._embedder = BatchedEmbedder(load_embedder(embedder), batch_size)
        self.index, self._owns_index = index_or_open(
            index,
            "KnowledgeBase",
            lambda settings: open_index(
                path,
                self._embedder,
                name=index_name,
                settings=settings,
                indexed_fields=INDEXED_FIELDS,
            ),
        )
        self._listeners: list[Callable[[], None]] = []

    @property
    def embedder(self) -> Embedder:
        return self._embedder.inner

    @property
    def embedding_seconds(self) -> float:
        """Seconds this instance has spent in the embedder (the rest of ingest is overhead)."""
        return self._embedder.seconds

    def subscribe(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call `listener()` after every change to the store (any namespace); returns the
        function that unsubscribes it."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def _changed(self) -> None:
        for listener in list(self._listeners):
            listener()

    def namespaced(self, namespace: str) -> KnowledgeBase:
        """The same store seen through another namespace (shares the index; close either)."""
        other = object.__new__(KnowledgeBase)
        other.__dict__.update(self.__dict__)
        other.namespace = check_namespace(namespace)
        other._owns_index = False
        return other

    # -- adding -----------------------------------------------------------------------------

    async def add_file(
        self,
        path: str | Path,
        *,
        progress: ProgressCallback | None = None,
        source: str | Path | None = None,
    ) -> AddResult:
        """Convert and add one file; a changed file replaces its old chunks in one write, and a
        file whose bytes are those it was added from is not converted again. `source` is the
        path recorded (and the document id derived from) when `path` is a copy of it (folder
        ingest converts private copies); default `path` itself, resolved."""
        read, file_hash = await asyncio.to_thread(file_digest, path)
        resolved = Path(source) if source is not None else read
        doc_id, docs = "f" + digest(str(resolved))[:20], self.namespace + _DOCS
        known = await self.index.get([doc_id], docs)
        if not known and file_hash is not None:  # a copy of a file added before
            known = await self.index.find(docs, {"file_hash": file_hash}, limit=1)
        for old in known:
            unchanged = unchanged_file(old, file_hash, doc_id)
            if unchanged is not None:
                return unchanged
        converted = await asyncio.to_thread(convert_file, read, self.conversion)
        if source is not None:
            converted.report.source = str(resolved)
        spec = Spec(
            doc_id=doc_id,
            title=converted.title,
            markdown=converted.markdown,
            source=str(resolved),
            metadata={},
            report=converted.report,
            chunking=(self.chunk_tokens, self.overlap_tokens, self.unit, self.max_chunk_chars),
            file_hash=file_hash,
        )
        return await self._add(spec, progress)

    async def add_text(
        self,
        text: str,
        title: str | None = None,
        metadata: dict[str, Any] | None = None,
        *,
        doc_id: str | None = None,
        chunk_size: int | None = None,
        chunk_overlap: int | None = None,
        unit: Unit | None = None,
        progress: ProgressCallback | None = None,
    ) -> AddResult:
        """Add Markdown or plain text. The same title + content is never added twice; with a
        `doc_id` the document of that id is replaced instead (how notes are kept in sync).
        `chunk_size`, `chunk_overlap` and `unit` override the knowledge base's chunking. The
        title is indexed and embedded with every chunk."""
        spec = self._text_spec(text, title, metadata, doc_id, (chunk_size, chunk_overlap, unit))
        return (await self._add_all([spec], progress))[0]

    async def add_texts(
        self, items: Iterable[str | Mapping[str, Any]], *, progress: ProgressCallback | None = None
    ) -> list[AddResult]:
        """Add many texts in one write (one transaction; the embedder is called once per batch
        of chunks, not once per text). Each item is a text or a mapping of `add_text`'s
        arguments (`text`, `title`, `metadata`, `doc_id`, `chunk_size`, `chunk_overlap`,
        `unit`). Results are in the order given; a text equal to an earlier one of the same
        call is its duplicate."""
        specs = []
        for position, item in enumerate(items):
            raw: Mapping[str, Any] = {"text": item} if isinstance(item, str) else item
            unknown = set(raw) - _TEXT_ARGUMENTS
            if not isinstance(raw, Mapping) or unknown or "text" not in raw:
                raise KnowledgeBaseError(
                    f"items[{position}]: give a text or a mapping of {sorted(_TEXT_ARGUMENTS)}"
                    f" with 'text'{f', not {sorted(unknown)}' if unknown else ''}"
                )
            chunking = (raw.get("chunk_size"), raw.get("chunk_overlap"), raw.get("unit"))
            specs.append(
                self._text_spec(
                    raw["text"], raw.get("title"), raw.get("metadata"), raw.get("doc_id"), chunking
                )
            )
        return await self._add_all(specs, progress)

    def _text_spec(
        self,
        text: str,
        title: str | None,
        metadata: dict[str, Any] | None,
        doc_id: str | None,
        chunking: tuple[int | None, int | None, Unit | None],
    ) -> Spec:
        if not isinstance(text, str) or not text.strip():
            raise KnowledgeBaseError("text: give the document's text (it is empty)")
        for name, value in (("text", text), ("title", title), ("doc_id", doc_id)):
            if isinstance(value, str) and "\x00" in value:
                raise KnowledgeBaseError(f"{name}: it holds a NUL character (\\x00); remove it")
        if metadata and holds_nul(json.dumps(metadata, default=str)):
            raise KnowledgeBaseError("metadata: it holds a NUL character (\\x00); remove it")
        require("kb", "KnowledgeBase.add_text", RETRIEVAL_MODULES)
        title = (title or "").strip() or first_line(text)
        size, overlap, unit = chunking
        return Spec(
            doc_id=doc_id or "t" + digest(*map(normalize_for_dedupe, (title, text)))[:20],
            title=title,
            markdown=text,
            source=None,
            metadata=dict(metadata or {}),
            report=describe_text(text, title),
            chunking=(
                size or self.chunk_tokens,
                self.overlap_tokens if overlap is None else overlap,
                unit or self.unit,
                self.max_chunk_chars,
            ),
        )

    async def _add(self, spec: Spec, progress: ProgressCallback | None) -> AddResult:
        return (await self._add_all([spec], progress))[0]

    async def _add_all(
        self, specs: Sequence[Spec], progress: ProgressCallback | None
    ) -> list[AddResult]:
        """Plan every document (unchanged, duplicate, added or replaced), then write all the
        added and replaced ones in one `write`."""
        for spec in specs:
            check_chunking(*spec.chunking)  # a bad size fails before anything is read
        docs = self.namespace + _DOCS
        existing = {r.id: r for r in await self.index.get([s.doc_id for s in specs], docs)}
        count = await self.index.count(docs)
        results: list[AddResult] = []
        upsert: list[Record] = []
        delete: list[tuple[str, str]] = []
        planned: dict[str, str] = {}  # content hash -> doc id, within this call
        for spec in specs:
            content_hash = digest(
                normalize_for_dedupe(spec.title), normalize_for_dedupe(spec.markdown)
            )
            old = existing.get(spec.doc_id)
            if old is not None and old.payload.get("content_hash") == content_hash:
                if spec.file_hash and old.payload.get("file_hash") != spec.file_hash:
                    payload = {**old.payload, **file_fields(spec)}  # known unchanged next time
                    upsert.append(dataclasses.replace(old, text="", payload=payload))
                chunks = int(old.payload.get("chunks", 0))
                results.append(AddResult(spec.doc_id, spec.title, "unchanged", chunks, spec.report))
                continue
            # A new document equal to another is a duplicate; an existing one that changed is
            # always replaced, even into a copy of another, so it never keeps stale chunks.
            if old is None:
                twin = planned.get(content_hash)
                same = (
                    []
                    if twin
                    else await self.index.find(docs, {"content_hash": content_hash}, limit=1)
                )
                if twin or same:
                    of = twin or same[0].id
                    chunks = -1 if twin else int(same[0].payload.get("chunks", 0))
                    results.append(
                        AddResult(spec.doc_id, spec.title, "duplicate", chunks, spec.report, of)
                    )
                    continue
                if count >= self.max_docs:
                    raise KnowledgeBaseError(
                        f"namespace {self.namespace!r} already holds max_docs={self.max_docs}"
                        " documents; remove some (kb remove) or raise max_docs"
                    )
                count += 1
            planned[content_hash] = spec.doc_id
            records, stale, document = document_records(self.namespace, spec, content_hash, old)
            upsert += [*records, document]
            delete += stale
            status: AddStatus = "replaced" if old else "added"
            results.append(AddResult(spec.doc_id, spec.title, status, len(records), spec.report))
        if upsert:
            self._embedder.progress = progress
            try:
                await self.index.write(upsert, delete)
            finally:
                self._embedder.progress = None
            self._changed()
        by_doc = {r.doc_id: r.chunks for r in results if r.status in ("added", "replaced")}
        return [
            dataclasses.replace(r, chunks=by_doc[r.duplicate_of])
            if r.chunks < 0 and r.duplicate_of
            else r
            for r in results
        ]

    # -- reading ------------------------------------------------------------------------------

    async def search(
        self,
        query: str,
        k: int = DEFAULT_SEARCH_K,
        mode: SearchMode = "hybrid",
        expand: Expansion | None = None,
        *,
        explain: bool = False,
    ) -> Hits[KBHit]:
        """The best `k` chunks for `query`. `expand` ("mqe" or "hyde") also searches the
        configured model's rewordings or hypothetical answer; without a model it is skipped
        (logged) and the plain query is searched. Each hit carries its keyword rank and bm25
        score and its cosine; `explain=True` adds them with the fusion formula and weight.
        While the embedder fails, the hits are found by keywords and carry a `warning`."""
        if not isinstance(query, str) or not query.strip():
            raise KnowledgeBaseError("query: give the text to search for (it is empty)")
        if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= MAX_SEARCH_K:
            raise KnowledgeBaseError(f"k must be an integer from 1 to {MAX_SEARCH_K}, not {k!r}")
        if mode not in _MODES:
            raise KnowledgeBaseError(f"mode must be one of {list(_MODES)}, not {mode!r}")
        if expand is not None and expand not in EXPANSIONS:
            raise KnowledgeBaseError(f"expand must be one of {list(EXPANSIONS)} or null")
        searches: list[tuple[str, SearchMode]] = [(query, mode)]
        if expand is not None and self.model is None:
            logger.info("expand=%r skipped: no model is configured for this knowledge base", expand)
        elif expand is not None and self.model is not None:
            extra = await expand_query(self.model, query, expand)
            # A hypothetical answer is a document, not a query: match it by meaning only.
            extra_mode: SearchMode = "vector" if expand == "hyde" else mode
            searches.extend((q, extra_mode) for q in extra)
        if len(searches) == 1:
            hits = await self.index.search(query, limit=k, collection=self.namespace, mode=mode)
            weight = await self._vector_weight(query, mode) if explain else None
            found = (hit_from_index(h, weight=weight, explain=explain) for h in hits)
            return Hits(found, hits.warning)
        searched = [  # each query's candidates, then one fused ranking
            await self.index.search(
                text, limit=max(k, FUSION_CANDIDATES), collection=self.namespace, mode=search_mode
            )
            for text, search_mode in searches
        ]
        return fused_hits(searched, k)

    async def _vector_weight(self, query: str, mode: SearchMode) -> float:
        """The vector weight the index fuses `query` with in `mode`."""
        if mode != "hybrid":
            return 1.0 if mode == "vector" else 0.0
        return (await self.index.stored_fusion()).for_query(query)

    async def documents(self) -> list[Document]:
        """Every document of this namespace, sorted by title."""
        records = await self.index.find(self.namespace + _DOCS)
        docs = [document_from_record(r) for r in records]
        return sorted(docs, key=lambda d: (d.title, d.doc_id))

    async def document_text(self, doc_id: str) -> tuple[Document, str] | None:
        """A document and its Markdown, or None when there is no such document."""
        found = await self.index.get([doc_id], collection=self.namespace + _DOCS)
        if not found:
            return None
        return document_from_record(found[0]), str(found[0].payload.get("markdown", ""))

    async def stats(self) -> dict[str, Any]:
        """Documents and chunks in this namespace; `embedder` is the one the store's vectors
        were made with (a store is read with the embedder it records), `opened_with` the one
        this instance was given; `embedding_warning` and `missing_vectors` while the embedder
        fails."""
        recorded = await self.index.recorded_embedder()
        return {
            "namespace": self.namespace,
            "documents": await self.index.count(self.namespace + _DOCS),
            "chunks": await self.index.count(self.namespace),
            "embedder": recorded[0] if recorded is not None else self.embedder.name,
            "opened_with": self.embedder.name,
            **await embedding_health(self.index, self.namespace),
        }

    # -- removing -------------------------------------------------------------------------------

    async def remove(self, doc_id: str) -> bool:
        """Remove a document and its chunks in one write; False when there was none."""
        found = await self.index.get([doc_id], collection=self.namespace + _DOCS)
        if not found:
            return False
        await self.index.write((), self._document_keys(found[0]))
        self._changed()
        return True

    async def clear(self) -> int:
        """Remove every document of this namespace in one write; returns how many there were."""
        documents = await self.index.find(self.namespace + _DOCS)
        doomed = [key for d in documents for key in self._document_keys(d)]
        if doomed:
            await self.index.write((), doomed)
            self._changed()
        return len(documents)

    def _document_keys(self, document: Record) -> list[tuple[str, str]]:
        """The (collection, id) of a document record and of each of its chunks."""
        count = int(document.payload.get("chunks", 0))
        chunks = [(self.namespace, chunk_id(document.id, i)) for i in range(count)]
        return [*chunks, (self.namespace + _DOCS, document.id)]

    async def close(self) -> None:
        if self._owns_index:
            await self.index.close()

    async def __aenter__(self) -> KnowledgeBase:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


def check_namespace(namespace: str) -> str:
    if not isinstance(namespace, str) or not _NAMESPACE.match(namespace):
        raise KnowledgeBaseError(
            f"namespace {namespace!r}: use 1-64 letters, digits, '_', '-', '.' or ':', "
            "starting with a letter or digit"
        )
    return namespace
