"""What the knowledge base returns: search hits, the outcome of an add, document listings.

Kept apart from `KnowledgeBase` so tools, the CLI and the host can name these types without the
store, and so the mapping from index records to them lives in one place.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from toolweave.kb.chunking import HEADING_SEPARATOR
from toolweave.kb.convert import ConversionReport
from toolweave.storage.retrieval.index import Record

AddStatus = Literal["added", "replaced", "unchanged", "duplicate"]
ProgressCallback = Callable[[int, int], None]
"""`(embedded, total)` after each embedding batch of one document."""


@dataclass(frozen=True, slots=True)
class Hit:
    """One retrieved chunk and where it came from (`start:end` code points of the document)."""

    text: str
    doc_id: str
    title: str
    heading_path: str | None
    score: float
    start: int
    end: int

    def as_json(self) -> dict[str, Any]:
        """The hit as a JSON object (what tools and `toolweave kb search --json` print)."""
        return {
            "doc_id": self.doc_id,
            "title": self.title,
            "heading_path": self.heading_path,
            "text": self.text,
            "score": round(self.score, 6),
            "start": self.start,
            "end": self.end,
        }

    @property
    def citation(self) -> str:
        """`title > heading path` (the title once, when the path already starts with it)."""
        path = self.heading_path
        if not path:
            return self.title
        if path.split(HEADING_SEPARATOR)[0] == self.title:
            return path
        return f"{self.title}{HEADING_SEPARATOR}{path}"


@dataclass(frozen=True, slots=True)
class AddResult:
    """What adding one document did; `report` is its conversion report."""

    doc_id: str
    title: str
    status: AddStatus
    chunks: int
    report: ConversionReport
    duplicate_of: str | None = None


@dataclass(frozen=True, slots=True)
class Document:
    """One document of a namespace as `documents()` lists it (its Markdown is not included)."""

    doc_id: str
    title: str
    source: str | None
    chunks: int
    characters: int
    metadata: dict[str, Any]


def hit_from_record(record: Record, score: float) -> Hit:
    p = record.payload
    heading_path = p.get("heading_path")
    text = record.text
    if heading_path and text.startswith(heading_path + "\n"):
        text = text[len(heading_path) + 1 :]
    return Hit(
        text, str(p["doc_id"]), str(p["title"]), heading_path, score, int(p["start"]), int(p["end"])
    )


def document_from_record(record: Record) -> Document:
    p = record.payload
    return Document(
        record.id,
        str(p.get("title", "")),
        p.get("source"),
        int(p.get("chunks", 0)),
        int(p.get("characters", 0)),
        dict(p.get("metadata") or {}),
    )
