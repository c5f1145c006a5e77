"""The knowledge base as tools: `kb_add`, `kb_search` and the all-in-one `kb`.

`kb_add` stores text the model has (600-character chunks with 60 of overlap, small enough that a
passage is about one thing; duplicates skipped, `max_docs`), `kb_search` returns the best passages
with their document title and heading path, and `kb` bundles add, search, ask, stats, list,
remove and clear: `ask` answers from the passages with numbered citations when a model is
configured, `list` pages through the documents (id, title, source, size) and `remove` deletes one
by id. Reading files from a tool is off unless `file_roots` is given: a path must then resolve
inside one of those directories. Every result is capped at `max_result_chars` (8000 by default),
so one search or listing cannot flood the context.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field

from toolweave.errors import ConfigError
from toolweave.kb.errors import KnowledgeBaseError
from toolweave.kb.expand import Expansion, answer
from toolweave.kb.knowledge_base import DEFAULT_SEARCH_K, MAX_SEARCH_K, KnowledgeBase
from toolweave.kb.results import AddResult, Document, KBHit
from toolweave.kb.scopes import SCOPES, Scope, ScopedHit, ScopedKnowledgeBase
from toolweave.storage.retrieval.embed_guard import Hits
from toolweave.storage.retrieval.index import SearchMode
from toolweave.tools.base import ToolAnnotations, action_annotations
from toolweave.tools.context import ToolContext
from toolweave.tools.errors import ApprovalRequired
from toolweave.tools.function_tool import FunctionTool
from toolweave.tools.shaping import DEFAULT_MAX_CHARS, truncate_text

if TYPE_CHECKING:
    from collections.abc import Sequence

    from toolweave.tools.base import Tool

CATEGORY = "knowledge"
"""The registry category of the knowledge-base tools (a read-only subagent keeps them)."""
KB_ADD_CHUNK_CHARS = 600
KB_ADD_OVERLAP_CHARS = 60
NO_MODEL_NOTE = "query expansion skipped: no model is configured for the knowledge base"

Query = Annotated[str, Field(min_length=1, description="What to look for, in any language")]
K = Annotated[int, Field(ge=1, le=MAX_SEARCH_K, description="How many passages to return")]
Mode = Annotated[
    SearchMode,
    Field(description="hybrid (keywords + meaning), keyword (exact words) or vector (meaning)"),
]
Expand = Annotated[
    Expansion | None,
    Field(description="mqe: also search rewordings; hyde: also a hypothetical answer"),
]


def _added(result: AddResult) -> dict[str, Any]:
    out: dict[str, Any] = {
        "doc_id": result.doc_id,
        "title": result.title,
        "status": result.status,
        "chunks": result.chunks,
    }
    if result.duplicate_of:
        out["duplicate_of"] = result.duplicate_of
    if result.report.warnings:
        out["warnings"] = result.report.warnings
    return out


def _listed(docs: Sequence[Document], offset: int, max_chars: int) -> dict[str, Any]:
    """Documents from `offset` on, as many as fit `max_chars` of JSON (at least one), with the
    offset of the next page when some are left."""
    page: list[dict[str, Any]] = []
    used = 0
    for doc in docs[offset:]:
        entry = {
            "doc_id": doc.doc_id,
            "title": doc.title,
            "source": doc.source,
            "chunks": doc.chunks,
            "characters": doc.characters,
        }
        used += len(json.dumps(entry, ensure_ascii=False))
        if page and used > max_chars:
            break
        page.append(entry)
    out: dict[str, Any] = {"total": len(docs), "documents": page}
    if offset + len(page) < len(docs):
        out["next_offset"] = offset + len(page)
    return out


def _hits(hits: Sequence[KBHit | ScopedHit], max_chars: int) -> list[dict[str, Any]]:
    """Hits as JSON (with their scope when scoped), their texts cut so that all of them
    together fit `max_chars`."""
    out: list[dict[str, Any]] = []
    left = max_chars
    for item in hits:
        hit = item.hit if isinstance(item, ScopedHit) else item
        if left <= 0:
            break
        text = truncate_text(hit.text, left) if len(hit.text) > left else hit.text
        left -= len(text)
        out.append({**item.as_json(), "text": text})
    return out


class _KnowledgeBaseTools:
    """Shared behaviour of the three tools over one knowledge base."""

    def __init__(
        self,
        kb: KnowledgeBase,
        max_result_chars: int = DEFAULT_MAX_CHARS,
        file_roots: Sequence[str | Path] = (),
        scoped: bool = False,
    ) -> None:
        if max_result_chars < 1:
            raise ConfigError(f"max_result_chars must be positive, not {max_result_chars}")
        self.kb = kb
        self.max_result_chars = max_result_chars
        self.file_roots = [Path(r).expanduser().resolve() for r in file_roots]
        self.scopes = ScopedKnowledgeBase(kb) if scoped else None
        self.session_id: str | None = None
        """The caller's session, for a scoped search of its documents and the shared ones."""
        self.searched: tuple[Scope, ...] = SCOPES

    def bound(self, ctx: ToolContext, scope: Scope | None, action: str) -> _KnowledgeBaseTools:
        """These tools for one call: unscoped as they are; scoped, over the scope the call
        names (its session's by default; search and ask without a scope read both). Changing
        the shared scope needs an admin's approval."""
        if self.scopes is None:
            return self
        if scope == "global" and action not in KB_READ_ACTIONS and not ctx.tool_call_approved:
            raise ApprovalRequired(
                f"{action} on the shared (global) knowledge base, which only an admin changes",
                kind="admin",
            )
        one = copy.copy(self)
        one.session_id = ctx.session_id
        if action in ("search", "ask"):
            one.searched = (scope,) if scope is not None else SCOPES
        else:
            one.kb = self.scopes.scope(scope or "session", ctx.session_id)
            one.scopes = None
        return one

    async def _find(
        self, query: str, k: int, mode: SearchMode, expand: Expansion | None
    ) -> Hits[KBHit | ScopedHit]:
        if self.scopes is None:
            hits = await self.kb.search(query, k=k, mode=mode, expand=expand)
            return Hits(hits, hits.warning)
        found = await self.scopes.search(query, self.session_id, k, mode, expand, self.searched)
        return Hits(found, found.warning)

    async def add(self, title: str | None, content: str | None, file_path: str | None) -> Any:
        if file_path:
            return _added(await self.kb.add_file(self._allowed(file_path)))
        if not content:
            raise KnowledgeBaseError("add needs content (the text to store) or file_path")
        result = await self.kb.add_text(
            content,
            title,
            chunk_size=KB_ADD_CHUNK_CHARS,
            chunk_overlap=KB_ADD_OVERLAP_CHARS,
            unit="chars",
        )
        return _added(result)

    def _allowed(self, file_path: str) -> Path:
        if not self.file_roots:
            raise KnowledgeBaseError(
                "file_path: adding files from a tool is disabled; pass the text as content, or "
                "configure file roots (KnowledgeBase tools file_roots=..., or [kb].paths)"
            )
        path = Path(file_path).expanduser().resolve()
        if not any(path.is_relative_to(root) for root in self.file_roots):
            roots = ", ".join(str(r) for r in self.file_roots)
            raise KnowledgeBaseError(f"file_path {file_path!r} is not inside {roots}")
        return path

    async def search(
        self, query: str, k: int, mode: SearchMode, expand: Expansion | None
    ) -> dict[str, Any]:
        hits = await self._find(query, k, mode, expand)
        out: dict[str, Any] = {"results": _hits(hits, self.max_result_chars)}
        if hits.warning:
            out["warning"] = hits.warning
        if expand is not None and self.kb.model is None:
            out["note"] = NO_MODEL_NOTE
        return out

    async def ask(self, question: str, k: int, expand: Expansion | None) -> dict[str, Any]:
        hits = await self._find(question, k, "hybrid", expand)
        passages = _hits(hits, self.max_result_chars)
        citations = [
            {"n": i, "doc_id": p["doc_id"], "title": p["title"], "heading_path": p["heading_path"]}
            for i, p in enumerate(passages, start=1)
        ]
        warning = {"warning": hits.warning} if hits.warning else {}
        if self.kb.model is None:
            return {
                **warning,
                "answer": None,
                "note": "no model is configured, so these are the passages to answer from",
                "passages": passages,
                "citations": citations,
            }
        cited = [_cited(h, p["text"]) for h, p in zip(hits, passages, strict=False)]
        text = await answer(self.kb.model, question, cited)
        answer_text = truncate_text(text, self.max_result_chars)
        return {**warning, "answer": answer_text, "citations": citations}


