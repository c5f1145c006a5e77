"""The skill tools a model calls: read, resource, data, reload, run, and self-management.

`skill_read` takes the skill name as an enum of the current set (rebuilt on every reload), so
the model cannot invent one; an agent that
reads a skill activates it (its `allowed_tools` are then pre-approved, see `active`).
`skill_run` declares `SHELL`, so it passes the governance gates like any side effect. The
self-management tools (`skill_list`, `skill_install`, `skill_remove`) are opt-in and marked for
admin approval.
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Annotated, Any
from urllib.parse import urlsplit

from pydantic import Field

from toolweave.skills.errors import SkillError
from toolweave.skills.remote import RemoteSkill
from toolweave.skills.scripts import MAX_SCRIPT_OUTPUT_BYTES, SCRIPT_TIMEOUT, run_script
from toolweave.tools.function_tool import FunctionTool
from toolweave.tools.permissions import Permission

if TYPE_CHECKING:
    from toolweave.skills.library import SkillLibrary
    from toolweave.skills.skill import Skill
    from toolweave.skills.sources import Download
    from toolweave.tools.base import Tool
    from toolweave.tools.sandbox import Sandbox

MAX_DATA_LIMIT = 100
"""`skill_data` returns at most this many records per call."""


class _SkillNameTool(FunctionTool):
    """A function tool whose `name` argument is an enum of the library's current skills.

    `skill_read` lists only model-invocable skills; the others list every skill, because a skill
    the user ran as a command may still need its files and scripts.
    """

    def __init__(
        self,
        library: SkillLibrary,
        func: Any,
        *,
        model_only: bool = False,
        remote: bool = True,
        **options: Any,
    ) -> None:
        super().__init__(func, **options)
        self.library = library
        self.model_only = model_only
        self.remote = remote

    @property
    def parameters(self) -> dict[str, Any]:
        skills: list[Skill | RemoteSkill] = [*self.library.skills.values()]
        if self.remote:
            skills.extend(self.library.remote.values())
        names = sorted(
            s.name for s in skills if not (self.model_only and s.disable_model_invocation)
        )
        schema = json.loads(json.dumps(self.schema.parameters))
        schema["properties"]["name"]["enum"] = names
        return schema  # type: ignore[no-any-return]


def skill_tools(
    library: SkillLibrary,
    *,
    self_management: bool = False,
    script_timeout: float = SCRIPT_TIMEOUT,
    script_sandbox: Sandbox | None = None,
    script_max_output_bytes: int = MAX_SCRIPT_OUTPUT_BYTES,
    download: Download | None = None,
) -> list[Tool]:
    """The tools over `library`, sorted by name; scripts run in `script_sandbox` (default: the
    host read-only, a private /tmp, no network), are stopped after `script_timeout` s, and at
    most `script_max_output_bytes` of their output is read. `skill_install` downloads URLs and
    GitHub paths through `download` only (none: local sources and SKILL.md text)."""

    async def skill_read(name: Annotated[str, Field(description="The skill to load.")]) -> str:
        """Load a skill's instructions; follow them, and read its listed files when they say to.

        In a toolweave agent, the tools it lists run without asking for the rest of the run.
        """
        skill = library.find(name)
        if skill.disable_model_invocation:
            raise SkillError(f"skill {name!r} can only be run by the user as the /{name} command")
        if isinstance(skill, RemoteSkill):
            body = await skill.body()
            resources = skill.resources()
            title = f"# Skill: {skill.name} (from MCP server {skill.server!r}, verified)"
        else:
            body = await asyncio.to_thread(skill.body)
            resources = await asyncio.to_thread(skill.resources)
            title = f"# Skill: {skill.name}"
        parts = [title, body]
        if resources:
            parts.append(
                "Files of this skill (read with skill_resource, query data with skill_data):\n"
                + "\n".join(f"- {r}" for r in resources)
            )
        if isinstance(skill, RemoteSkill) and skill.allowed_tools and not skill.trusted():
            parts.append(
                "Not pre-approved (a remote skill no person trusted grants nothing): "
                + ", ".join(skill.allowed_tools)
            )
        elif skill.allowed_tools:
            parts.append(
                f"Pre-approved for this run (no approval asked): {', '.join(skill.allowed_tools)}"
            )
        return "\n\n".join(parts)

    async def skill_resource(
        name: Annotated[str, Field(description="The skill the file belongs to.")],
        path: Annotated[
            str, Field(description="File path relative to the skill, e.g. 'advanced.md'.")
        ],
    ) -> str:
        """Read one file bundled with a skill (a reference, template or data file)."""
        skill = library.find(name)
        if isinstance(skill, RemoteSkill):
            return await skill.read_resource(path)
        return await asyncio.to_thread(skill.read_resource, path)

    async def skill_data(
        name: Annotated[str, Field(description="The skill the data file belongs to.")],
        path: Annotated[str, Field(description="A JSON, JSONL or CSV file of the skill.")],
        query: Annotated[str, Field(description="Words every returned record must contain.")] = "",
        limit: Annotated[int, Field(ge=1, le=MAX_DATA_LIMIT, description="Most records.")] = 5,
    ) -> list[Any]:
        """Query a data file bundled with a skill instead of reading all of it."""
        skill = library.find(name)
        if isinstance(skill, RemoteSkill):
            return await skill.query_data(path, query, limit)
        return await asyncio.to_thread(skill.query_data, path, query, limit)

    async def skill_reload() -> dict[str, Any]:
        """Rescan the skill folders (after skills were edited on disk) and list the remote
        skills again; lists what loaded."""
        await asyncio.to_thread(library.reload)
        await library.refresh_remote()
        return {
            "skills": [*library.skills, *library.remote],
            "warnings": library.warnings,
        }

    async def skill_run(
        name: Annotated[str, Field(description="The skill whose script to run.")],
        script: Annotated[str, Field(description="A file under the skill's scripts/ folder.")],
        args: Annotated[list[str], Field(description="Arguments, passed as-is (no shell).")]
        | None = None,
    ) -> str:
        """Run a script bundled in a skill's scripts/ folder and return its output."""
        return await run_script(
            library.get(name),
            script,
            list(args or []),
            timeout=script_timeout,
            max_output_bytes=script_max_output_bytes,
            sandbox=script_sandbox,
        )

    tools: list[Tool] = [
        _SkillNameTool(library, skill_read, model_only=True, read_only=True, open_world=False),
        _SkillNameTool(library, skill_resource, read_only=True, open_world=False),
        _SkillNameTool(library, skill_data, read_only=True, open_world=False),
        FunctionTool(skill_reload, read_only=True, idempotent=True, open_world=False),
        _SkillNameTool(
            library,
            skill_run,
            remote=False,  # remote skill text is data: never run
            permissions=[Permission.SHELL],
            destructive=True,
            timeout=script_timeout + 5,  # the script's own timeout fires first
        ),
    ]
    if self_management:
        tools.extend(_management_tools(library, download))
    return sorted(tools, key=lambda t: t.name)


