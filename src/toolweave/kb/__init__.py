"""Knowledge base (RAG) and notes: documents to cited passages, on the shared storage layer.

`KnowledgeBase` converts documents to Markdown, splits them into heading-aware chunks and keeps
them in the retrieval index memory uses (keyword, vector and hybrid search); `NoteStore` and
`NoteTool` keep Markdown notes searchable through the same index. Names load on first use so
`import toolweave` stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolweave._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "Chunk": "chunking",
    "chunk_markdown": "chunking",
    "ConversionReport": "convert",
    "ConvertedDocument": "convert",
    "convert_file": "convert",
    "DocumentError": "errors",
    "KnowledgeBaseError": "errors",
    "NoteNotFound": "errors",
    "AddResult": "results",
    "Document": "results",
    "KBHit": "results",
    "KnowledgeBase": "knowledge_base",
    "Note": "notes",
    "NoteStore": "notes",
    "NoteTool": "notes",
    "KBTool": "tools",
    "knowledge_base_tools": "tools",
}

if TYPE_CHECKING:
    from toolweave.kb.chunking import Chunk, chunk_markdown
    from toolweave.kb.convert import ConversionReport, ConvertedDocument, convert_file
    from toolweave.kb.errors import DocumentError, KnowledgeBaseError, NoteNotFound
    from toolweave.kb.knowledge_base import KnowledgeBase
    from toolweave.kb.notes import Note, NoteStore, NoteTool
    from toolweave.kb.results import AddResult, Document, KBHit
    from toolweave.kb.tools import KBTool, knowledge_base_tools

__all__ = [
    "AddResult",
    "Chunk",
    "ConversionReport",
    "ConvertedDocument",
    "Document",
    "DocumentError",
    "KBHit",
    "KBTool",
    "KnowledgeBase",
    "KnowledgeBaseError",
    "Note",
    "NoteNotFound",
    "NoteStore",
    "NoteTool",
    "chunk_markdown",
    "convert_file",
    "knowledge_base_tools",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
