"""What the knowledge base returns: search hits, the outcome of an add, document listings.

Kept apart from `KnowledgeBase` so tools, the CLI and the host can name these types without the
store, and so the mapping from index records to them lives in one place.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from toolweave.kb.chunking import HEADING_SEPARATOR
from toolweave.kb.convert import ConversionReport
from toolweave.storage.retrieval.embed_guard import Hits
from toolweave.storage.retrieval.fusion import FUSION_FORMULA
from toolweave.storage.retrieval.index import IndexHit, Record, reciprocal_rank_fusion

AddStatus = Literal["added", "replaced", "unchanged", "duplicate"]
ProgressCallback = Callable[[int, int], None]
"""`(embedded, total)` after each embedding batch of one document."""


def citation(title: str, heading_path: str | None) -> str:
    """`title > heading path` (the title once, when the path already starts with it): the line
    a chunk is indexed and embedded under, and how a hit cites its source."""
    if not heading_path:
        return title
    if heading_path.split(HEADING_SEPARATOR)[0] == title:
        return heading_path
    return f"{title}{HEADING_SEPARATOR}{heading_path}"


@dataclass(frozen=True, slots=True)
class KBHit:
    """One retrieved chunk and where it came from (`start:end` code points of the document).

    `score` is the fused score (0..1); `keyword_rank` and `keyword_score` (bm25) describe the
    keyword match, `vector_score` the cosine (None: that side did not find the chunk). With
    `search(..., explain=True)`, `explanation` holds them with the fusion formula and weight.
    """

    text: str
    doc_id: str
    title: str
    heading_path: str | None
    score: float
    start: int
    end: int
    keyword_rank: int | None = None
    keyword_score: float | None = None
    vector_score: float | None = None
    explanation: dict[str, Any] | None = None

    def as_json(self) -> dict[str, Any]:
        """The hit as a JSON object (what tools and `toolweave kb search --json` print)."""
        out: dict[str, Any] = {
            "doc_id": self.doc_id,
            "title": self.title,
            "heading_path": self.heading_path,
            "text": self.text,
            "score": round(self.score, 6),
            "start": self.start,
            "end": self.end,
        }
        if self.explanation is not None:
            out["explanation"] = self.explanation
        return out

    @property
    def citation(self) -> str:
        """`title > heading path` (the title once, when the path already starts with it)."""
        return citation(self.title, self.heading_path)


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


def hit_from_record(record: Record, score: float) -> KBHit:
    """A hit for a chunk record, its text without the citation line it was indexed under."""
    p = record.payload
    heading_path, title = p.get("heading_path"), str(p["title"])
    text = record.text
    for prefix in (citation(title, heading_path), heading_path):
        if prefix and text.startswith(prefix + "\n"):
            text = text[len(prefix) + 1 :]
            break
    return KBHit(text, str(p["doc_id"]), title, heading_path, score, int(p["start"]), int(p["end"]))


def fused_hits(searched: Sequence[Hits[IndexHit]], k: int) -> Hits[KBHit]:
    """The best `k` of several searches' hits in one ranking (reciprocal rank fusion), with the
    first search's warning (the embedder failed) if any carries one."""
    rankings = [[h.record.id for h in hits] for hits in searched]
    found = {h.record.id: h.record for hits in searched for h in hits}
    fused = reciprocal_rank_fusion(rankings)
    best = sorted(fused, key=lambda key: (-fused[key], key))[:k]
    warning = next((hits.warning for hits in searched if hits.warning), None)
    return Hits((hit_from_record(found[key], fused[key]) for key in best), warning)


def hit_from_index(hit: IndexHit, *, weight: float | None, explain: bool) -> KBHit:
    """A knowledge-base hit for an index hit, with its keyword and vector evidence."""
    found = hit_from_record(hit.record, hit.score)
    explanation = None
    if explain:
        explanation = {
            "keyword_rank": hit.keyword_rank,
            "keyword_score": hit.keyword_score,
            "vector_score": hit.vector_score,
            "fused": hit.score,
            "vector_weight": weight,
            "formula": FUSION_FORMULA,
        }
    return dataclasses.replace(
        found,
        keyword_rank=hit.keyword_rank,
        keyword_score=hit.keyword_score,
        vector_score=hit.vector_score,
        explanation=explanation,
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
