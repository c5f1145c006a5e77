"""Downstream resources, templates, prompts and completions, republished by a gateway.

`ProxyCatalog` is an `MCPServer` catalog source over an `MCPManager`: every connected server's
resources and resource templates are listed with their names prefixed `<server>__` (as its tools
are), and its prompts are named `<server>__<prompt>`. Resource URIs are kept as the downstream
server wrote them, so the resource links its tools return stay readable: a read is routed to the
server that listed the URI or whose template matches it. `allowed(server)` is the host policy's
verdict on the server (`mcp:<server>`): a refused server's resources and prompts are neither
listed nor served.

Skills (SEP-2640) are republished too (`skill_entries`, the host's `skills/list` and
`skills/get`): each downstream entry as the server sent it, frontmatter, digests and sizes
included, with one change, its URIs. A skill's name is the last segment of its `skill://` URI
and the `name` in its `SKILL.md`, which the gateway cannot rename without changing the bytes
the digests cover; so the server's name goes in front of the skill's path instead:
`skill://<skill-path>/<file>` of server `docs` is served as `skill://docs/<skill-path>/<file>`
(the server name percent-encoded). Server names are unique in `[mcpServers]`, so two servers'
skills never clash, as their tools never do under `<server>__<tool>`. A read of such a URI is
routed to that server with the URI it wrote and answered with the bytes it returned, so the
digests it computed still verify. Skill files appear in `resources/list` under the same URIs
and their own names (a `SKILL.md` is named as its skill). The same policy governs them: a
refused server's skills are neither listed nor read.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import quote, unquote

from toolweave.mcp.client import MCPClient
from toolweave.mcp.client.manager import MCPManager
from toolweave.mcp.client.servers import TOOL_SEPARATOR
from toolweave.mcp.client.skills import offers_skills
from toolweave.mcp.server.skills import SKILL_URI_SCHEME
from toolweave.mcp.shared.errors import MCPError
from toolweave.mcp.shared.uri_templates import template_pattern

logger = logging.getLogger("toolweave.host.providers.proxy")


class ProxyCatalog:
    """Answers resources/prompts/completion requests from the manager's downstream servers."""

    def __init__(
        self,
        manager: MCPManager,
        allowed: Callable[[str], bool],
        *,
        ready: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.manager = manager
        self.allowed = allowed
        self.ready = ready
        self._uris: dict[str, str] = {}  # uri -> server, from the last listings
        self._templates: list[tuple[re.Pattern[str], str]] = []
        self._template_owners: dict[str, str] = {}  # uriTemplate -> server

    async def _clients(self, capability: str) -> list[tuple[str, MCPClient]]:
        """Connected, allowed servers that declare `capability`, sorted by name."""
        if self.ready is not None:
            await self.ready()
        found = []
        for name, state in sorted(self.manager.servers.items()):
            client = state.client
            if client is None or not state.connected or not self.allowed(name):
                continue
            if isinstance(client.capabilities.get(capability), dict):
                found.append((name, client))
        return found

    async def _list(
        self, capability: str, method: str, key: str
    ) -> list[tuple[str, dict[str, Any]]]:
        items: list[tuple[str, dict[str, Any]]] = []
        for name, client in await self._clients(capability):
            try:
                listed = await client.paginate(method, key)
            except MCPError as exc:
                logger.warning("MCP server %r: %s failed: %s", name, method, exc)
                continue
            items.extend((name, item) for item in listed)
        return items

    async def resources(self) -> list[dict[str, Any]]:
        listed = await self._list("resources", "resources/list", "resources")
        self._uris = {str(item.get("uri")): name for name, item in listed}
        return [
            _prefixed(name, item)
            if not str(item.get("uri")).startswith(SKILL_URI_SCHEME)
            else {**item, "uri": _skill_uri(name, item["uri"])}
            for name, item in listed
        ]

    async def skill_entries(self) -> list[dict[str, Any]]:
        """The `skills/list` entries of every connected, allowed server that offers skills, as
        sent but for their URIs (see the module docstring), by server name."""
        entries: list[dict[str, Any]] = []
        for name, client in await self._clients("extensions"):
            if not offers_skills(client):
                continue
            try:
                listed = await client.paginate("skills/list", "skills")
            except MCPError as exc:
                logger.warning("MCP server %r: skills/list failed: %s", name, exc)
                continue
            for entry in listed:
                if not isinstance(entry.get("uri"), str):
                    logger.warning("MCP server %r: a skill entry without a uri, left out", name)
                    continue
                files = [
                    {**f, "uri": _skill_uri(name, f["uri"])} if isinstance(f.get("uri"), str) else f
                    for f in entry.get("resources") or []
                    if isinstance(f, dict)
                ]
                entries.append({**entry, "uri": _skill_uri(name, entry["uri"]), "resources": files})
        return entries

    def _skill_owner(self, uri: str) -> tuple[MCPClient, str] | None:
        """The connected, allowed server a republished `skill://` URI belongs to, and the URI
        it wrote."""
        if not uri.startswith(SKILL_URI_SCHEME):
            return None
        server, sep, rest = uri[len(SKILL_URI_SCHEME) :].partition("/")
        state = self.manager.servers.get(unquote(server)) if sep else None
        if state is None or state.client is None or not state.connected:
            return None
        if not self.allowed(unquote(server)):
            return None
        return state.client, SKILL_URI_SCHEME + rest

    async def resource_templates(self) -> list[dict[str, Any]]:
        listed = await self._list("resources", "resources/templates/list", "resourceTemplates")
        templates = [
            (str(item["uriTemplate"]), name)
            for name, item in listed
            if isinstance(item.get("uriTemplate"), str)
        ]
        self._templates = [(template_pattern(uri), name) for uri, name in templates]
        self._template_owners = dict(templates)
        return [_prefixed(name, item) for name, item in listed]

    async def _owner(self, uri: str) -> str | None:
        for attempt in range(2):  # the cached listing first, then a fresh one
            owner = self._uris.get(uri) or next(
                (name for pattern, name in self._templates if pattern.match(uri)), None
            )
            if owner is not None and self.allowed(owner):
                return owner
            if attempt == 0:
                await self.resources()
                await self.resource_templates()
        return None

    async def read_resource(self, uri: str) -> dict[str, Any] | None:
        if self.ready is not None:
            await self.ready()
        skill = self._skill_owner(uri)
        if skill is not None:  # the bytes as the server sent them; only the URI is ours
            client, written = skill
            read = await client.request("resources/read", {"uri": written})
            contents = [
                {**c, "uri": uri} if isinstance(c, dict) and c.get("uri") == written else c
                for c in read.get("contents") or []
            ]
            return {**read, "contents": contents}
        if uri.startswith(SKILL_URI_SCHEME):
            return None  # a skill file is served only under its republished URI
        owner = await self._owner(uri)
        state = self.manager.servers.get(owner) if owner else None
        if state is None or state.client is None or not state.connected:
            return None
        return await state.client.request("resources/read", {"uri": uri})

    async def prompts(self) -> list[dict[str, Any]]:
        listed = await self._list("prompts", "prompts/list", "prompts")
        return [
            {**item, "name": f"{name}{TOOL_SEPARATOR}{item.get('name', '')}"}
            for name, item in listed
        ]

    async def _split(self, prefixed: str) -> tuple[MCPClient, str] | None:
        if self.ready is not None:
            await self.ready()
        server, sep, name = prefixed.partition(TOOL_SEPARATOR)
        state = self.manager.servers.get(server) if sep else None
        if state is None or state.client is None or not state.connected:
            return None
        if not self.allowed(server):
            return None
        return state.client, name

    async def get_prompt(self, name: str, arguments: dict[str, Any]) -> dict[str, Any] | None:
        target = await self._split(name)
        if target is None:
            return None
        client, remote = target
        params: dict[str, Any] = {"name": remote}
        if arguments:
            params["arguments"] = arguments
        return await client.request("prompts/get", params)

    async def complete(
        self, ref: dict[str, Any], argument: dict[str, Any], context: dict[str, Any]
    ) -> dict[str, Any] | None:
        if ref.get("type") == "ref/prompt" and isinstance(ref.get("name"), str):
            target = await self._split(ref["name"])
            if target is None:
                return None
            client, remote = target
            forwarded = {**ref, "name": remote}
        elif ref.get("type") == "ref/resource" and isinstance(ref.get("uri"), str):
            if ref["uri"] not in self._template_owners:
                await self.resource_templates()
            owner = self._template_owners.get(ref["uri"])
            state = self.manager.servers.get(owner) if owner else None
            if owner is None or state is None or state.client is None or not self.allowed(owner):
                return None
            client, forwarded = state.client, ref
        else:
            return None
        params: dict[str, Any] = {"ref": forwarded, "argument": argument}
        if context:
            params["context"] = {"arguments": context}
        return await client.request("completion/complete", params)


def _prefixed(server: str, item: dict[str, Any]) -> dict[str, Any]:
    return {**item, "name": f"{server}{TOOL_SEPARATOR}{item.get('name', '')}"}


def _skill_uri(server: str, uri: str) -> str:
    """A downstream skill file's URI as the gateway serves it: `skill://<server>/<skill-path>/
    <file>` (a URI of another scheme is kept as written)."""
    if not uri.startswith(SKILL_URI_SCHEME):
        return uri
    return f"{SKILL_URI_SCHEME}{quote(server, safe='')}/{uri[len(SKILL_URI_SCHEME) :]}"
