"""Remote skills: skills another program serves (an MCP server's skills extension, SEP-2640),
joined to a `SkillLibrary` next to the local ones, with the same progressive disclosure.

A `RemoteSkillSource` lists skills (level 1: name, description, frontmatter and the names of
their files, nothing fetched) and reads one file of a listed skill, verified. `MCPManager` is
one: `library.add_remote(manager)`. Level 2 (`await skill.body()`) and level 3
(`await skill.read_resource(path)`) are read only when asked, never on listing.

Naming: a remote skill is called `<server>__<name>` (the server as the MCP manager names it,
two underscores, the skill's own name), as MCP tools are. A spec-named local skill cannot
contain `__`, so the two never meet; a local skill that does carry the very name wins and the
remote one is left out with a warning, so a server can never shadow a skill on disk.

Remote text is data: it is read and shown, never run (`skill_run` refuses remote skills, and
they are not slash commands), and its `allowed-tools` pre-approve nothing until a person trusts
the skill as listed (`skill.trust()`, `toolweave skills trust NAME --mcp FILE`: the trust store
of `toolweave trust`, keyed by server and URI, holding the listed digest of its `SKILL.md`).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import unquote

from toolweave.skills.errors import SkillError
from toolweave.skills.skill import SKILL_FILE, check_data_query, query_records, split_tools
from toolweave.storage.errors import FrontmatterError
from toolweave.storage.files import split_frontmatter
from toolweave.storage.trust import is_trusted_digest, trust_digest

REMOTE_SEPARATOR = "__"
"""Between the server's name and the skill's in a remote skill's name."""


class RemoteFileInfo(Protocol):
    """One listed file of a remote skill."""

    @property
    def uri(self) -> str: ...
    @property
    def digest(self) -> str | None: ...


class RemoteSkillInfo(Protocol):
    """A listed remote skill (`toolweave.mcp.client.skills.MCPSkill` is one)."""

    @property
    def uri(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def frontmatter(self) -> dict[str, Any]: ...
    @property
    def files(self) -> Sequence[RemoteFileInfo]: ...
    @property
    def server(self) -> str: ...


class RemoteSkillSource(Protocol):
    """Where remote skills come from (`toolweave.mcp.MCPManager` is one)."""

    async def skills(self) -> Sequence[RemoteSkillInfo]: ...

    async def read_skill_file(self, skill: Any, uri: str) -> str: ...


def remote_name(server: str, name: str) -> str:
    """The name a remote skill has in a library: `<server>__<name>`."""
    return f"{server}{REMOTE_SEPARATOR}{name}"


@dataclass(frozen=True, slots=True)
class RemoteSkill:
    """A skill served by `source` (see the module docstring); `name` is `<server>__<name>`."""

    name: str
    description: str
    server: str
    info: RemoteSkillInfo  # compared: a new listing (another digest) is a change
    source: RemoteSkillSource = field(compare=False, repr=False)
    allowed_tools: list[str] = field(default_factory=list)
    disable_model_invocation: bool = False
    display_name: None = None  # remote names follow the spec: no display names
    user_invocable: bool = False  # a remote skill is never run as a slash command

    @classmethod
    def of(cls, info: RemoteSkillInfo, source: RemoteSkillSource) -> RemoteSkill:
        frontmatter = info.frontmatter
        return cls(
            name=remote_name(info.server, info.name),
            description=info.description,
            server=info.server,
            info=info,
            source=source,
            allowed_tools=split_tools(frontmatter.get("allowed-tools")),
            disable_model_invocation=frontmatter.get("disable-model-invocation") is True,
        )

    @property
    def title(self) -> str:
        return self.name

    @property
    def where(self) -> str:
        return f"skill {self.info.name!r} of MCP server {self.server!r}"

    @property
    def listed_digest(self) -> str | None:
        """The hex SHA-256 its listing gives for `SKILL.md` (what a read is verified against)."""
        entry = next((f for f in self.info.files if f.uri == self.info.uri), None)
        algorithm, _, digest = (entry.digest or "").partition(":") if entry else ("", "", "")
        return digest.lower() if algorithm == "sha256" and digest else None

    @property
    def listing_digest(self) -> str | None:
        """What a trust is recorded against: the listed `SKILL.md` digest and the listed
        frontmatter hashed together, since the `allowed-tools` a trusted skill grants are read
        from the listing (a server listing the same digest with other tools is not trusted)."""
        digest = self.listed_digest
        if digest is None:
            return None
        listed = json.dumps(self.info.frontmatter, sort_keys=True, ensure_ascii=False, default=str)
        return hashlib.sha256(f"{digest}\n{listed}".encode()).hexdigest()

    @property
    def trust_key(self) -> str:
        """How the trust store names it: `mcp-skill:<server>:<uri of its SKILL.md>`."""
        return f"mcp-skill:{self.server}:{self.info.uri}"

    def trust(self, *, store: str | os.PathLike[str] | None = None) -> None:
        """Record that a person reviewed this skill as listed now: its `allowed-tools` then
        pre-approve like a local skill's while the server lists the same `SKILL.md` (any
        change of its digest or its listed frontmatter ends the trust). `toolweave skills
        trust NAME --mcp FILE`."""
        digest = self.listing_digest
        if digest is None:
            raise SkillError(f"{self.where} is listed without a sha256 digest; cannot trust it")
        trust_digest(self.trust_key, digest, store=store)

    def trusted(self, *, store: str | os.PathLike[str] | None = None) -> bool:
        """Whether a person trusted this skill exactly as it is listed now."""
        digest = self.listing_digest
        return digest is not None and is_trusted_digest(self.trust_key, digest, store=store)

    def _base(self) -> str:
        return self.info.uri[: -len(SKILL_FILE)] if self.info.uri.endswith(SKILL_FILE) else ""

    def resources(self) -> list[str]:
        """The other files of the skill, as listed (level 3 names; nothing is fetched)."""
        base = self._base()
        return sorted(
            unquote(f.uri[len(base) :])
            for f in self.info.files
            if base and f.uri.startswith(base) and f.uri != self.info.uri
        )

    async def _read(self, uri: str) -> str:
        try:
            return await self.source.read_skill_file(self.info, uri)
        except SkillError:
            raise
        except Exception as exc:  # a verification failure, a server gone: the model reads why
            said = str(exc)
            named = self.server in said and self.info.name in said  # the source named both
            raise SkillError(said if named else f"{self.where}: {said}") from exc

    async def body(self) -> str:
        """Level 2: the instructions, read now from the server and verified."""
        text = await self._read(self.info.uri)
        try:
            _, body = split_frontmatter(text, self.where)
        except FrontmatterError as exc:
            raise SkillError(f"{self.where}: {exc}") from exc
        return body.strip("\n")

    async def read_resource(self, rel: str) -> str:
        """Level 3: one listed file, read now and verified."""
        if rel not in self.resources():
            listed = ", ".join(self.resources()[:20]) or "none"
            raise SkillError(f"{self.where} lists no file {rel!r}; its files: {listed}")
        base = self._base()
        uri = next(f.uri for f in self.info.files if unquote(f.uri[len(base) :]) == rel)
        return await self._read(uri)

    async def query_data(self, rel: str, query: str = "", limit: int = 5) -> list[Any]:
        """As `Skill.query_data`, over a listed data file read now."""
        check_data_query(rel, limit)
        text = await self.read_resource(rel)
        return await asyncio.to_thread(query_records, rel, text, query, limit)
