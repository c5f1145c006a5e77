"""The `skills` provider: Agent Skills for MCP clients that have no skill support of their own.

Every skill becomes the skill tools (as in the library), an MCP prompt `skill.<name>` (its body,
with the arguments expanded, so clients show it as a slash command) and its files as resources
`skill://<name>/<path>`. When the set changes (a `skill_reload`/install/remove, or an edit the
root watcher notices) prompts, resources and the `skill_read` enum are republished and clients
get `list_changed`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import mimetypes
import os
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from toolweave.skills import Skill, SkillLibrary
from toolweave.tools.base import Tool

from .config import HostConfig

if TYPE_CHECKING:
    from toolweave.mcp.server import MCPServer

logger = logging.getLogger("toolweave.host.skills")

PROMPT_PREFIX = "skill."
RESOURCE_SCHEME = "skill://"
_NOT_NAME_CHARACTER = re.compile(r"[^A-Za-z0-9_.-]")


def prompt_name(skill_name: str) -> str:
    """`skill.<name>` in MCP tool-name characters (others become `_`), at most 128 long."""
    return (PROMPT_PREFIX + _NOT_NAME_CHARACTER.sub("_", skill_name))[:128]


class SkillsProvider:
    """Publishes a `SkillLibrary` configured by `[skills]` in `toolweave.toml`."""

    name = "skills"

    def __init__(self, config: HostConfig) -> None:
        self.settings = config.skills
        self.library = SkillLibrary(self.settings.roots, self.settings.allow)
        self._server: MCPServer | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._on_added: Callable[[Tool], None] | None = None
        self._prompts: set[str] = set()
        self._fingerprint = self._disk_state()
        self._watcher: asyncio.Task[None] | None = None
        self._pending: asyncio.Task[None] | concurrent.futures.Future[None] | None = None
        self._unsubscribe = self.library.subscribe(self._library_changed)

    def _tools(self) -> list[Tool]:
        tools = self.library.tools(
            self_management=self.settings.self_management,
            script_timeout=self.settings.script_timeout,
        )
        return [t for t in tools if self.settings.scripts or t.name != "skill_run"]

    async def tools(self) -> list[Tool]:
        self._loop = asyncio.get_running_loop()
        return self._tools()

    def watch(self, on_added: Callable[[Tool], None], on_removed: Callable[[str], None]) -> None:
        """The host's callbacks for republishing tools (the `skill_read` enum changes)."""
        self._on_added = on_added

    def attach(self, server: MCPServer) -> None:
        """Register every skill as a prompt and its files as resources on `server`."""
        self._server = server
        self._publish()

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
            await self._republish()  # files came or went inside a skill: resources changed
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
            self._publish()  # not serving yet: only the lists change
            return
        try:
            running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            self._pending = loop.create_task(self._republish())
        else:
            self._pending = asyncio.run_coroutine_threadsafe(self._republish(), loop)

    async def _republish(self) -> None:
        server = self._server
        if server is None:
            return
        self._publish()
        if self._on_added is not None:
            for tool in self._tools():
                self._on_added(tool)
        await server.notify_prompts_changed()
        await server.notify_resources_changed()

    def _publish(self) -> None:
        server = self._server
        if server is None:
            return
        for name in self._prompts:
            server.prompts.pop(name, None)
        self._prompts.clear()
        server.resources[:] = [r for r in server.resources if not r.uri.startswith(RESOURCE_SCHEME)]
        for skill in self.library.skills.values():
            if skill.user_invocable:
                name = prompt_name(skill.name)
                if name in server.prompts:
                    logger.warning("skill %r: prompt %s is taken; not published", skill.name, name)
                    continue
                server.prompt(name=name, title=skill.name, description=skill.description)(
                    _prompt(skill)
                )
                self._prompts.add(name)
            for rel in ["SKILL.md", *skill.resources()]:
                uri = f"{RESOURCE_SCHEME}{skill.name}/{rel}"
                mime = mimetypes.guess_type(rel)[0] or "text/plain"
                if rel.endswith(".md"):
                    mime = "text/markdown"
                server.resource(
                    uri,
                    name=f"{skill.name}/{rel}",
                    description=skill.description if rel == "SKILL.md" else None,
                    mime_type=mime,
                )(_reader(skill, rel, mime))


def _prompt(skill: Skill) -> Callable[..., str]:
    def render(arguments: str = "") -> str:
        return skill.command(arguments)

    hint = skill.argument_hint or "the text after the command"
    render.__doc__ = f"Run the {skill.name} skill.\n\nArgs:\n    arguments: {hint}\n"
    return render


def _reader(skill: Skill, rel: str, mime: str) -> Callable[[], Any]:
    def read() -> str | bytes:
        if rel == "SKILL.md":
            return skill.path.read_text(encoding="utf-8-sig", errors="replace")
        data = skill.read_bytes(rel)
        if mime.startswith("text/") or mime in ("application/json", "application/x-sh"):
            return data.decode("utf-8", errors="replace")
        return data

    read.__name__ = f"skill_resource_{skill.name}"
    return read
