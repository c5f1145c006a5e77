"""The `skills` provider: Agent Skills for MCP clients that have no skill support of their own.

Every skill becomes the skill tools (as in the library), an MCP prompt `skill.<name>` (its body,
with the arguments expanded, so clients show it as a slash command) and its files as resources
`skill://<name>/<path>` (percent-encoded, so `Agent Development` is
`skill://Agent%20Development/`; a URI is decoded before it is resolved, so the raw spelling
works too). Prompts and resources are answered from the library at request time (a
`CatalogSource`), so they are never stale; when the set changes (a `skill_reload`, install or
remove, or an edit the root watcher notices) the `skill_read` enum is republished and clients
get `list_changed` for tools, prompts and resources.
"""

from __future__ import annotations

import asyncio
import base64
import concurrent.futures
import contextlib
import dataclasses
import logging
import os
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Literal
from urllib.parse import quote, unquote

from pydantic import Field

from toolweave.host.config import HostConfig
from toolweave.host.sandbox_paths import host_files, private_paths
from toolweave.host.sections import Section
from toolweave.mcp.server.skills import ServedSkill, SkillFile
from toolweave.mcp.server.skills import file_type as _mime
from toolweave.skills import Skill, SkillError, SkillLibrary
from toolweave.skills.spec import is_spec_name
from toolweave.tools.base import Tool
from toolweave.tools.sandbox import Sandbox, SandboxLimits
from toolweave.tools.sandbox_limits import (
    DEFAULT_FILE_BYTES,
    DEFAULT_MAX_PROCESSES,
    DEFAULT_MEMORY_BYTES,
    DEFAULT_TMP_BYTES,
)

logger = logging.getLogger("toolweave.host.providers.skills")

PROMPT_PREFIX = "skill."
RESOURCE_SCHEME = "skill://"
_NOT_NAME_CHARACTER = re.compile(r"[^A-Za-z0-9_.-]")
_TEXT_TYPES = ("application/json", "application/x-sh", "application/xml", "application/yaml")


def prompt_name(skill_name: str) -> str:
    """`skill.<name>` in MCP tool-name characters (others become `_`), at most 128 long."""
    return (PROMPT_PREFIX + _NOT_NAME_CHARACTER.sub("_", skill_name))[:128]


def _stamp(skill: Skill, rel: str) -> tuple[int, int]:
    """A listed file's modification time (ns) and size; (-1, -1) when it cannot be read."""
    try:
        info = os.stat(skill.dir / rel)
    except OSError:
        return (-1, -1)
    return (info.st_mtime_ns, info.st_size)


def _served(skill: Skill, rel: str) -> str | bytes:
    """A skill file as served: text (UTF-8, a BOM dropped) for text types, else its bytes."""
    data = skill.read_bytes(rel)
    mime = _mime(rel)
    if mime.startswith("text/") or mime in _TEXT_TYPES:
        return data.decode("utf-8-sig", errors="replace")
    return data


def _listed_file(skill: Skill, rel: str) -> str | bytes:
    """`_served`, for a file `resources()` lists only: a hidden file of the folder (`.env`) or
    a sibling skill's file reached by `..` (one `allow` may leave out) is never published."""
    if rel != "SKILL.md" and rel not in skill.resources():
        raise SkillError(f"skill {skill.name!r} lists no file {rel!r}")
    return _served(skill, rel)


