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

A grant is a snapshot: the `allowed-tools` the skill had when it was activated, with the hash of
its SKILL.md then. A skill rewritten during the run (`Bash(*)` written into it, then reloaded)
loses its grant instead of widening it; it grants again when activated anew in a later run. A
skill whose folder lies under a folder a sandboxed tool can write (`writable`) grants nothing
until a person trusts its SKILL.md (`toolweave trust`, `toolweave.storage.trust`). A remote
skill (`toolweave.skills.remote`) grants only once trusted as listed (`RemoteSkill.trust`), and
only while its server lists the same SKILL.md digest and frontmatter.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from toolweave.skills.remote import RemoteSkill
from toolweave.storage.trust import content_digest, exposed, is_trusted

if TYPE_CHECKING:
    from toolweave.skills.library import SkillLibrary
    from toolweave.skills.skill import Skill


@dataclass(frozen=True, slots=True)
class _Grant:
    """A skill as it was activated, and the hash of its SKILL.md then."""

    skill: Skill | RemoteSkill
    digest: str | None


class SkillScope:
    """The active skill of each session and the skills granting tools in its current run."""

    def __init__(
        self, library: SkillLibrary, writable: Iterable[str | os.PathLike[str]] = ()
    ) -> None:
        self.library = library
        self.writable: tuple[str, ...] = tuple(os.path.realpath(w) for w in writable)
        """Folders a sandboxed tool can write: skills under them grant only once trusted."""
        self._active: weakref.WeakKeyDictionary[object, str] = weakref.WeakKeyDictionary()
        self._granting: weakref.WeakKeyDictionary[object, dict[str, _Grant]] = (
            weakref.WeakKeyDictionary()
        )

    def activate(self, key: object, name: str) -> Skill:
        """Make `name` the active skill of `key` (a session), granting the `allowed-tools` it
        has now until the run ends (see the module docstring); `SkillError` if it is unknown."""
        skill = self.library.get(name)
        self._active[key] = skill.name
        if self.grants_tools(skill):
            self._granting.setdefault(key, {})[skill.name] = _Grant(
                skill, content_digest(skill.path)
            )
        self.library.mark_used(skill.name)
        return skill

    def activate_remote(self, key: object, skill: RemoteSkill) -> None:
        """A remote skill the model read: its `allowed-tools` are granted until the run ends
        only if a person trusted it exactly as it is listed now (`RemoteSkill.trusted`)."""
        if skill.allowed_tools and skill.trusted():
            self._granting.setdefault(key, {})[skill.name] = _Grant(skill, skill.listing_digest)
        self.library.mark_used(skill.name)

    def grants_tools(self, skill: Skill) -> bool:
        """False for a skill under a sandbox-writable folder that no person has trusted."""
        return not exposed(skill.dir, self.writable) or is_trusted(skill.path)

    def deactivate(self, key: object) -> None:
        """No active skill and no grant for `key` any more."""
        self._active.pop(key, None)
        self._granting.pop(key, None)

    def active(self, key: object) -> Skill | None:
        """The active skill of `key`, if it is still installed."""
        name = self._active.get(key)
        return self.library.skills.get(name) if name is not None else None

    def grants(self, key: object) -> list[Skill | RemoteSkill]:
        """The still-installed skills activated for `key` during its current run, in order, as
        they were activated: their `allowed-tools` then are pre-approved until `end_run`. A
        skill whose SKILL.md changed since (or is gone) is left out."""
        kept: list[Skill | RemoteSkill] = []
        for name, grant in self._granting.get(key, {}).items():
            skill = grant.skill
            if isinstance(skill, RemoteSkill):  # still listed as it was trusted
                listed = self.library.remote.get(name)
                if listed is not None and listed.listing_digest == grant.digest:
                    kept.append(skill)
                continue
            if name not in self.library.skills or not skill.allowed_tools:
                continue
            if grant.digest is not None and content_digest(skill.path) == grant.digest:
                kept.append(skill)
        return kept

    def end_run(self, key: object) -> None:
        """The run of `key` ended: its skills' pre-approvals end with it."""
        self._granting.pop(key, None)
