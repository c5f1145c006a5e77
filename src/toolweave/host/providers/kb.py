"""The `kb` and `notes` providers: the knowledge base and notes in `toolweave serve`.

`kb` publishes `kb_add`, `kb_search` and `kb` over a `KnowledgeBase` in `[serve].data_dir`
(or Postgres + Qdrant when `[kb].dsn` and `[kb].qdrant_url` are set), ingests `[kb].paths` when
the server starts, re-syncs them whenever files change (added, edited, deleted), and serves each
document's Markdown as an MCP resource `kb://<namespace>/<doc_id>` (through the host's catalog
hook, read from the store per request; clients get `list_changed` after every change). Tools
never read files: `kb add` takes text only, so the paths an operator configured are the only
files the server opens. `notes` publishes the `note` tool over a `NoteStore` in
`[serve].data_dir/notes`.

```toml
[kb]
paths = ["docs"]          # files and folders to ingest and watch (relative to this file)
namespace = "default"
embedder = "auto"         # auto (WordLlama), minilm, e5, use, hash, openai-compat:<url>#<model>
watch = true              # re-ingest [kb].paths on change
model = ""                # e.g. "openai:gpt-4o-mini": enables kb ask and mqe/hyde
max_docs = 10000
max_result_chars = 8000
max_file_bytes = 33554432 # a bigger file is refused before it is read
convert_timeout = 60.0    # seconds per markitdown conversion; its process is killed past this
max_unzipped_bytes = 268435456  # a DOCX/PPTX/XLSX/EPUB holding more uncompressed is refused
max_convert_memory = 1073741824 # bytes of heap of the conversion worker (RLIMIT_DATA)
max_chunk_chars = 6000    # characters of a chunk, whatever its token count
dsn = ""                  # Postgres DSN and Qdrant URL: the scale-out backend
qdrant_url = ""
scopes = false            # true: each MCP session adds to its own documents and searches them
                          # with the shared ones ([kb].namespace, [kb].paths); changing the
                          # shared ones needs the admin's approval (the console)

[kb.embed_retry]          # a failing embedder, as [memory.embed_retry] (memory provider)
attempts = 3              # tries of one embedding call before search falls back to keywords
backoff = 0.5             # seconds before the second try, doubled before each further one
recheck = 30.0            # seconds searches stay keyword-only before the embedder is retried

[notes]
embedder = "auto"
```
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import Field, model_validator

from toolweave.host.config import HostConfig
from toolweave.host.providers.memory import EmbedRetrySection
from toolweave.host.sections import Section
from toolweave.kb.chunking import DEFAULT_MAX_CHUNK_CHARS
from toolweave.kb.convert import (
    DEFAULT_CONVERT_TIMEOUT,
    DEFAULT_MAX_CONVERT_MEMORY,
    DEFAULT_MAX_FILE_BYTES,
    DEFAULT_MAX_UNZIPPED_BYTES,
)
from toolweave.mcp.server import ResourceCatalog
from toolweave.storage.retrieval.backend import check_backend
from toolweave.tools.base import Tool

if TYPE_CHECKING:
    from toolweave.kb import KnowledgeBase, NoteStore

logger = logging.getLogger("toolweave.host.providers.kb")

RESOURCE_SCHEME = "kb://"
MIME_TYPE = "text/markdown"


KB_FILE = "kb.db"
NOTES_FOLDER = "notes"


class KBSection(Section):
    """`[kb]`, validated (see the module docstring for each key and its default)."""

    paths: list[str] = Field(default_factory=list)
    namespace: str = "default"
    embedder: str = "auto"
    watch: bool = True
    model: str = ""
    max_docs: int = Field(10_000, gt=0)
    max_result_chars: int = Field(8000, gt=0)
    max_file_bytes: int = Field(DEFAULT_MAX_FILE_BYTES, gt=0)
    convert_timeout: float = Field(DEFAULT_CONVERT_TIMEOUT, gt=0)
    max_unzipped_bytes: int = Field(DEFAULT_MAX_UNZIPPED_BYTES, gt=0)
    max_convert_memory: int = Field(DEFAULT_MAX_CONVERT_MEMORY, gt=0)
    max_chunk_chars: int = Field(DEFAULT_MAX_CHUNK_CHARS, gt=0)
    dsn: str = ""
    qdrant_url: str = ""
    scopes: bool = False
    embed_retry: EmbedRetrySection = Field(default_factory=EmbedRetrySection)

    @model_validator(mode="after")
    def _backend(self) -> KBSection:
        check_backend(self.dsn, self.qdrant_url)
        return self

    def resolved_paths(self, source: Path | None) -> list[Path]:
        """`paths` resolved against the folder of the toolweave.toml they are written in."""
        base = source.parent if source is not None else Path.cwd()
        return [(base / Path(p).expanduser()).resolve() for p in self.paths]


class NotesSection(Section):
    """`[notes]`: the notes provider's embedder."""

    embedder: str = "auto"