class SkillCatalog:
    """The skills as MCP prompts and resources (an `MCPServer` `CatalogSource`)."""

    def __init__(self, library: SkillLibrary) -> None:
        self.library = library
        # Skill name -> (its files' stamps, the ServedSkill built from them), so skills/list
        # re-reads and re-hashes only skills with a changed file.
        self._served: dict[str, tuple[tuple[tuple[str, tuple[int, int]], ...], ServedSkill]] = {}

    def _prompted(self) -> dict[str, Skill]:
        """Prompt name -> skill, for user-invocable skills (the first of a clashing pair wins)."""
        found: dict[str, Skill] = {}
        for skill in self.library.skills.values():
            if skill.user_invocable:
                found.setdefault(prompt_name(skill.name), skill)
        return found

    async def prompts(self) -> list[dict[str, Any]]:
        return [
            {
                "name": name,
                "title": skill.name,
                "description": skill.description,
                "arguments": [
                    {
                        "name": "arguments",
                        "description": skill.argument_hint or "the text after the command",
                        "required": False,
                    }
                ],
            }
            for name, skill in self._prompted().items()
        ]

    async def get_prompt(self, name: str, arguments: dict[str, Any]) -> dict[str, Any] | None:
        skill = self._prompted().get(name)
        if skill is None:
            return None
        text = await asyncio.to_thread(skill.command, str(arguments.get("arguments", "")))
        return {
            "description": skill.description,
            "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
        }

    async def resources(self) -> list[dict[str, Any]]:
        def listing() -> list[dict[str, Any]]:
            entries = []
            for skill in self.library.skills.values():
                for rel in ["SKILL.md", *skill.resources()]:
                    entry = {
                        "uri": f"{RESOURCE_SCHEME}{quote(skill.name, safe='')}/{quote(rel)}",
                        "name": f"{skill.name}/{rel}",
                        "mimeType": _mime(rel),
                    }
                    if rel == "SKILL.md":  # as the MCP skills extension asks
                        entry.update(name=skill.name, description=skill.description)
                    entries.append(entry)
            return entries

        return await asyncio.to_thread(listing)

    async def resource_templates(self) -> list[dict[str, Any]]:
        return []

    async def read_resource(self, uri: str) -> dict[str, Any] | None:
        if not uri.startswith(RESOURCE_SCHEME):
            return None
        encoded_name, _, encoded_rel = uri[len(RESOURCE_SCHEME) :].partition("/")
        name, rel = unquote(encoded_name), unquote(encoded_rel)
        skill = self.library.skills.get(name)
        if skill is None or not rel:
            return None
        try:
            content = await asyncio.to_thread(_listed_file, skill, rel)
        except SkillError:
            return None  # unlisted (hidden, a sibling's, outside) or missing: "not found"
        item: dict[str, Any] = {"uri": uri, "mimeType": _mime(rel)}
        if isinstance(content, str):
            item["text"] = content
        else:
            item["blob"] = base64.b64encode(content).decode("ascii")
        return {"contents": [item]}

    async def served_skills(self) -> list[ServedSkill]:
        """The spec-named skills as the MCP skills extension serves them (SEP-2640), with the
        same bytes `read_resource` serves; a skill with a file that cannot be served (over
        the size limit) is left out, logged."""

        def build() -> list[ServedSkill]:
            served = []
            for skill in self.library.skills.values():
                if skill.display_name is not None or not is_spec_name(skill.name):
                    continue  # the extension's URI ends in the frontmatter name
                rels = ["SKILL.md", *skill.resources()]
                stamps = tuple((rel, _stamp(skill, rel)) for rel in rels)
                cached = self._served.get(skill.name)
                if cached is not None and cached[0] == stamps:  # no file changed: no re-read
                    served.append(cached[1])
                    continue
                try:
                    files = tuple(SkillFile(rel, _served(skill, rel), _mime(rel)) for rel in rels)
                except SkillError as exc:
                    logger.warning(
                        "skill %r is not served by the MCP extension: %s", skill.name, exc
                    )
                    continue
                self._served[skill.name] = (stamps, ServedSkill(skill.name, files))
                served.append(self._served[skill.name][1])
            return served

        return await asyncio.to_thread(build)

    async def complete(
        self, ref: dict[str, Any], argument: dict[str, Any], context: dict[str, Any]
    ) -> dict[str, Any] | None:
        return None


