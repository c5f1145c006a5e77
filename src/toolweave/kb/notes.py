"""Notes: Markdown files a person can read and edit, searchable like the knowledge base.

Each note is `<id>.md` with YAML frontmatter (id, title, type, tags,
created_at, updated_at) and a Markdown body, and `index.json` maps ids to that metadata. The
files are the truth: the index is rewritten atomically after each change and rebuilt from the
files when it is missing or unreadable. Ids are `note_<UTC timestamp>_<random hex>`, and a note
file is created exclusively, so two writers never take the same id. Every note is also a
document of a `KnowledgeBase` (its own namespace), so `search` is the same hybrid search.
File work runs in a worker thread, never on the event loop.
"""

from __future__ import annotations

import asyncio
import json
import re
import secrets
import threading
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import Field

from toolweave.kb.errors import KnowledgeBaseError, NoteNotFound
from toolweave.kb.knowledge_base import KnowledgeBase
from toolweave.storage.errors import FrontmatterError
from toolweave.storage.files import atomic_write, split_frontmatter
from toolweave.tools.base import ToolAnnotations, action_annotations
from toolweave.tools.function_tool import FunctionTool

INDEX_FILE = "index.json"
NOTES_NAMESPACE = "notes"
NOTES_INDEX_FILE = "notes.db"
"""The search index of a notes folder, inside it."""
DEFAULT_NOTE_TYPE = "general"
DEFAULT_LIST_LIMIT = 50
MAX_NOTE_CHARS = 100_000
"""Largest note body accepted, in characters."""
MAX_NOTE_FIELD_CHARS = 200
"""Longest title, type or tag accepted, in characters."""
MAX_NOTE_TAGS = 50
"""Most tags one note may carry."""
_ID = re.compile(r"^note_\d{8}_\d{6}_[0-9a-f]{6}$")


