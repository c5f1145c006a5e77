"""Agent Skills: SKILL.md folders loaded by progressive disclosure, as tools, prompts and commands.

`SkillLibrary` finds skills under the usual roots (`.agents/skills`, `.claude/skills`, then the
user's), `lib.catalog()` is the level-1 listing for a system prompt, `lib.tools()` the tools a
model uses to read, query and run them. Names load on first use, so `import toolweave` stays
light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolweave._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "SkillScope": "active",
    "expand_arguments": "arguments",
    "parse_command": "arguments",
    "SkillError": "errors",
    "InstallReport": "install",
    "SkillLibrary": "library",
    "default_roots": "library",
    "select_skill": "selector",
    "SkillSettings": "settings",
    "Skill": "skill",
    "split_tools": "skill",
    "SkillIssue": "spec",
    "validate_skill": "spec",
}

if TYPE_CHECKING:
    from toolweave.skills.active import SkillScope
    from toolweave.skills.arguments import expand_arguments, parse_command
    from toolweave.skills.errors import SkillError
    from toolweave.skills.install import InstallReport
    from toolweave.skills.library import SkillLibrary, default_roots
    from toolweave.skills.selector import select_skill
    from toolweave.skills.settings import SkillSettings
    from toolweave.skills.skill import Skill, split_tools
    from toolweave.skills.spec import SkillIssue, validate_skill

__all__ = [
    "InstallReport",
    "Skill",
    "SkillError",
    "SkillIssue",
    "SkillLibrary",
    "SkillScope",
    "SkillSettings",
    "default_roots",
    "expand_arguments",
    "parse_command",
    "select_skill",
    "split_tools",
    "validate_skill",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