class SkillsSection(Section):
    """`[skills]`: where the `skills` provider finds skills and what it publishes.

    `roots` are relative to the toolweave.toml they are written in ([] = the usual places);
    `allow` whitelists skill names ([] = every skill found); `scripts` publishes `skill_run`
    (still asked about and ruled as a shell tool); scripts run in the OS sandbox
    (`script_sandbox = "off"` to run them bare), with the network only when `script_network`,
    writing only to a private /tmp and the `script_writable` directories (relative to the
    toolweave.toml), and `script_max_output_bytes` of output read at most, each run bounded by
    `script_memory_bytes`, `script_max_processes`, `script_tmp_bytes` and `script_file_bytes`
    (as `[builtins]`' `sandbox_*` keys); `watch_interval` 0 stops watching the roots.
    `mcp_extension` also publishes the same skills by the MCP skills extension (SEP-2640:
    `skills/list`, `skills/get`, digests of the files already served as resources); only
    spec-named skills, since the extension's URI ends in the frontmatter name.
    """

    roots: list[str] = Field(default_factory=list)
    allow: list[str] = Field(default_factory=list)
    self_management: bool = False
    install_domains: list[str] = Field(default_factory=list)
    scripts: bool = False
    script_timeout: float = Field(60.0, gt=0)
    script_sandbox: Literal["on", "off"] = "on"
    script_network: bool = False
    script_writable: list[str] = Field(default_factory=list)
    script_max_output_bytes: int = Field(1024 * 1024, gt=0)
    script_memory_bytes: int = Field(DEFAULT_MEMORY_BYTES, gt=0)
    script_max_processes: int = Field(DEFAULT_MAX_PROCESSES, gt=0)
    script_tmp_bytes: int = Field(DEFAULT_TMP_BYTES, gt=0)
    script_file_bytes: int = Field(DEFAULT_FILE_BYTES, gt=0)
    watch_interval: float = Field(2.0, ge=0)
    mcp_extension: bool = True

    def sandbox(self, source: Path | None) -> Sandbox:
        """The sandbox `skill_run`'s scripts run in."""
        base = source.parent if source is not None else Path.cwd()
        writable = tuple(str((base / Path(w).expanduser()).resolve()) for w in self.script_writable)
        limits = SandboxLimits(
            self.script_memory_bytes,
            self.script_max_processes,
            self.script_tmp_bytes,
            self.script_file_bytes,
        )
        return Sandbox(
            writable=writable, limits=limits, network=self.script_network, mode=self.script_sandbox
        )

    def root_paths(self, source: Path | None) -> list[Path] | None:
        """The roots resolved against the config file's folder (None: the usual places)."""
        base = source.parent if source is not None else Path.cwd()
        return [base / Path(r).expanduser() for r in self.roots] or None