def _management_tools(library: SkillLibrary, download: Download | None) -> list[Tool]:
    def skill_list() -> list[dict[str, Any]]:
        """List installed skills with their folders and allowed tools."""
        return [
            {
                "name": s.name,
                "description": s.description,
                "dir": str(s.dir),
                "allowed_tools": s.allowed_tools,
            }
            for s in library.skills.values()
        ]

    async def skill_install(
        source: Annotated[
            str,
            Field(
                description="A skill folder or .zip, SKILL.md text, or (where downloads are "
                "allowed) a zip or SKILL.md URL or github.com/OWNER/REPO/tree/REF/PATH"
            ),
        ],
    ) -> dict[str, Any]:
        """Install a skill into the first skill root (checked first; then reloads)."""
        if download is None and urlsplit(source.strip()).scheme in ("http", "https"):
            raise SkillError(
                "skill_install cannot download here: downloads are off (toolweave serve: "
                "[skills].install_domains; Python: skill_tools(download=...))"
            )
        report = await library.install_from(source, download=download)
        return {
            "name": report.name,
            "path": str(report.path),
            "sha256": report.sha256,
            "scripts": report.scripts,
            "issues": [str(i) for i in report.issues],
        }

    def skill_remove(name: Annotated[str, Field(description="The skill to delete.")]) -> str:
        """Delete an installed skill's folder (then reloads)."""
        return f"removed {library.remove(name)}"

    return [
        FunctionTool(skill_list, read_only=True, open_world=False),
        FunctionTool(
            skill_install, permissions=[Permission.WRITE], open_world=False, admin_approval=True
        ),
        FunctionTool(
            skill_remove,
            permissions=[Permission.DELETE],
            destructive=True,
            open_world=False,
            admin_approval=True,
        ),
    ]
