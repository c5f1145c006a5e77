"""One document on its way into the knowledge base: its spec, its hash, its index records.

`KnowledgeBase` decides what a document is (unchanged, a duplicate, added or replaced); this
module turns one into what the index stores: a record per chunk, headed by the document's
title and heading path so both are indexed and embedded, and one document record.
"""

from __future__ import annotations

import dataclasses
import hashlib
import time
import unicodedata
from typing import Any

from toolweave.kb.chunking import Chunk, Unit, chunk_markdown
from toolweave.kb.convert import ConversionReport
from toolweave.kb.results import citation
from toolweave.storage.retrieval.index import Record

DOCS_SUFFIX = "#documents"
"""The collection of a namespace's document records: `<namespace>#documents`."""


def normalize_for_dedupe(text: str) -> str:
    """NFKC, case-folded, whitespace collapsed: what "the same content" compares."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def digest(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()


@dataclasses.dataclass(frozen=True, slots=True)
class Spec:
    """One document to add, converted and titled, before it is compared with the store."""

    doc_id: str
    title: str
    markdown: str
    source: str | None
    metadata: dict[str, Any]
    report: ConversionReport
    chunking: tuple[int, int, Unit]


def document_records(
    namespace: str, spec: Spec, content_hash: str, old: Record | None
) -> tuple[list[Record], list[tuple[str, str]], Record]:
    """The chunk records of a document, the stale chunks of its previous version to delete,
    and its document record."""
    size, overlap, unit = spec.chunking
    chunks = chunk_markdown(spec.markdown, size, overlap, unit=unit)
    records = [chunk_record(namespace, spec.doc_id, spec.title, i, c) for i, c in enumerate(chunks)]
    old_count = int(old.payload.get("chunks", 0)) if old else 0
    stale = [(namespace, chunk_id(spec.doc_id, i)) for i in range(len(chunks), old_count)]
    document = Record(
        spec.doc_id,
        spec.title,
        {
            "kind": "document",
            "title": spec.title,
            "source": spec.source,
            "content_hash": content_hash,
            "chunks": len(chunks),
            "characters": len(spec.markdown),
            "markdown": spec.markdown,
            "metadata": spec.metadata,
            "added_at": time.time(),
        },
        collection=namespace + DOCS_SUFFIX,
    )
    return records, stale, document


def chunk_record(namespace: str, doc_id: str, title: str, i: int, chunk: Chunk) -> Record:
    payload = {
        "doc_id": doc_id,
        "title": title,
        "heading_path": chunk.heading_path,
        "start": chunk.start,
        "end": chunk.end,
        "position": i,
    }
    # The title and heading path head the indexed (and embedded) text, so a query naming
    # the document's title finds its chunks.
    text = f"{citation(title, chunk.heading_path)}\n{chunk.text}"
    return Record(chunk_id(doc_id, i), text, payload, namespace)


def chunk_id(doc_id: str, position: int) -> str:
    return f"{doc_id}:{position:05d}"


def first_line(text: str) -> str:
    line = text.strip().splitlines()[0].lstrip("# ").strip()
    return line[:80] or "untitled"
