"""`SkillLibrary`: the skills an agent or host knows, from roots in precedence order.

Loading reads only frontmatter (level 1), so a catalog of hundreds of skills loads in
milliseconds; `reload()` rescans and swaps the whole set at once, keeping the old set when the
scan fails. `catalog()` is the system-prompt listing: name and description, sorted by
case-insensitive name, byte-stable, within a character budget. Past the budget, descriptions are
shortened first (to `CATALOG_DESCRIPTION_STEPS`), and only then are skills left out: those least
relevant to the query, or without a query those used least recently (`mark_used`) and then
those whose names break the spec (spec names are what models see in other hosts too), so a
large library of display names never pushes out `pdf` or `docx`. The listing says how many it
left out.
"""

from __future__ import annotations

import logging
import threading
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

from toolweave.errors import ConfigError
from toolweave.skills._bm25 import bm25_scores
from toolweave.skills._loader import scan
from toolweave.skills.arguments import parse_command
from toolweave.skills.errors import SkillError
from toolweave.skills.remote import RemoteSkill
from toolweave.skills.skill import Skill
from toolweave.skills.sources import DEFAULT_GITHUB_BASE, Download
from toolweave.skills.spec import DESCRIPTION_MAX, name_problem

if TYPE_CHECKING:
    from toolweave.skills.install import InstallReport
    from toolweave.skills.remote import RemoteSkillSource
    from toolweave.tools.base import Tool
    from toolweave.tools.sandbox import Sandbox

logger = logging.getLogger("toolweave.skills")

PROJECT_ROOTS = (".agents/skills", ".claude/skills")
USER_ROOTS = ("~/.agents/skills", "~/.claude/skills")
CATALOG_BUDGET_CHARS = 15_000
"""Default size of the level-1 listing put in the system prompt."""
CATALOG_DESCRIPTION_STEPS = (DESCRIPTION_MAX, 400, 200, 100, 60)
"""Description lengths the catalog tries, longest first, before it leaves any skill out."""
CATALOG_HEADER = (
    "Available skills (call skill_read with a skill's name to load its instructions before "
    "following it):"
)


def default_roots(project: Path | None = None) -> list[Path]:
    """Project `.agents/skills`, `.claude/skills`, then the user's, in precedence order."""
    base = project or Path.cwd()
    return [base / r for r in PROJECT_ROOTS] + [Path(r).expanduser() for r in USER_ROOTS]