def _cited(item: KBHit | ScopedHit, text: str) -> str:
    hit = item.hit if isinstance(item, ScopedHit) else item
    return f"({hit.citation})\n{text}"


def knowledge_base_tools(
    kb: KnowledgeBase,
    *,
    max_result_chars: int = DEFAULT_MAX_CHARS,
    file_roots: Sequence[str | Path] = (),
    scoped: bool = False,
) -> list[Tool]:
    """`kb_add`, `kb_search` and `kb` over `kb`. `scoped=True`: each session adds to its own
    documents and searches them with `kb`'s own, the shared scope (`toolweave.kb.scopes`)."""
    shared = _KnowledgeBaseTools(kb, max_result_chars, file_roots, scoped)

    async def kb_add(
        ctx: ToolContext,
        content: Annotated[str, Field(min_length=1, description="The text to store (Markdown)")],
        title: Annotated[str | None, Field(description="Short title; default: first line")] = None,
    ) -> dict[str, Any]:
        """Store text in the knowledge base so it can be searched later.

        Long text is split into passages; the same title and content are stored only once.
        """
        result: dict[str, Any] = await shared.bound(ctx, None, "add").add(title, content, None)
        return result

    async def kb_search(
        ctx: ToolContext,
        query: Query,
        k: K = DEFAULT_SEARCH_K,
        mode: Mode = "hybrid",
        expand: Expand = None,
    ) -> dict[str, Any]:
        """Search the knowledge base; returns passages with document title and heading path."""
        return await shared.bound(ctx, None, "search").search(query, k, mode, expand)

    return [
        FunctionTool(
            kb_add, permissions=["write"], destructive=False, idempotent=True, category=CATEGORY
        ),
        FunctionTool(kb_search, read_only=True, category=CATEGORY),
        KBTool(kb, max_result_chars=max_result_chars, file_roots=file_roots, scoped=scoped),
    ]


