"""Serving Agent Skills by the skills extension (SEP-2640, `io.modelcontextprotocol/skills`).

A `ServedSkill` is one skill as a server publishes it: its name and its files, `SKILL.md` first.
`MCPServer.add_skills(...)` takes skills (or a coroutine function returning the current ones,
asked on every request so a library that changes is never stale); the server then declares the
extension, answers `skills/list` (paginated) and `skills/get` with each skill's entry (the URI
of its `SKILL.md`, the frontmatter parsed from that file, and every file with a `sha256:` digest
of the bytes served and their size) and, unless told another catalog serves them, serves the
files themselves as `skill://<name>/<path>` resources (listed in `resources/list`, the
`SKILL.md` under the skill's name and description, as the extension asks).

A skill whose `SKILL.md` has no frontmatter, whose frontmatter `name` is not the skill's name,
or that is over the extension's limits (`MAX_SKILL_RESOURCES` files, `MAX_SKILL_TOTAL_BYTES`)
is refused: with a `ValueError` naming it when given directly, logged and left out when a source
returns it.
"""

from __future__ import annotations

import base64
import hashlib
import inspect
import logging
import mimetypes
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

from toolweave.mcp.server._catalog import ResourceCatalog
from toolweave.mcp.shared.errors import INVALID_PARAMS, JSONRPCError
from toolweave.storage.errors import FrontmatterError
from toolweave.storage.files import split_frontmatter

logger = logging.getLogger("toolweave.mcp.server")

SKILL_URI_SCHEME = "skill://"
MANIFEST = "SKILL.md"
MAX_SKILL_RESOURCES = 512
"""The extension's limit of files per skill (`SKILL.md` included); a bigger skill is refused."""
MAX_SKILL_TOTAL_BYTES = 16 * 1024 * 1024
"""The extension's limit of a skill's total size in bytes; a bigger skill is refused."""

SkillSource = Callable[[], Awaitable[Iterable["ServedSkill"]]]
"""A coroutine function returning the skills to serve now."""
EntrySource = Callable[[], Awaitable[Iterable[dict[str, Any]]]]
"""A coroutine function returning ready `skills/list` entries (another server's, republished)."""


@dataclass(frozen=True, slots=True)
class SkillFile:
    """One file of a served skill: its path inside the skill, its content and its type. Text is
    served as text and hashed as its UTF-8 bytes; bytes are served as a base64 blob."""

    path: str
    content: str | bytes
    mime_type: str = "text/plain"

    @property
    def data(self) -> bytes:
        """The bytes the digest and the size cover."""
        return self.content if isinstance(self.content, bytes) else self.content.encode("utf-8")


@dataclass(frozen=True, slots=True)
class ServedSkill:
    """A skill served by the extension: `files` holds `SKILL.md` and every other file."""

    name: str
    files: tuple[SkillFile, ...]

    @classmethod
    def from_folder(cls, folder: str | Path) -> ServedSkill:
        """Every non-hidden file of a skill folder (UTF-8 files as text, others as bytes); a
        symlink that leads outside the folder is left out. The name is the frontmatter's."""
        root = Path(folder)
        real = root.resolve()
        files: list[SkillFile] = []
        for path in sorted(p for p in root.rglob("*") if p.is_file()):
            rel = path.relative_to(root).as_posix()
            if any(part.startswith(".") or part == "__pycache__" for part in rel.split("/")):
                continue
            if not path.resolve().is_relative_to(real):
                continue
            data = path.read_bytes()
            try:
                content: str | bytes = data.decode("utf-8")
            except UnicodeDecodeError:
                content = data
            files.append(SkillFile(rel, content, file_type(rel)))
        manifest = next((f for f in files if f.path == MANIFEST), None)
        if manifest is None or not isinstance(manifest.content, str):
            raise ValueError(f"{root} has no readable {MANIFEST}; a skill folder needs one")
        frontmatter = _frontmatter(manifest.content, str(root / MANIFEST))
        return cls(str(frontmatter.get("name")), tuple(files))

    def uri(self, path: str = MANIFEST) -> str:
        return f"{SKILL_URI_SCHEME}{quote(self.name, safe='')}/{quote(path)}"

    def manifest(self) -> SkillFile:
        for file in self.files:
            if file.path == MANIFEST:
                return file
        raise ValueError(f"skill {self.name!r} has no {MANIFEST}")

    def entry(self) -> dict[str, Any]:
        """The extension's entry: `uri`, `frontmatter` (parsed from `SKILL.md` itself, so the
        two are identical) and `resources`; `ValueError` naming what breaks the extension."""
        where = f"skill {self.name!r}"
        manifest = self.manifest()
        if not isinstance(manifest.content, str):
            raise ValueError(f"{where}: {MANIFEST} must be text")
        frontmatter = _frontmatter(manifest.content, f"{where}: {MANIFEST}")
        if frontmatter.get("name") != self.name:
            raise ValueError(
                f"{where}: the frontmatter name is {frontmatter.get('name')!r}; the extension "
                "needs it equal to the skill's name, the last segment of its URI"
            )
        if not isinstance(frontmatter.get("description"), str):
            raise ValueError(f"{where}: the frontmatter needs a description (a string)")
        total = sum(len(f.data) for f in self.files)
        if len(self.files) > MAX_SKILL_RESOURCES or total > MAX_SKILL_TOTAL_BYTES:
            raise ValueError(
                f"{where} has {len(self.files)} files, {total} bytes; the extension allows "
                f"{MAX_SKILL_RESOURCES} files and {MAX_SKILL_TOTAL_BYTES} bytes per skill"
            )
        return {
            "uri": self.uri(),
            "frontmatter": frontmatter,
            "resources": [
                {
                    "uri": self.uri(f.path),
                    "digest": "sha256:" + hashlib.sha256(f.data).hexdigest(),
                    "size": len(f.data),
                }
                for f in self.files
            ],
        }


