"""Skills over MCP as a client (SEP-2640, the `io.modelcontextprotocol/skills` extension).

A server that declares the extension lists its skills with `skills/list`: per skill the URI of
its `SKILL.md`, the frontmatter (name, description, ...) and every file with a `sha256:` digest
and a byte size. The catalog is all a host reads up front (progressive disclosure: the files are
fetched only when a skill is loaded, never on connection, listing or approval). Every file read
is verified against its entry before use: a size that differs or a digest that does not match
is a verification failure, and a `SKILL.md` whose own frontmatter differs from the listed one in
any field is refused too, so a server cannot list a harmless skill and serve another.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from toolweave.mcp.shared.constants import SKILLS_EXTENSION
from toolweave.mcp.shared.errors import MCPError, SkillVerificationError
from toolweave.storage.errors import FrontmatterError
from toolweave.storage.files import split_frontmatter

if TYPE_CHECKING:
    from toolweave.mcp.client.client import MCPClient

MAX_SKILL_FILE_BYTES = 1_000_000
"""The largest skill file a client reads (by its listed size, then its real one)."""
DEFAULT_SKILLS_TIMEOUT = 5.0
"""Seconds one server has to list its skills (`MCPManager(skills_timeout=...)`, or
`skills_timeout` in its `mcpServers` entry): an agent lists them before a run, which a slow
server must not hold up by the whole request timeout."""


@dataclass(frozen=True, slots=True)
class MCPSkillFile:
    """One file of a listed skill: where it is and what it must hash to."""

    uri: str
    digest: str | None = None
    size: int | None = None


@dataclass(frozen=True, slots=True)
class MCPSkill:
    """One entry of `skills/list` (level 1: nothing of it has been fetched)."""

    uri: str
    name: str
    description: str
    frontmatter: dict[str, Any] = field(default_factory=dict)
    files: list[MCPSkillFile] = field(default_factory=list)
    server: str = ""

    @classmethod
    def from_wire(cls, raw: dict[str, Any], server: str) -> MCPSkill:
        frontmatter = raw.get("frontmatter")
        frontmatter = dict(frontmatter) if isinstance(frontmatter, dict) else {}
        uri = raw.get("uri")
        if not isinstance(uri, str) or not isinstance(frontmatter.get("name"), str):
            raise ValueError(f"skill entry without a uri or a frontmatter name: {str(raw)[:120]}")
        files = [
            MCPSkillFile(
                str(f["uri"]),
                f.get("digest") if isinstance(f.get("digest"), str) else None,
                f.get("size") if isinstance(f.get("size"), int) else None,
            )
            for f in raw.get("resources") or []
            if isinstance(f, dict) and isinstance(f.get("uri"), str)
        ]
        return cls(
            uri=uri,
            name=frontmatter["name"],
            description=str(frontmatter.get("description", "")),
            frontmatter=frontmatter,
            files=files,
            server=server,
        )

    def file(self, uri: str) -> MCPSkillFile:
        for entry in self.files:
            if entry.uri == uri:
                return entry
        raise MCPError(f"skill {self.name!r} on {self.server!r} lists no file {uri!r}")


def offers_skills(client: MCPClient) -> bool:
    extensions = client.capabilities.get("extensions")
    return isinstance(extensions, dict) and SKILLS_EXTENSION in extensions


async def list_skills(client: MCPClient) -> list[MCPSkill]:
    """The server's skill catalog (empty when it does not declare the extension); a malformed
    entry is skipped, never hiding the others."""
    if not offers_skills(client):
        return []
    skills: list[MCPSkill] = []
    for raw in await client.paginate("skills/list", "skills"):
        try:
            skills.append(MCPSkill.from_wire(raw, client.name))
        except ValueError as exc:
            client.callbacks.server_log.warning("skipping a skill: %s", exc)
    return skills


async def read_skill_file(
    client: MCPClient, skill: MCPSkill, uri: str, *, max_bytes: int = MAX_SKILL_FILE_BYTES
) -> str:
    """One file of `skill`, verified against its entry (size, then digest); `SKILL.md` also
    against the listed frontmatter. A file listed without a digest or a size, or over
    `max_bytes`, is refused before it is read. Raises `SkillVerificationError`, returning
    nothing."""
    entry = skill.file(uri)
    where = f"skill {skill.name!r} on MCP server {skill.server!r}: {uri}"
    if entry.digest is None or entry.size is None:
        raise SkillVerificationError(
            f"{where} is listed without a digest or a size, so it cannot be verified; not read"
        )
    if entry.size > max_bytes:
        raise SkillVerificationError(
            f"{where} is listed at {entry.size} bytes, over the {max_bytes}-byte limit for a "
            "skill file (MCPManager(max_skill_file_bytes=...)); not read"
        )
    contents = await client.read_resource(uri)
    text = next((c.text for c in contents if c.text is not None), None)
    if text is None:
        raise SkillVerificationError(f"{where} came back without text")
    data = text.encode("utf-8")
    if len(data) != entry.size:
        raise SkillVerificationError(
            f"{where} is {len(data)} bytes, the listing says {entry.size}; not using it"
        )
    algorithm, _, expected = entry.digest.partition(":")
    if algorithm != "sha256" or hashlib.sha256(data).hexdigest() != expected.lower():
        raise SkillVerificationError(f"{where} does not match digest {entry.digest}; not using it")
    if uri == skill.uri:
        _check_frontmatter(skill, text, where)
    return text


async def load_skill(
    client: MCPClient, skill: MCPSkill, *, max_bytes: int = MAX_SKILL_FILE_BYTES
) -> str:
    """Level 2: the verified `SKILL.md` of `skill` (its other files stay unread)."""
    return await read_skill_file(client, skill, skill.uri, max_bytes=max_bytes)


def _check_frontmatter(skill: MCPSkill, text: str, where: str) -> None:
    try:
        parsed, _body = split_frontmatter(text, where)
    except FrontmatterError as exc:
        raise SkillVerificationError(f"{where}: {exc}") from exc
    if parsed != skill.frontmatter:
        fields = sorted(
            key
            for key in set(skill.frontmatter) | set(parsed or {})
            if (parsed or {}).get(key) != skill.frontmatter.get(key)
        )
        raise SkillVerificationError(
            f"{where}: its frontmatter differs from the listing in {', '.join(fields)}; the "
            "skill is not loaded"
        )
