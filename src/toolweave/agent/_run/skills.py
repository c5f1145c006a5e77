"""Skills inside the agent loop: catalog, activation, `allowed-tools`, commands and selection.

`Agent(skills=SkillSettings(library))` hands the run an `AgentSkills`, one of the run's stages
(`toolweave.agent._run.stages`, as memory is): `shape` turns a prompt `/name args` naming a
skill into that skill's command, lets the selector pick a skill up front for models that do not
choose well on their own, and adds the level-1 catalog to the system prompt (recomputed per run,
so a reload or a query past the budget is reflected, and byte-stable otherwise). The skill tools
join the registry, and a skill the model has read (a `skill_read` call that ran and succeeded,
so one a rule, hook or approver refused grants nothing) becomes active: from then until the run
ends, its `allowed-tools` are pre-approved (allow rules joined to the run's governance,
`toolweave.governance.grants`). Nothing is hidden or refused for being unlisted, as in Claude
Code. Remote skills (`library.add_remote(manager)`) are listed before a run's catalog when stale
and read like local ones; their `allowed-tools` grant nothing unless a person trusted the skill
as listed (`RemoteSkill.trust`).
"""

from __future__ import annotations

import os
import weakref
from typing import TYPE_CHECKING

from toolweave.agent._run.stages import RunStage
from toolweave.errors import ConfigError
from toolweave.llm import Message, Model
from toolweave.skills import SkillScope, parse_command, select_skill
from toolweave.tools import Permission, ToolDef

if TYPE_CHECKING:
    from toolweave.agent.session import Session
    from toolweave.skills.settings import SkillSettings
    from toolweave.tools import Tool, ToolInvocation, ToolRegistry


class AgentSkills(RunStage):
    """One agent's view of a `SkillLibrary` (see the module docstring)."""

    def __init__(self, settings: SkillSettings, model: Model) -> None:
        library = settings.library
        selector = settings.selector
        self.library = library
        self.scope = SkillScope(library)
        self.selector: Model | None = model if selector is True else selector or None
        self.catalog_budget_chars = settings.catalog_budget_chars
        self.tools: list[Tool] = library.tools()
        self._stale = False
        self._registry: ToolRegistry | None = None
        me = weakref.ref(self)  # the library must not keep every agent that used it alive

        def mark_stale() -> None:  # may run in a worker thread; the loop re-registers
            agent_skills = me()
            if agent_skills is not None:
                agent_skills._stale = True

        library.subscribe(mark_stale)

    def install(self, registry: ToolRegistry) -> None:
        """Register the skill tools in the agent's registry."""
        for tool in self.tools:
            if tool.name in registry:
                raise ConfigError(
                    f"Agent(skills=...) adds the tool {tool.name!r}, but the agent already has a "
                    "tool of that name; rename or drop yours"
                )
            registry.register(tool)
        self._registry = registry
        # A skill in a folder the agent's own tools can write grants nothing until trusted.
        self.scope.writable = writable_folders(registry)

    def after_tool(self, session: Session, invocation: ToolInvocation) -> None:
        """A skill read successfully becomes active (its grant applies to later calls)."""
        if invocation.name != "skill_read" or not invocation.ok:
            return
        args = invocation.args
        name = args.get("name") if isinstance(args, dict) else None
        if isinstance(name, str) and name in self.library.skills:
            self.scope.activate(session, name)
        elif isinstance(name, str) and name in self.library.remote:
            self.scope.activate_remote(session, self.library.remote[name])

    def offered(self, registry: ToolRegistry) -> list[ToolDef]:
        """The definitions the model sees this turn, after a library reload re-registered the
        skill tools (a skill's `allowed-tools` hide nothing)."""
        if self._stale and self._registry is not None:
            self._stale = False
            for tool in self.tools:  # the skill_read enum changed: bump the registry version
                self._registry.unregister(tool.name)
                self._registry.register(tool)
        return registry.definitions()

    async def shape(
        self, prompt: str, system: Message | None, session: Session, model: Model
    ) -> tuple[str, Message | None]:
        """The prompt as a skill command or with the selector's pick, and the system message
        with the catalog of model-invocable skills after it."""
        await self.library.refresh_remote(force=False)  # remote skills: listed when stale
        prompt = await self._prepare(prompt, session)
        catalog = self.library.catalog(self.catalog_budget_chars, query=prompt)
        instructions = system.text if system is not None else ""
        text = "\n\n".join(part for part in (instructions, catalog) if part)
        return prompt, Message.system(text) if text else None

    async def _prepare(self, prompt: str, session: Session) -> str:
        """A `/name args` prompt becomes the skill's body; otherwise the selector may pick one."""
        parsed = parse_command(prompt)
        if parsed is not None:
            skill = self.library.skills.get(parsed[0])
            if skill is not None and skill.user_invocable:
                self.scope.activate(session, skill.name)
                return skill.command(parsed[1])
        if self.selector is None or self.scope.active(session) is not None:
            return prompt
        chosen = await select_skill(self.library, prompt, self.selector)
        if chosen is None:
            return prompt
        self.scope.activate(session, chosen.name)
        return f'<skill name="{chosen.name}">\n{chosen.body()}\n</skill>\n\n{prompt}'


def writable_folders(registry: ToolRegistry) -> tuple[str, ...]:
    """The real paths of the folders the agent's own shell and file-writing tools can write:
    a skill or command file there may come from a sandboxed call, so it grants only once
    trusted."""
    return tuple(
        os.path.realpath(where)
        for name in registry.names()
        if (where := _writes_under(registry.get(name))) is not None
    )


def _writes_under(tool: Tool | None) -> str | None:
    """The folder a shell or file-writing tool works in (its `permission_cwd`), or None."""
    where = getattr(tool, "permission_cwd", None)
    if tool is None or not isinstance(where, str):
        return None
    return where if tool.permissions & {Permission.SHELL, Permission.WRITE} else None