def file_type(path: str) -> str:
    """The MIME type a skill file is served with (`text/markdown` for Markdown)."""
    if path.endswith(".md"):
        return "text/markdown"
    return mimetypes.guess_type(path)[0] or "text/plain"


def _frontmatter(text: str, where: str) -> dict[str, Any]:
    try:
        parsed, _body = split_frontmatter(text, where)
    except FrontmatterError as exc:
        raise ValueError(str(exc)) from exc
    if parsed is None:
        raise ValueError(f"{where} has no frontmatter (a --- block with name and description)")
    return parsed


class SkillServing(ResourceCatalog):
    """The skills of one server: its `skills/list` and `skills/get` answers and, when it serves
    the files itself, a `CatalogSource` of their resources."""

    def __init__(self) -> None:
        self.sources: list[SkillSource] = []
        self.entry_sources: list[EntrySource] = []
        # Entries of the skills last returned, by object: a source that returns the same
        # `ServedSkill` objects again is not hashed again.
        self._entries: dict[int, tuple[ServedSkill, dict[str, Any]]] = {}

    def add(self, skills: SkillSource | Iterable[ServedSkill]) -> None:
        if callable(skills) and inspect.iscoroutinefunction(skills):
            self.sources.append(skills)
            return
        fixed = list(skills)  # type: ignore[arg-type]  # an iterable, the callable case is above
        for skill in fixed:
            if not isinstance(skill, ServedSkill):
                raise TypeError(
                    f"add_skills() takes ServedSkill objects or a coroutine function returning "
                    f"them, got {type(skill).__name__}"
                )
            skill.entry()  # refused now, naming the skill, rather than left out later

        async def listed() -> Sequence[ServedSkill]:
            return fixed

        self.sources.append(listed)

    async def current(self) -> list[tuple[ServedSkill, dict[str, Any]]]:
        """Every servable skill with its entry, sorted by name (the first of a name wins)."""
        found: dict[str, tuple[ServedSkill, dict[str, Any]]] = {}
        known: dict[int, tuple[ServedSkill, dict[str, Any]]] = {}
        for source in self.sources:
            for skill in await source():
                cached = self._entries.get(id(skill))
                if cached is not None and cached[0] is skill:  # the same object: same entry
                    entry = cached[1]
                else:
                    try:
                        entry = skill.entry()
                    except ValueError as exc:
                        logger.warning("not serving a skill: %s", exc)
                        continue
                known[id(skill)] = (skill, entry)
                found.setdefault(skill.name, (skill, entry))
        self._entries = known  # what no source returns any more is forgotten
        return [found[name] for name in sorted(found)]

    @property
    def offered(self) -> bool:
        """Whether this server serves skills at all (it then declares the extension)."""
        return bool(self.sources or self.entry_sources)

    async def entries(self) -> list[dict[str, Any]]:
        """Its own skills' entries, then the entry sources' as they come; an entry whose URI
        is already taken is left out (logged)."""
        found = [entry for _, entry in await self.current()]
        taken = {entry["uri"] for entry in found}
        for source in self.entry_sources:
            for entry in await source():
                if entry.get("uri") in taken:
                    logger.warning("not serving a second skill at %s", entry.get("uri"))
                    continue
                taken.add(entry.get("uri"))
                found.append(entry)
        return found

    async def get(self, uri: Any) -> dict[str, Any]:
        """`skills/get`: the entry of the skill whose `SKILL.md` is `uri`, else -32602."""
        if not isinstance(uri, str):
            raise JSONRPCError(INVALID_PARAMS, "skills/get needs params.uri, a skill's URI")
        for entry in await self.entries():
            if entry.get("uri") == uri:
                return {"skill": entry}
        raise JSONRPCError(
            INVALID_PARAMS, f"no skill is served at {uri}; skills/list names the skills"
        )

    # -- the files, as a CatalogSource ------------------------------------------------------

    async def resources(self) -> list[dict[str, Any]]:
        listed = []
        for skill, entry in await self.current():
            for file in skill.files:
                item = {"uri": skill.uri(file.path), "name": f"{skill.name}/{file.path}"}
                if file.path == MANIFEST:
                    frontmatter = entry["frontmatter"]
                    item.update(name=skill.name, description=frontmatter["description"])
                listed.append({**item, "mimeType": file.mime_type})
        return listed

    async def read_resource(self, uri: str) -> dict[str, Any] | None:
        if not uri.startswith(SKILL_URI_SCHEME):
            return None
        name, _, path = uri[len(SKILL_URI_SCHEME) :].partition("/")
        for skill, _ in await self.current():
            if skill.name != unquote(name):
                continue
            for file in skill.files:
                if file.path == unquote(path):
                    item: dict[str, Any] = {"uri": uri, "mimeType": file.mime_type}
                    if isinstance(file.content, str):
                        item["text"] = file.content
                    else:
                        item["blob"] = base64.b64encode(file.content).decode("ascii")
                    return {"contents": [item]}
        return None