class SkillsProvider:
    """Publishes a `SkillLibrary` configured by `[skills]` in `toolweave.toml`."""

    name = "skills"

    def __init__(self, config: HostConfig) -> None:
        self.settings = config.section("skills", SkillsSection)
        roots = self.settings.root_paths(config.source)
        self._sandbox = dataclasses.replace(
            self.settings.sandbox(config.source),
            protected=host_files(config, roots),
            hidden=private_paths(config),
        )
        self.library = SkillLibrary(roots, self.settings.allow or None)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._on_added: Callable[[Tool], None] | None = None
        self._on_removed: Callable[[str], None] | None = None
        self._published: set[str] = set()
        self._on_catalog: Callable[[str], None] | None = None
        self._catalog = SkillCatalog(self.library)
        self._fingerprint = self._disk_state()
        self._watcher: asyncio.Task[None] | None = None
        self._pending: asyncio.Task[None] | concurrent.futures.Future[None] | None = None
        self._unsubscribe = self.library.subscribe(self._library_changed)

    def _download(self) -> Callable[[str], Awaitable[tuple[str, bytes]]] | None:
        """`skill_install`'s downloads: only from `[skills].install_domains` (public hosts, the
        fetch tool's rules); none listed, none at all."""
        if not self.settings.install_domains:
            return None
        from toolweave.builtins.fetch import downloader
        from toolweave.skills.install import MAX_INSTALL_BYTES
        from toolweave.skills.sources import DEFAULT_DOWNLOAD_TIMEOUT

        return downloader(
            self.settings.install_domains,
            timeout=DEFAULT_DOWNLOAD_TIMEOUT,
            max_bytes=MAX_INSTALL_BYTES,
            tool="skill_install",
        )

    def _tools(self) -> list[Tool]:
        tools = self.library.tools(
            self_management=self.settings.self_management,
            script_timeout=self.settings.script_timeout,
            script_sandbox=self._sandbox,
            script_max_output_bytes=self.settings.script_max_output_bytes,
            download=self._download(),
        )
        return [
            t
            for t in tools
            if (self.settings.scripts or t.name != "skill_run") and not _no_skill_to_name(t)
        ]

    def describe(self) -> str:
        roots = ", ".join(str(r) for r in self.library.roots) or "no folder"
        return f"Agent Skills (tools, prompts, resources) found in {roots}"

    async def tools(self) -> list[Tool]:
        self._loop = asyncio.get_running_loop()
        tools = self._tools()
        self._published = {t.name for t in tools}
        return tools

    def watch(self, on_added: Callable[[Tool], None], on_removed: Callable[[str], None]) -> None:
        """The host's callbacks for republishing tools (the `skill_read` enum changes, and a
        tool whose skill list becomes empty is withdrawn)."""
        self._on_added = on_added
        self._on_removed = on_removed

    def catalog(
        self,
        allowed: Callable[[str], bool],
        *,
        ready: Callable[[], Awaitable[None]],
        on_change: Callable[[str], None],
    ) -> SkillCatalog:
        """The prompts and resources; `on_change("prompts" | "resources")` on every change.

        (`allowed` and `ready` concern downstream servers; skills are local and always ready.)
        """
        self._on_catalog = on_change
        return self._catalog

    @property
    def served_skills(self) -> Callable[[], Awaitable[list[ServedSkill]]] | None:
        """What the host serves by the MCP skills extension (None when `mcp_extension` is off):
        the skills its resources already serve, with the same bytes."""
        return self._catalog.served_skills if self.settings.mcp_extension else None

    async def start(self) -> None:
        """Poll the roots every `watch_interval` seconds (0 = never) while serving."""
        self._loop = asyncio.get_running_loop()
        if self.settings.watch_interval > 0 and self._watcher is None:
            self._watcher = self._loop.create_task(self._watch())

    async def refresh(self) -> bool:
        """Check the roots once; reload (and notify clients) if anything on disk changed."""
        self._loop = asyncio.get_running_loop()
        state = await asyncio.to_thread(self._disk_state)
        if state == self._fingerprint:
            return False
        self._fingerprint = state
        if not await asyncio.to_thread(self.library.reload):
            self._notify_catalog()  # files came or went inside a skill: resources changed
        return True

    async def close(self) -> None:
        self._unsubscribe()
        task, self._watcher = self._watcher, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _watch(self) -> None:
        while True:
            await asyncio.sleep(self.settings.watch_interval)
            try:
                await self.refresh()
            except Exception:  # a bad edit must not stop the watcher
                logger.exception("skill reload failed; keeping the previous skills")

    def _disk_state(self) -> frozenset[tuple[str, int, int]]:
        """Modification stamps of the roots' folders and SKILL.md files (no file is read)."""
        stamps = set()
        for root in self.library.roots:
            if not root.is_dir():
                continue
            for current, dirs, files in os.walk(root, followlinks=True):
                dirs[:] = [d for d in dirs if not d.startswith(".")]
                for name in (".", *[f for f in files if f == "SKILL.md"]):
                    with contextlib.suppress(OSError):
                        info = os.stat(os.path.join(current, name))
                        stamps.add((os.path.join(current, name), info.st_mtime_ns, info.st_size))
        return frozenset(stamps)

    def _library_changed(self) -> None:
        """Runs in whatever thread reloaded (a sync tool runs in a worker thread)."""
        loop = self._loop
        if loop is None or loop.is_closed():
            return  # not serving yet: prompts and resources are read from the library anyway
        try:
            running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            self._pending = loop.create_task(self._republish())
        else:
            self._pending = asyncio.run_coroutine_threadsafe(self._republish(), loop)

    async def _republish(self) -> None:
        tools = self._tools()
        if self._on_added is not None:
            for tool in tools:  # new objects: the host republishes the skill_read enum
                self._on_added(tool)
        if self._on_removed is not None:
            for name in sorted(self._published - {t.name for t in tools}):
                self._on_removed(name)
        self._published = {t.name for t in tools}
        self._notify_catalog()

    def _notify_catalog(self) -> None:
        if self._on_catalog is not None:
            self._on_catalog("prompts")
            self._on_catalog("resources")


def _no_skill_to_name(tool: Tool) -> bool:
    """True for a tool whose `name` argument is an enum with nothing in it (`skill_read` with no
    skills installed): it could never be called, so it is not published."""
    name = tool.parameters.get("properties", {}).get("name", {})
    return isinstance(name, dict) and name.get("enum") == []
