"""The active skill of each session, and the skills whose `allowed-tools` the current run grants.

A `SkillScope` remembers, per session (any weak-referenceable key: the agent uses its
`Session`), the skill last activated: reading it with `skill_read`, the user running it as
`/name`, or the selector picking it. As in Claude Code, a skill's `allowed-tools` pre-approve
the tools it lists while the skill is active: they widen nothing else and hide nothing. A call
they do not list goes through the session's rules and approvals as it would without the skill.

The grant lasts for the run that activated the skill (Claude Code: until the next user
message): `grants` lists the skills activated since the run began and `end_run` clears that
list, while `active` keeps naming the skill (the selector does not pick another over it). This
layer only records who granted what; the agent reads the entries as Claude Code permission
rules in its governance, where deny and ask rules still come first.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from toolweave.skills.library import SkillLibrary
    from toolweave.skills.skill import Skill


class SkillScope:
    """The active skill of each session and the skills granting tools in its current run."""

    def __init__(self, library: SkillLibrary) -> None:
        self.library = library
        self._active: weakref.WeakKeyDictionary[object, str] = weakref.WeakKeyDictionary()
        self._granting: weakref.WeakKeyDictionary[object, dict[str, None]] = (
            weakref.WeakKeyDictionary()
        )

    def activate(self, key: object, name: str) -> Skill:
        """Make `name` the active skill of `key` (a session), granting its `allowed-tools` until
        the run ends; `SkillError` if it is unknown."""
        skill = self.library.get(name)
        self._active[key] = skill.name
        self._granting.setdefault(key, {})[skill.name] = None
        self.library.mark_used(skill.name)
        return skill

    def deactivate(self, key: object) -> None:
        """No active skill and no grant for `key` any more."""
        self._active.pop(key, None)
        self._granting.pop(key, None)

    def active(self, key: object) -> Skill | None:
        """The active skill of `key`, if it is still installed."""
        name = self._active.get(key)
        return self.library.skills.get(name) if name is not None else None

    def grants(self, key: object) -> list[Skill]:
        """The still-installed skills activated for `key` during its current run, in order:
        their `allowed-tools` are pre-approved until `end_run`."""
        names = self._granting.get(key, {})
        found = (self.library.skills.get(name) for name in names)
        return [skill for skill in found if skill is not None and skill.allowed_tools]

    def end_run(self, key: object) -> None:
        """The run of `key` ended: its skills' pre-approvals end with it."""
        self._granting.pop(key, None)