KBAction = Literal["add", "search", "ask", "stats", "list", "remove", "clear"]
KB_READ_ACTIONS = frozenset({"search", "ask", "stats", "list"})
KB_WRITE_ACTIONS = frozenset({"add"})
KB_DELETE_ACTIONS = frozenset({"remove", "clear"})


class KBTool(FunctionTool):
    """The `kb` tool: add / search / ask / stats / list / remove / clear over one knowledge base,
    for models that handle one tool with actions better than seven tools."""

    def __init__(
        self,
        kb: KnowledgeBase,
        *,
        max_result_chars: int = DEFAULT_MAX_CHARS,
        file_roots: Sequence[str | Path] = (),
        scoped: bool = False,
    ) -> None:
        self._shared = _KnowledgeBaseTools(kb, max_result_chars, file_roots, scoped)
        super().__init__(
            self._run,
            name="kb",
            permissions=["write", "delete"],
            destructive=True,
            category=CATEGORY,
            primary_arg="action",
        )

    @property
    def parameters(self) -> dict[str, Any]:
        """The schema; without file roots (as `toolweave serve` publishes it) `file_path` is
        left out, since every use of it would be refused, and `scope` unless scoped."""
        schema = super().parameters
        hidden = {"file_path"} if not self._shared.file_roots else set()
        hidden |= {"scope"} if self._shared.scopes is None else set()
        properties = {k: v for k, v in schema["properties"].items() if k not in hidden}
        return {**schema, "properties": properties}

    def annotations_for(self, args: Mapping[str, Any]) -> ToolAnnotations:
        """Per action: search, ask, stats and list are read-only, add writes, remove and clear
        destroy."""
        return action_annotations(
            self.annotations,
            args.get("action"),
            reads=KB_READ_ACTIONS,
            writes=KB_WRITE_ACTIONS,
            deletes=KB_DELETE_ACTIONS,
        )

    async def _run(
        self,
        ctx: ToolContext,
        action: Annotated[KBAction, Field(description="What to do")],
        query: Annotated[str | None, Field(description="Question or search text")] = None,
        content: Annotated[str | None, Field(description="Text to add (add)")] = None,
        title: Annotated[str | None, Field(description="Title of added text (add)")] = None,
        file_path: Annotated[
            str | None, Field(description="A document to add, inside the allowed roots (add)")
        ] = None,
        k: K = DEFAULT_SEARCH_K,
        mode: Mode = "hybrid",
        expand: Expand = None,
        doc_id: Annotated[
            str | None, Field(description="The document to remove, as list shows it (remove)")
        ] = None,
        offset: Annotated[
            int, Field(ge=0, description="Documents to skip: next_offset of the last page (list)")
        ] = 0,
        confirm: Annotated[bool, Field(description="Must be true to clear")] = False,
        scope: Annotated[
            Scope | None,
            Field(
                description="session (your documents) or global (shared; an admin changes it); "
                "search and ask read both unless one is named"
            ),
        ] = None,
    ) -> dict[str, Any]:
        """Knowledge base: add text or a document, search it, ask a question answered with
        citations (title > heading path), show stats, list the documents (paged), remove one by
        doc_id, or clear the namespace (confirm=true).
        """
        shared = self._shared.bound(ctx, scope, action)
        if action == "add":
            result: dict[str, Any] = await shared.add(title, content, file_path)
            return result
        if action == "stats":
            return await shared.kb.stats()
        if action == "list":
            docs = await shared.kb.documents()
            return _listed(docs, offset, shared.max_result_chars)
        if action == "remove":
            return await self._remove(shared.kb, doc_id)
        if action == "clear":
            if not confirm:
                raise KnowledgeBaseError("clear removes every document: call it with confirm=true")
            return {"cleared_documents": await shared.kb.clear()}
        if not query:
            raise KnowledgeBaseError(f"{action} needs query")
        if action == "search":
            return await shared.search(query, k, mode, expand)
        return await shared.ask(query, k, expand)

    async def _remove(self, kb: KnowledgeBase, doc_id: str | None) -> dict[str, Any]:
        if not doc_id:
            raise KnowledgeBaseError("remove needs doc_id: call action=list to see the ids")
        if not await kb.remove(doc_id):
            raise KnowledgeBaseError(
                f"doc_id {doc_id!r}: no such document in this namespace; action=list shows the ids"
            )
        return {"removed": doc_id}
