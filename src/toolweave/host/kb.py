"""The `kb` and `notes` providers: the knowledge base and notes in `toolweave serve`.

`kb` publishes `kb_add`, `kb_search` and `rag` over a `KnowledgeBase` in `[serve].data_dir`
(or Postgres + Qdrant when `[kb].dsn` and `[kb].qdrant_url` are set), ingests `[kb].paths` when
the server starts, re-syncs them whenever files change (added, edited, deleted), and serves each
document's Markdown as an MCP resource `kb://<namespace>/<doc_id>`, republished (with
`list_changed`) after every change. Tools never read files: `rag add` takes text only, so the
paths an operator configured are the only files the server opens. `notes` publishes the `note`
tool over a `NoteStore` in `[serve].data_dir/notes`.

```toml
[kb]
paths = ["docs"]          # files and folders to ingest and watch (relative to this file)
namespace = "default"
embedder = "auto"         # auto (WordLlama), minilm, hash, openai-compat:<url>#<model>
watch = true              # re-ingest [kb].paths on change
model = ""                # e.g. "openai:gpt-4o-mini": enables rag ask and mqe/hyde
max_docs = 10000
max_result_chars = 8000
dsn = ""                  # Postgres DSN and Qdrant URL: the scale-out backend
qdrant_url = ""

[notes]
embedder = "auto"
```
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolweave.errors import ConfigError
from toolweave.tools.base import Tool

from .config import HostConfig

if TYPE_CHECKING:
    from toolweave.mcp.server import MCPServer
    from toolweave.rag import KnowledgeBase, NoteStore

logger = logging.getLogger("toolweave.host.kb")

RESOURCE_SCHEME = "kb://"
_KB_KEYS = {
    "paths",
    "namespace",
    "embedder",
    "watch",
    "model",
    "max_docs",
    "max_result_chars",
    "dsn",
    "qdrant_url",
}
_NOTES_KEYS = {"embedder"}


@dataclass(slots=True)
class KBSettings:
    """`[kb]`, validated (see the module docstring for each key and its default)."""

    paths: list[Path] = field(default_factory=list)
    namespace: str = "default"
    embedder: str = "auto"
    watch: bool = True
    model: str = ""
    max_docs: int = 10_000
    max_result_chars: int = 8000
    dsn: str = ""
    qdrant_url: str = ""


def _check(table: str, raw: dict[str, Any], known: set[str]) -> None:
    unknown = set(raw) - known
    if unknown:
        raise ConfigError(f"[{table}]: unknown key(s) {sorted(unknown)}; known: {sorted(known)}")


def kb_settings(config: HostConfig) -> KBSettings:
    """`[kb]` of `config`, with errors naming the key and the fix."""
    raw = config.kb
    _check("kb", raw, _KB_KEYS)
    settings = KBSettings()
    base = config.source.parent if config.source is not None else Path.cwd()
    paths = raw.get("paths", [])
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        raise ConfigError(f"[kb].paths must be a list of paths (strings), not {paths!r}")
    settings.paths = [(base / Path(p).expanduser()).resolve() for p in paths]
    for key in ("namespace", "embedder", "model", "dsn", "qdrant_url"):
        if key in raw:
            if not isinstance(raw[key], str):
                raise ConfigError(f"[kb].{key} must be a string, not {raw[key]!r}")
            setattr(settings, key, raw[key])
    if "watch" in raw:
        if not isinstance(raw["watch"], bool):
            raise ConfigError(f"[kb].watch must be true or false, not {raw['watch']!r}")
        settings.watch = raw["watch"]
    for key in ("max_docs", "max_result_chars"):
        if key in raw:
            value = raw[key]
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ConfigError(f"[kb].{key} must be a positive integer, not {value!r}")
            setattr(settings, key, value)
    if bool(settings.dsn) != bool(settings.qdrant_url):
        raise ConfigError("[kb]: the scale-out backend needs both dsn and qdrant_url (or neither)")
    return settings


def open_knowledge_base(config: HostConfig, settings: KBSettings | None = None) -> KnowledgeBase:
    """The knowledge base `[kb]` describes (what `serve` and the `kb` CLI both open)."""
    from toolweave.rag import KnowledgeBase

    settings = settings or kb_settings(config)
    model = None
    if settings.model:
        from toolweave.llm import model_from_string

        model = model_from_string(settings.model)
    if settings.dsn:
        return KnowledgeBase(
            embedder=settings.embedder,
            namespace=settings.namespace,
            dsn=settings.dsn,
            qdrant_url=settings.qdrant_url,
            model=model,
            max_docs=settings.max_docs,
        )
    return KnowledgeBase(
        config.data_dir / "kb.db",
        settings.embedder,
        settings.namespace,
        model=model,
        max_docs=settings.max_docs,
    )


class KBProvider:
    """Publishes the knowledge base's tools and documents (see the module docstring)."""

    name = "kb"

    def __init__(self, config: HostConfig) -> None:
        self.settings = kb_settings(config)
        self.kb = open_knowledge_base(config, self.settings)
        self._server: MCPServer | None = None
        self._watcher: asyncio.Task[None] | None = None
        self._refresh: asyncio.Task[None] | None = None
        self.synced = asyncio.Event()
        """Set once the start-up ingest, or a watched re-sync, is done and its documents are
        published as resources."""
        self._unsubscribe = self.kb.subscribe(self._changed)

    async def tools(self) -> list[Tool]:
        from toolweave.rag import knowledge_base_tools

        return knowledge_base_tools(self.kb, max_result_chars=self.settings.max_result_chars)

    def attach(self, server: MCPServer) -> None:
        from toolweave.mcp.server._catalog import ResourceEntry

        self._server = server
        server.resources.append(
            ResourceEntry(
                RESOURCE_SCHEME + "{namespace}/{doc_id}",
                self._read,
                name="kb-document",
                title=None,
                description="A knowledge-base document as Markdown",
                mime_type="text/markdown",
            )
        )

    async def start(self) -> None:
        """Ingest `[kb].paths` (resuming: unchanged files are skipped), then watch them."""
        from toolweave.rag.ingest import ingest_paths

        if self.settings.paths:
            summary = await ingest_paths(self.kb, self.settings.paths, prune=True)
            for error in summary.failed.values():
                logger.warning("[kb].paths: skipped %s", error)
        await self._publish()
        self.synced.set()
        if self.settings.paths and self.settings.watch:
            self._watcher = asyncio.get_running_loop().create_task(self._watch())

    async def _watch(self) -> None:
        from toolweave.rag.ingest import watch_paths

        async for _summary in watch_paths(self.kb, self.settings.paths):
            await self._publish(notify=True)
            self.synced.set()

    def _changed(self) -> None:
        """After any write: republish the document resources once per burst of changes."""
        if self._server is None or (self._refresh is not None and not self._refresh.done()):
            return
        with contextlib.suppress(RuntimeError):  # no running loop: nothing is being served
            self._refresh = asyncio.get_running_loop().create_task(self._publish(notify=True))

    async def _publish(self, notify: bool = False) -> None:
        from toolweave.mcp.server._catalog import ResourceEntry

        server = self._server
        if server is None:
            return
        namespace = self.kb.namespace
        documents = await self.kb.documents()
        server.resources[:] = [
            r for r in server.resources if not r.uri.startswith(RESOURCE_SCHEME) or r.is_template
        ]
        for doc in documents:
            server.resources.append(
                ResourceEntry(
                    f"{RESOURCE_SCHEME}{namespace}/{doc.doc_id}",
                    self._reader(doc.doc_id),
                    name=doc.doc_id,
                    title=doc.title,
                    description=doc.source or "added as text",
                    mime_type="text/markdown",
                )
            )
        if notify:
            await server.notify_resources_changed()

    def _reader(self, doc_id: str) -> Any:
        async def read() -> str:
            return await self._read(self.kb.namespace, doc_id)

        return read

    async def _read(self, namespace: str, doc_id: str) -> str:
        from toolweave.rag import KnowledgeBaseError

        if namespace != self.kb.namespace:
            raise KnowledgeBaseError(
                f"namespace {namespace!r} is not served; this server serves {self.kb.namespace!r}"
            )
        found = await self.kb.document_text(doc_id)
        if found is None:
            raise KnowledgeBaseError(f"no document {doc_id!r}; list the kb:// resources")
        return found[1]

    async def close(self) -> None:
        self._unsubscribe()
        for task in (self._watcher, self._refresh):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        await self.kb.close()


class NotesProvider:
    """Publishes the `note` tool over Markdown notes in `[serve].data_dir/notes`."""

    name = "notes"

    def __init__(self, config: HostConfig) -> None:
        from toolweave.rag import NoteStore

        _check("notes", config.notes, _NOTES_KEYS)
        embedder = config.notes.get("embedder", "auto")
        if not isinstance(embedder, str):
            raise ConfigError(f"[notes].embedder must be a string, not {embedder!r}")
        self.store: NoteStore = NoteStore(config.data_dir / "notes", embedder=embedder)

    async def tools(self) -> list[Tool]:
        from toolweave.rag import NoteTool

        return [NoteTool(self.store)]

    async def close(self) -> None:
        await self.store.close()