def kb_settings(config: HostConfig) -> KBSection:
    """`[kb]` of `config` (validated when the config was parsed)."""
    return config.section("kb", KBSection)


def open_knowledge_base(config: HostConfig, settings: KBSection | None = None) -> KnowledgeBase:
    """The knowledge base `[kb]` describes (what `serve` and the `kb` CLI both open)."""
    from toolweave.kb import KnowledgeBase
    from toolweave.kb.convert import ConversionLimits
    from toolweave.storage.retrieval import IndexSettings

    settings = settings or kb_settings(config)
    limits = ConversionLimits(
        settings.max_file_bytes,
        settings.convert_timeout,
        max_unzipped_bytes=settings.max_unzipped_bytes,
        max_convert_memory=settings.max_convert_memory,
    )
    model = None
    if settings.model:
        from toolweave.llm import model_from_string

        model = model_from_string(settings.model)
    return KnowledgeBase(
        config.data_dir / KB_FILE,
        settings.embedder,
        settings.namespace,
        index=IndexSettings(
            dsn=settings.dsn or None,
            qdrant_url=settings.qdrant_url or None,
            embed_retry=settings.embed_retry.retry(),
        ),
        model=model,
        max_docs=settings.max_docs,
        max_chunk_chars=settings.max_chunk_chars,
        conversion=limits,
    )


class KBCatalog(ResourceCatalog):
    """The knowledge base's documents as MCP resources (an `MCPServer` `CatalogSource`), read
    from the store on every request, so the listing is never stale."""

    def __init__(self, kb: KnowledgeBase) -> None:
        self.kb = kb

    def _uri(self, doc_id: str) -> str:
        return f"{RESOURCE_SCHEME}{self.kb.namespace}/{doc_id}"

    async def resources(self) -> list[dict[str, Any]]:
        return [
            {
                "uri": self._uri(doc.doc_id),
                "name": doc.doc_id,
                "title": doc.title,
                "description": doc.source or "added as text",
                "mimeType": MIME_TYPE,
            }
            for doc in await self.kb.documents()
        ]

    async def resource_templates(self) -> list[dict[str, Any]]:
        return [
            {
                "uriTemplate": RESOURCE_SCHEME + "{namespace}/{doc_id}",
                "name": "kb-document",
                "description": "A knowledge-base document as Markdown",
                "mimeType": MIME_TYPE,
            }
        ]

    async def read_resource(self, uri: str) -> dict[str, Any] | None:
        prefix = f"{RESOURCE_SCHEME}{self.kb.namespace}/"
        if not uri.startswith(prefix):
            return None  # another namespace or scheme: "resource not found"
        found = await self.kb.document_text(uri[len(prefix) :])
        if found is None:
            return None
        return {"contents": [{"uri": uri, "mimeType": MIME_TYPE, "text": found[1]}]}