class SkillLibrary:
    """Skills by name from `roots` (earlier roots win); `allow` whitelists names."""

    def __init__(
        self, roots: Iterable[str | Path] | None = None, allow: Iterable[str] | None = None
    ) -> None:
        self._explicit = roots is not None
        self.roots: list[Path] = (
            [Path(r).expanduser() for r in roots] if roots is not None else default_roots()
        )
        self.allow: frozenset[str] | None = frozenset(allow) if allow is not None else None
        self._skills: dict[str, Skill] = {}
        self._warnings: list[str] = []
        self._listeners: list[Callable[[], None]] = []
        self._lock = threading.Lock()
        self._used: dict[str, int] = {}
        self._remote: dict[str, RemoteSkill] = {}
        self._remote_sources: list[RemoteSkillSource] = []
        self._remote_listed = False
        self.reload()

    @property
    def skills(self) -> Mapping[str, Skill]:
        """Name -> `Skill`, sorted by name (a read-only view of the current set)."""
        return MappingProxyType(self._skills)

    @property
    def warnings(self) -> list[str]:
        """What the last successful scan skipped or found odd, one line per file."""
        return list(self._warnings)

    @property
    def remote(self) -> Mapping[str, RemoteSkill]:
        """Name -> `RemoteSkill` (`<server>__<name>`), sorted by name, as last listed."""
        return MappingProxyType(self._remote)

    def add_remote(self, source: RemoteSkillSource) -> None:
        """Join the skills `source` serves (an `MCPManager`: its servers' skills extension) to
        this library; they are listed by `refresh_remote()` (the agent calls it before a run
        whenever the manager reported a server connecting, dropping or changing its resources
        since the last listing) and their files read only when asked (see
        `toolweave.skills.remote`)."""
        self._remote_sources.append(source)
        self._remote_listed = False
        listeners = getattr(source, "catalog_listeners", None)
        if isinstance(listeners, list):  # an MCPManager: servers came, went or changed lists
            listeners.append(self._remote_changed)

    def _remote_changed(self, kind: str) -> None:
        """A source's resources may have changed: list again at the next `refresh_remote`
        that is not forced (the agent's next run)."""
        if kind == "resources":
            self._remote_listed = False

    async def refresh_remote(self, *, force: bool = True) -> bool:
        """List the remote sources' skills now (level 1 only) and swap them in; `force=False`
        lists only if never listed since a source was added. Returns whether the set changed
        (subscribers are called then)."""
        if self._remote_listed and not force:
            return False
        # Set first: a change reported while listing (a server too slow to list is reported so)
        # makes the next run list again.
        self._remote_listed = True
        found: dict[str, RemoteSkill] = {}
        warnings: list[str] = []
        try:
            listed = [(s, info) for s in self._remote_sources for info in await s.skills()]
        except BaseException:
            self._remote_listed = False
            raise
        for source, info in listed:
            skill = RemoteSkill.of(info, source)
            problem = _remote_name_problem(info.name)
            if problem is not None:
                warnings.append(f"remote {skill.where} is left out: its name {problem}")
            elif skill.name in self._skills or skill.name in found:
                warnings.append(
                    f"remote {skill.where} is left out: a skill named {skill.name!r} is "
                    "already in the library"
                )
            elif self.allow is None or skill.name in self.allow:
                found[skill.name] = skill
        for warning in warnings:
            logger.warning("%s", warning)
        remote = dict(sorted(found.items()))
        changed = remote != self._remote
        self._remote = remote
        if changed:
            for listener in list(self._listeners):
                listener()
        return changed

    def find(self, name: str) -> Skill | RemoteSkill:
        """A local skill as `get` finds it, else the remote skill of that name."""
        remote = self._remote.get(name)
        if remote is not None and name not in self._skills:
            return remote
        try:
            return self.get(name)
        except SkillError:
            if not self._remote:
                raise
            names = ", ".join([*self._skills, *self._remote])
            raise SkillError(f"no skill named {name!r}; available skills: {names}") from None

    def get(self, name: str) -> Skill:
        """The skill called `name`, or whose display name it is (case and spaces aside)."""
        skill = self._skills.get(name)
        if skill is None:
            typed = " ".join(name.split()).casefold()
            skill = next(
                (
                    s
                    for s in self._skills.values()
                    if s.display_name and " ".join(s.display_name.split()).casefold() == typed
                ),
                None,
            )
        if skill is None:
            names = ", ".join(self._skills) or "none are installed"
            raise SkillError(f"no skill named {name!r}; available skills: {names}")
        return skill

    def reload(self) -> bool:
        """Rescan every root and swap the set atomically; on failure the old set stays.

        Returns whether the set changed (subscribers are called only then).
        """
        with self._lock:
            try:
                found = scan(self.roots, self.allow, self._explicit)
            except OSError as exc:
                raise SkillError(
                    f"skill reload failed, keeping the previous skills: {exc}"
                ) from exc
            changed = found.skills != self._skills
            self._skills, self._warnings = found.skills, found.warnings
        for warning in found.warnings:
            logger.warning("%s", warning)
        if changed:
            for listener in list(self._listeners):
                listener()
        return changed

    def subscribe(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call `listener` after every reload that changed the set; returns an unsubscribe."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def mark_used(self, name: str) -> None:
        """Record that skill `name` was just used (read by the model or run as a command), so a
        catalog without a query keeps it over skills not used lately."""
        self._used.pop(name, None)
        self._used[name] = len(self._used)  # insertion order is recency order

    def catalog(self, budget_chars: int = CATALOG_BUDGET_CHARS, query: str | None = None) -> str:
        """The level-1 listing: one `- name: description` line per model-invocable skill."""
        if budget_chars < 1:
            raise ConfigError(f"budget_chars must be positive, not {budget_chars}")
        every: list[Skill | RemoteSkill] = [*self._skills.values(), *self._remote.values()]
        listed = [s for s in every if not s.disable_model_invocation]
        if not listed:
            return ""
        if query:
            scores = bm25_scores(query, [f"{s.name} {s.description}" for s in listed])
            ranked = sorted(zip(scores, listed, strict=True), key=lambda p: (-p[0], p[1].name))
            order = [s for _, s in ranked]
        else:
            recency = {name: rank for rank, name in enumerate(reversed(self._used))}
            order = sorted(
                listed,
                key=lambda s: (
                    recency.get(s.name, len(recency)),
                    s.display_name is not None,
                    s.name.casefold(),
                    s.name,
                ),
            )
        which = " most relevant" if query else " most recently used and spec-named"
        for cap in CATALOG_DESCRIPTION_STEPS:
            lines = {s.name: _catalog_line(s, cap) for s in listed}
            kept = self._fit([s.name for s in order], lines, budget_chars)
            if len(kept) == len(listed):
                break
        else:  # even the shortest descriptions overflow: leave out the last in `order`
            note = _left_out_note(len(listed), 0, which)
            kept = self._fit([s.name for s in order], lines, budget_chars - len(note))
        body = sorted(kept, key=lambda name: (name.casefold(), name))
        text = "\n".join([CATALOG_HEADER, *(lines[n] for n in body)])
        if len(kept) < len(listed):
            text += _left_out_note(len(listed), len(kept), which)
        return text

    @staticmethod
    def _fit(order: list[str], lines: dict[str, str], budget: int) -> list[str]:
        kept: list[str] = []
        used = len(CATALOG_HEADER)
        for name in order:
            if used + len(lines[name]) + 1 <= budget:
                kept.append(name)
                used += len(lines[name]) + 1
        return kept

    def expand_command(self, text: str) -> str | None:
        """The prompt for a `/name args` line naming a user-invocable skill, else None."""
        parsed = parse_command(text)
        if parsed is None:
            return None
        skill = self._skills.get(parsed[0])
        if skill is None or not skill.user_invocable:
            return None
        self.mark_used(skill.name)
        return skill.command(parsed[1])

    def tools(
        self,
        *,
        self_management: bool = False,
        script_timeout: float | None = None,
        script_sandbox: Sandbox | None = None,
        script_max_output_bytes: int | None = None,
        download: Download | None = None,
    ) -> list[Tool]:
        """The skill tools, sorted by name (`self_management` adds list/install/remove;
        `skill_install` reads URLs and GitHub paths only with `download`); `skill_run`'s
        scripts run in `script_sandbox` (see `skills.scripts.run_script`)."""
        from toolweave.skills.scripts import MAX_SCRIPT_OUTPUT_BYTES, SCRIPT_TIMEOUT
        from toolweave.skills.tools import skill_tools

        return skill_tools(
            self,
            self_management=self_management,
            script_timeout=SCRIPT_TIMEOUT if script_timeout is None else script_timeout,
            script_sandbox=script_sandbox,
            script_max_output_bytes=script_max_output_bytes or MAX_SCRIPT_OUTPUT_BYTES,
            download=download,
        )

    def install(self, source: str | Path, into: str | Path | None = None) -> InstallReport:
        """Install a skill folder or zip into `into` (default: the first root), then reload."""
        from toolweave.skills.install import install_skill

        report = install_skill(Path(source).expanduser(), self._install_root(into))
        self.reload()
        return report

    async def install_from(
        self,
        source: str,
        *,
        download: Download | None = None,
        into: str | Path | None = None,
        github_base: str = DEFAULT_GITHUB_BASE,
    ) -> InstallReport:
        """Install from where skills are found (`toolweave.skills.sources`): a folder or zip, a
        zip or SKILL.md URL, a GitHub path or SKILL.md text; URLs are read with `download`
        (`toolweave.builtins.fetch.downloader(...)`: the fetch tool's rules). Then reload."""
        from toolweave.skills.sources import install_from

        target = self._install_root(into)
        report = await install_from(source, target, download=download, github_base=github_base)
        self.reload()
        return report

    def _install_root(self, into: str | Path | None) -> Path:
        if into is None and not self.roots:
            raise SkillError("this library has no roots to install into; pass into=<folder>")
        return Path(into).expanduser() if into is not None else self.roots[0]

    def remove(self, name: str) -> Path:
        """Delete an installed skill's folder (and its lockfile entry), then reload."""
        from toolweave.skills.install import remove_skill

        removed = remove_skill(self.get(name))
        self.reload()
        return removed

    def __len__(self) -> int:
        return len(self._skills)

    def __contains__(self, name: object) -> bool:
        return name in self._skills

    def __repr__(self) -> str:
        return f"SkillLibrary({len(self._skills)} skills, roots={[str(r) for r in self.roots]})"


def _remote_name_problem(name: str) -> str | None:
    """Why a remote skill's name is refused: it must be a spec name exactly as sent (shown to
    the model verbatim, a newline or markup in it would write lines of its own into the catalog,
    and `__` could pose as another server's skill)."""
    problem = name_problem(name)
    if problem is None and name != unicodedata.normalize("NFKC", name.strip()):
        problem = f"{name!r} is not in its normal form (NFKC, no surrounding spaces)"
    return problem


def _catalog_line(skill: Skill | RemoteSkill, cap: int = DESCRIPTION_MAX) -> str:
    description = " ".join(skill.description.split())
    if len(description) > cap:
        description = description[: cap - 1] + "…"
    return f"- {skill.name}: {description}"


def _left_out_note(total: int, kept: int, which: str) -> str:
    return (
        f"\n({total - kept} of {total} skills left out to fit the budget; these are the"
        f"{which} ones that fit. Ask for a skill by name with skill_read if you know it.)"
    )