@dataclass(slots=True)
class Note:
    id: str
    title: str
    type: str = DEFAULT_NOTE_TYPE
    tags: list[str] = field(default_factory=list)
    created_at: str = ""
    updated_at: str = ""
    content: str = ""

    def metadata(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("content")
        return data

    def to_markdown(self) -> str:
        header = yaml.safe_dump(self.metadata(), allow_unicode=True, sort_keys=False)
        return f"---\n{header}---\n\n{self.content.strip()}\n"

    @classmethod
    def from_markdown(cls, text: str, source: str | Path = "note") -> Note:
        """The note in Markdown `text`; `source` (its file) is what errors name."""
        try:
            meta, body = split_frontmatter(text, source)
        except FrontmatterError as exc:
            raise KnowledgeBaseError(str(exc)) from None
        if meta is None:
            raise KnowledgeBaseError(f"{source}: no YAML frontmatter (--- ... ---)")
        return cls(
            id=str(meta["id"]),
            title=str(meta.get("title", "")),
            type=str(meta.get("type", DEFAULT_NOTE_TYPE)),
            tags=[str(t) for t in meta.get("tags") or []],
            created_at=str(meta.get("created_at", "")),
            updated_at=str(meta.get("updated_at", "")),
            content=body.strip(),
        )


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S")


def _tags(tags: list[str] | None) -> list[str]:
    return sorted({t.strip() for t in tags or [] if t.strip()})


class NoteStore:
    """Notes in `directory`, indexed for search in `kb` (namespace "notes" of `notes.db` there)."""

    def __init__(
        self,
        directory: str | Path = "notes",
        kb: KnowledgeBase | None = None,
        *,
        embedder: str = "auto",
    ) -> None:
        self.directory = Path(directory).expanduser()
        self.directory.mkdir(parents=True, exist_ok=True)
        self.kb = kb.namespaced(NOTES_NAMESPACE) if kb is not None else None
        self._owns_kb = kb is None
        self._embedder = embedder
        self._lock = threading.Lock()

    def _kb(self) -> KnowledgeBase:
        if self.kb is None:
            self.kb = KnowledgeBase(
                self.directory / NOTES_INDEX_FILE, self._embedder, NOTES_NAMESPACE
            )
        return self.kb

    # -- files (worker thread) ----------------------------------------------------------------

    def _path(self, note_id: str) -> Path:
        if not _ID.match(note_id):
            raise NoteNotFound(
                f"note_id {note_id!r} is not a note id (note_YYYYMMDD_HHMMSS_xxxxxx); "
                "use action 'list' to see the ids"
            )
        return self.directory / f"{note_id}.md"

    def _read(self, note_id: str) -> Note:
        path = self._path(note_id)
        try:
            return Note.from_markdown(path.read_text(encoding="utf-8"), path)
        except FileNotFoundError:
            raise NoteNotFound(f"no note {note_id!r}; use action 'list' to see the ids") from None

    def _create_file(self, note: Note) -> Note:
        while True:
            stamp = datetime.now(UTC).strftime("%Y%m%d_%H%M%S")
            note.id = f"note_{stamp}_{secrets.token_hex(3)}"
            try:
                with open(self._path(note.id), "x", encoding="utf-8") as f:
                    f.write(note.to_markdown())
                return note
            except FileExistsError:
                continue  # another writer took this id: draw again

    def _replace_file(self, note: Note) -> None:
        atomic_write(self._path(note.id), note.to_markdown())

    def _scan(self) -> dict[str, dict[str, Any]]:
        entries: dict[str, dict[str, Any]] = {}
        for path in sorted(self.directory.glob("note_*.md")):
            try:
                note = Note.from_markdown(path.read_text(encoding="utf-8"), path)
            except (KnowledgeBaseError, KeyError):
                continue  # not a note we wrote; leave it alone
            entries[note.id] = {**note.metadata(), "file_path": str(path)}
        return entries

    def _index(self) -> dict[str, dict[str, Any]]:
        try:
            data = json.loads((self.directory / INDEX_FILE).read_text(encoding="utf-8"))
            if isinstance(data, dict):
                return data
        except (FileNotFoundError, json.JSONDecodeError):
            pass
        return self._rebuild_index()

    def _rebuild_index(self) -> dict[str, dict[str, Any]]:
        entries = self._scan()
        atomic_write(
            self.directory / INDEX_FILE,
            json.dumps(entries, ensure_ascii=False, indent=2, sort_keys=True),
        )
        return entries

    async def _locked(self, fn: Any, *args: Any) -> Any:
        def run() -> Any:
            with self._lock:
                result = fn(*args)
                self._rebuild_index()
                return result

        return await asyncio.to_thread(run)

    # -- API -----------------------------------------------------------------------------------

    async def create(
        self,
        title: str,
        content: str,
        type: str = DEFAULT_NOTE_TYPE,
        tags: list[str] | None = None,
    ) -> Note:
        now = _now()
        note = Note("", title.strip(), type.strip() or DEFAULT_NOTE_TYPE, _tags(tags), now, now)
        note.content = content
        _check_note(note)
        created: Note = await self._locked(self._create_file, note)
        await self._index_note(created)
        return created

    async def read(self, note_id: str) -> Note:
        note: Note = await asyncio.to_thread(self._read, note_id)
        return note

    async def update(
        self,
        note_id: str,
        *,
        title: str | None = None,
        content: str | None = None,
        type: str | None = None,
        tags: list[str] | None = None,
    ) -> Note:
        note = await self.read(note_id)
        note.title = title.strip() if title is not None else note.title
        note.content = content if content is not None else note.content
        note.type = type.strip() if type is not None else note.type
        note.tags = _tags(tags) if tags is not None else note.tags
        _check_note(note)
        note.updated_at = _now()
        await self._locked(self._replace_file, note)
        await self._index_note(note)
        return note

    async def delete(self, note_id: str) -> None:
        path = self._path(note_id)
        await self.read(note_id)  # NoteNotFound names the id
        await self._locked(path.unlink)
        await self._kb().remove(note_id)

    async def list_notes(
        self, type: str | None = None, tag: str | None = None, limit: int = DEFAULT_LIST_LIMIT
    ) -> list[dict[str, Any]]:
        """Note metadata, newest first, optionally of one type or carrying one tag."""
        entries = await asyncio.to_thread(self._index)
        rows = [
            e
            for e in entries.values()
            if (type is None or e.get("type") == type) and (tag is None or tag in e.get("tags", []))
        ]
        rows.sort(key=lambda e: (e.get("updated_at", ""), e.get("id", "")), reverse=True)
        return rows[:limit]

    async def search(self, query: str, limit: int = 5) -> list[dict[str, Any]]:
        """Notes whose passages best match `query` (hybrid search), best first."""
        hits = await self._kb().search(query, k=limit)
        seen: dict[str, dict[str, Any]] = {}
        for hit in hits:
            if hit.doc_id not in seen:
                seen[hit.doc_id] = {
                    "id": hit.doc_id,
                    "title": hit.title,
                    "heading_path": hit.heading_path,
                    "snippet": hit.text,
                    "score": round(hit.score, 6),
                }
        return list(seen.values())

    async def reindex(self) -> int:
        """Index every note file in the search index (after editing files by hand)."""
        entries = await self._locked(self._scan)
        for note_id in entries:
            await self._index_note(await self.read(note_id))
        return len(entries)

    async def _index_note(self, note: Note) -> None:
        metadata = {"type": note.type, "tags": note.tags}
        body = f"# {note.title}\n\n{note.content}"
        await self._kb().add_text(body, note.title, metadata, doc_id=note.id)

    async def close(self) -> None:
        if self._owns_kb and self.kb is not None:
            await self.kb.close()


def _check_note(note: Note) -> None:
    """The one check every write path (create, update) runs before anything is written."""
    if not note.title:
        raise KnowledgeBaseError("title: give the note a title (it is empty)")
    if len(note.content) > MAX_NOTE_CHARS:
        raise KnowledgeBaseError(
            f"content: {len(note.content)} characters is over the {MAX_NOTE_CHARS} limit "
            "(MAX_NOTE_CHARS); split it"
        )
    if len(note.tags) > MAX_NOTE_TAGS:
        raise KnowledgeBaseError(f"tags: {len(note.tags)} is over the {MAX_NOTE_TAGS} limit")
    for name, value in (
        ("title", note.title),
        ("type", note.type),
        *(("tags", t) for t in note.tags),
    ):
        if len(value) > MAX_NOTE_FIELD_CHARS:
            raise KnowledgeBaseError(
                f"{name}: {len(value)} characters is over the {MAX_NOTE_FIELD_CHARS} limit "
                "(MAX_NOTE_FIELD_CHARS); shorten it"
            )


NoteAction = Literal["create", "read", "update", "delete", "list", "search"]
NOTE_READ_ACTIONS = frozenset({"read", "list", "search"})
NOTE_WRITE_ACTIONS = frozenset({"create", "update"})
NOTE_DELETE_ACTIONS = frozenset({"delete"})


class NoteTool(FunctionTool):
    """The `note` tool: one tool, six actions, over a `NoteStore` (one tool keeps the model's
    tool list short)."""

    def __init__(self, store: NoteStore) -> None:
        self.store = store
        super().__init__(
            self._run, name="note", permissions=["write"], destructive=True, primary_arg="action"
        )

    def annotations_for(self, args: Mapping[str, Any]) -> ToolAnnotations:
        """Per action: list, read and search are read-only, create and update write, delete
        destroys (what governance asks about by default)."""
        return action_annotations(
            self.annotations, args.get("action"), reads=NOTE_READ_ACTIONS,
            writes=NOTE_WRITE_ACTIONS, deletes=NOTE_DELETE_ACTIONS,
        )  # fmt: skip

    async def _run(
        self,
        action: Annotated[NoteAction, Field(description="What to do with notes")],
        note_id: Annotated[
            str | None, Field(description="The note's id (read, update, delete)")
        ] = None,
        title: Annotated[str | None, Field(description="Title (create, update)")] = None,
        content: Annotated[str | None, Field(description="Markdown body (create, update)")] = None,
        note_type: Annotated[
            str | None,
            Field(description="Kind of note, e.g. task_state, conclusion, blocker, general"),
        ] = None,
        tags: Annotated[list[str] | None, Field(description="Tags (create, update)")] = None,
        query: Annotated[str | None, Field(description="Search text (search)")] = None,
        limit: Annotated[int, Field(ge=1, le=100, description="Most results (list, search)")] = 10,
    ) -> dict[str, Any]:
        """Keep structured notes (task state, conclusions, blockers) as Markdown files.

        Actions: create (title, content, note_type, tags), read (note_id), update (note_id and
        the fields to change), delete (note_id), list (note_type, tags[0] filter), search (query).
        """
        store = self.store
        if action == "create":
            if title is None or content is None:
                raise KnowledgeBaseError("create needs title and content")
            note = await store.create(title, content, note_type or DEFAULT_NOTE_TYPE, tags)
            return {"created": note.metadata()}
        if action == "list":
            tag = tags[0] if tags else None
            notes = await store.list_notes(note_type, tag, limit)
            return {"notes": [_without_host_path(entry) for entry in notes]}
        if action == "search":
            if not query:
                raise KnowledgeBaseError("search needs query")
            return {"results": await store.search(query, limit)}
        if not note_id:
            raise KnowledgeBaseError(f"{action} needs note_id; use action 'list' to find it")
        if action == "read":
            note = await store.read(note_id)
            return {**note.metadata(), "content": note.content}
        if action == "update":
            note = await store.update(
                note_id, title=title, content=content, type=note_type, tags=tags
            )
            return {"updated": note.metadata()}
        await store.delete(note_id)
        return {"deleted": note_id}


def _without_host_path(entry: dict[str, Any]) -> dict[str, Any]:
    """A listed note as a tool returns it: its file by name inside the notes folder, never the
    host's absolute path (an MCP client has no use for it, and it names the host's home)."""
    shown = {k: v for k, v in entry.items() if k != "file_path"}
    if "file_path" in entry:
        shown["file"] = Path(str(entry["file_path"])).name
    return shown