class KBProvider:
    """Publishes the knowledge base's tools and documents (see the module docstring)."""

    name = "kb"

    def __init__(self, config: HostConfig) -> None:
        self.settings = kb_settings(config)
        self.paths = self.settings.resolved_paths(config.source)
        self.kb_path = config.data_dir / KB_FILE
        self.kb = open_knowledge_base(config, self.settings)
        self._on_catalog: Callable[[str], None] | None = None
        self._watcher: asyncio.Task[None] | None = None
        self.synced = asyncio.Event()
        """Set once the start-up ingest, or a watched re-sync, is done."""
        self._unsubscribe = self.kb.subscribe(self._changed)

    @classmethod
    def store_files(cls, config: HostConfig) -> list[Path]:
        """The SQLite file this provider opens (checked before it is made)."""
        return [] if kb_settings(config).dsn else [config.data_dir / KB_FILE]

    def describe(self) -> str:
        where = "the [kb].dsn database" if self.settings.dsn else str(self.kb_path)
        watched = f", ingesting and watching {len(self.paths)} [kb].paths" if self.paths else ""
        return (
            f"kb_add, kb_search and kb over {where}{watched} "
            "(kb remove and clear ask unless allowed)"
        )

    async def tools(self) -> list[Tool]:
        from toolweave.kb import knowledge_base_tools

        settings = self.settings
        return knowledge_base_tools(
            self.kb, max_result_chars=settings.max_result_chars, scoped=settings.scopes
        )

    def catalog(
        self,
        allowed: Callable[[str], bool],
        *,
        ready: Callable[[], Awaitable[None]],
        on_change: Callable[[str], None],
    ) -> KBCatalog:
        """The documents as resources; `on_change("resources")` after every change.

        (`allowed` and `ready` concern downstream servers; the knowledge base is local.)
        """
        self._on_catalog = on_change
        return KBCatalog(self.kb)

    async def start(self) -> None:
        """Ingest `[kb].paths` (resuming: unchanged files are skipped), then watch them."""
        from toolweave.kb.ingest import ingest_paths

        if self.paths:
            summary = await ingest_paths(self.kb, self.paths, prune=True)
            for error in summary.failed.values():
                logger.warning("[kb].paths: skipped %s", error)
        self.synced.set()
        if self.paths and self.settings.watch:
            self._watcher = asyncio.get_running_loop().create_task(self._watch())

    async def _watch(self) -> None:
        from toolweave.kb.ingest import watch_paths

        async for _summary in watch_paths(self.kb, self.paths):
            self.synced.set()

    def _changed(self) -> None:
        """After any write (a tool, the watcher): clients hear `resources/list_changed`."""
        if self._on_catalog is not None:
            with contextlib.suppress(RuntimeError):  # no running loop: nothing is served
                self._on_catalog("resources")

    async def close(self) -> None:
        self._unsubscribe()
        if self._watcher is not None:
            self._watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watcher
        await self.kb.close()


class NotesProvider:
    """Publishes the `note` tool over Markdown notes in `[serve].data_dir/notes`."""

    name = "notes"

    def __init__(self, config: HostConfig) -> None:
        from toolweave.kb import NoteStore

        embedder = config.section("notes", NotesSection).embedder
        self.folder = config.data_dir / NOTES_FOLDER
        self.store: NoteStore = NoteStore(self.folder, embedder=embedder)

    @classmethod
    def store_files(cls, config: HostConfig) -> list[Path]:
        """The SQLite file of the notes' search index (checked before it is made)."""
        from toolweave.kb.notes import NOTES_INDEX_FILE

        return [config.data_dir / NOTES_FOLDER / NOTES_INDEX_FILE]

    def describe(self) -> str:
        return (
            f"the note tool over Markdown files in {self.folder} (note delete asks unless allowed)"
        )

    async def tools(self) -> list[Tool]:
        from toolweave.kb import NoteTool

        return [NoteTool(self.store)]

    async def close(self) -> None:
        await self.store.close()
