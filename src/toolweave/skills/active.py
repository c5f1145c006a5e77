"""`allowed_tools` enforcement: while a skill is active, only its tools are offered and run.

A `SkillScope` remembers the active skill per session (any weak-referenceable key: the agent
uses its `Session`). Reading a skill with `skill_read`, or the user running it as `/name`,
activates it; from then on only the tools the skill allows (plus the skill tools) are offered,
and any other call is refused with an error naming the allowed ones. A skill without
`allowed-tools` restricts nothing. By itself the scope matches entries by name, by glob
(`mcp__github__*`) or by the tool part of Claude Code's `Tool(pattern)` form; the agent passes
an `admits` that matches them as Claude Code permission rules (`Bash(git diff:*)` admits the
built-in bash running `git diff`, nothing else), which needs the governance layer above this one.
"""

from __future__ import annotations

import fnmatch
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from toolweave.skills.errors import ToolNotAllowed

if TYPE_CHECKING:
    from toolweave.skills.library import SkillLibrary
    from toolweave.skills.skill import Skill

SKILL_TOOL_NAMES = frozenset(
    {
        "skill_read",
        "skill_resource",
        "skill_data",
        "skill_reload",
        "skill_run",
        "skill_list",
        "skill_install",
        "skill_remove",
    }
)
"""The skills package's own tools, always allowed while a skill is active."""

T = TypeVar("T")
Admits = Callable[[str, Sequence[str], "Mapping[str, Any] | None", Any], bool]
"""`(tool_name, allowed_tools, args or None, tool or None) -> bool`: whether a skill's
`allowed-tools` admit a call (args given) or the tool at all (args None, for offering it)."""


def tool_allowed(tool_name: str, allowed_tools: Sequence[str]) -> bool:
    """Whether `allowed_tools` (empty = no restriction) lets `tool_name` run."""
    if not allowed_tools or tool_name in SKILL_TOOL_NAMES:
        return True
    for entry in allowed_tools:
        pattern = entry.split("(", 1)[0].strip()
        if pattern == tool_name or fnmatch.fnmatchcase(tool_name, pattern):
            return True
    return False


class SkillScope:
    """The active skill of each session, and the tool restriction it implies."""

    def __init__(self, library: SkillLibrary, admits: Admits | None = None) -> None:
        self.library = library
        self._admits: Admits = admits or (
            lambda name, allowed, args, tool: tool_allowed(name, allowed)
        )
        self._active: weakref.WeakKeyDictionary[object, str] = weakref.WeakKeyDictionary()

    def activate(self, key: object, name: str) -> Skill:
        """Make `name` the active skill of `key` (a session); `SkillError` if it is unknown."""
        skill = self.library.get(name)
        self._active[key] = skill.name
        self.library.mark_used(skill.name)
        return skill

    def deactivate(self, key: object) -> None:
        self._active.pop(key, None)

    def active(self, key: object) -> Skill | None:
        """The active skill of `key`, if it is still installed."""
        name = self._active.get(key)
        return self.library.skills.get(name) if name is not None else None

    def allows(
        self,
        key: object,
        tool_name: str,
        args: Mapping[str, Any] | None = None,
        tool: object = None,
    ) -> bool:
        """Whether the active skill of `key` admits `tool_name` (with `args`, when given)."""
        skill = self.active(key)
        if skill is None or not skill.allowed_tools or tool_name in SKILL_TOOL_NAMES:
            return True
        return self._admits(tool_name, skill.allowed_tools, args, tool)

    def offered(self, key: object, items: Sequence[T], name_of: Callable[[T], str]) -> list[T]:
        """The `items` (tools or their definitions) the active skill lets `key` use."""
        return [item for item in items if self.allows(key, name_of(item))]

    def check(
        self,
        key: object,
        tool_name: str,
        args: Mapping[str, Any] | None = None,
        tool: object = None,
    ) -> None:
        """Raise `ToolNotAllowed` (recoverable) naming the allowed tools, if the call is not."""
        skill = self.active(key)
        if skill is None or self.allows(key, tool_name, args, tool):
            return
        allowed = ", ".join([*skill.allowed_tools, "skill_*"])
        raise ToolNotAllowed(
            f"tool {tool_name!r} is not allowed while skill {skill.name!r} is active; allowed "
            f"tools: {allowed}",
            tool=tool_name,
            permission=f"skill:{skill.name}",
        )
