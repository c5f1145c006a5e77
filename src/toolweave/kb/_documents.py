"""One document on its way into the knowledge base: its spec, its hash, its index records.

`KnowledgeBase` decides what a document is (unchanged, a duplicate, added or replaced); this
module turns one into what the index stores: a record per chunk, headed by the document's
title and heading path so both are indexed and embedded, and one document record.

The title is embedded only there, with its document's text: the document record's text is empty,
so it costs no embedding and no words (it is read by id or payload, never searched), and a
query naming the title finds the chunks. A store written before keeps each title as its document
record's text (indexed and embedded, still never searched) until that document is written again.
"""

from __future__ import annotations

import dataclasses
import hashlib
import time
import unicodedata
from pathlib import Path
from typing import Any

from toolweave.kb.chunking import Chunk, Unit, chunk_markdown
from toolweave.kb.convert import CONVERSION_REVISION, ConversionReport
from toolweave.kb.results import AddResult, citation
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
    chunking: tuple[int, int, Unit, int]
    """chunk size, overlap, unit and the most characters of a chunk"""
    file_hash: str | None = None
    """A file's `file_digest`: an unchanged file is known without converting it again."""


def document_records(
    namespace: str, spec: Spec, content_hash: str, old: Record | None
) -> tuple[list[Record], list[tuple[str, str]], Record]:
    """The chunk records of a document, the stale chunks of its previous version to delete,
    and its document record."""
    size, overlap, unit, max_chars = spec.chunking
    chunks = chunk_markdown(spec.markdown, size, overlap, unit=unit, max_chars=max_chars)
    records = [chunk_record(namespace, spec.doc_id, spec.title, i, c) for i, c in enumerate(chunks)]
    old_count = int(old.payload.get("chunks", 0)) if old else 0
    stale = [(namespace, chunk_id(spec.doc_id, i)) for i in range(len(chunks), old_count)]
    document = Record(
        spec.doc_id,
        "",
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
            **file_fields(spec),
        },
        collection=namespace + DOCS_SUFFIX,
    )
    return records, stale, document


def file_digest(path: str | Path) -> tuple[Path, str | None]:
    """The file's resolved path and the SHA-256 of its bytes and of the conversion revision
    (None when it cannot be read: converting it then says why)."""
    resolved = Path(path).expanduser().resolve()
    sha = hashlib.sha256(str(CONVERSION_REVISION).encode())
    try:
        with resolved.open("rb") as f:
            while block := f.read(1 << 20):
                sha.update(block)
    except OSError:
        return resolved, None
    return resolved, sha.hexdigest()


def file_fields(spec: Spec) -> dict[str, Any]:
    """What a document record keeps of its file: its digest and conversion report."""
    if spec.file_hash is None:
        return {}
    return {"file_hash": spec.file_hash, "report": dataclasses.asdict(spec.report)}


def unchanged_file(document: Record, file_hash: str | None, doc_id: str) -> AddResult | None:
    """The result for the file of `doc_id` when its bytes are those `document` was added from
    ("unchanged" when it is that document, "duplicate" of it when another file), else None."""
    payload = document.payload
    if file_hash is None or payload.get("file_hash") != file_hash:
        return None
    report = ConversionReport(**payload["report"])
    chunks, title = int(payload.get("chunks", 0)), str(payload.get("title", ""))
    if document.id == doc_id:
        return AddResult(doc_id, title, "unchanged", chunks, report)
    return AddResult(doc_id, title, "duplicate", chunks, report, document.id)


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
