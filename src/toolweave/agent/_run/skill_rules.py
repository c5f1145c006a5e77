"""`allowed-tools` as pre-approvals: the allow rules a running command or an active skill adds.

Skills and command files written for Claude Code list `Bash(git diff:*)`, `Read`, `Edit`,
`WebFetch` or `mcp__github__*`: tools Claude may use without asking while the skill is active or
the command runs. Each entry becomes an allow rule of `toolweave.governance.Rules` (the one rule
engine: its syntax, quoting, wrappers, Claude Code names and case handling), joined to the
run's rules for each call it decides. So deny rules still win and ask rules still ask (deny,
then ask, then allow, as for every rule); a listed call that no deny or ask rule names runs
without a question; a call not listed is decided by the rules alone, as without the skill. The
rule's source names the grant ("skill 'git-review' (allowed-tools)"), so an explanation says
why a call was let through. An entry the rule syntax cannot read, or a bare `*` (every tool),
grants nothing (fail closed) and is logged.
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from toolweave.governance import Rules, RuleSyntaxError
from toolweave.governance._rule_patterns import Rule

if TYPE_CHECKING:
    from toolweave.agent._run.loop import Run

logger = logging.getLogger("toolweave.agent.skills")


@functools.lru_cache(maxsize=256)
def grant_rules(entries: tuple[str, ...], source: str, root: str) -> tuple[Rule, ...]:
    """The allow rules `entries` (an `allowed-tools` list) grant, from `source`, with `/path`
    patterns anchored at `root`; unreadable entries are left out with a warning."""
    rules: list[Rule] = []
    for entry in entries:
        try:
            rule = Rule.parse(entry, "allow", source=source, root=root)
        except RuleSyntaxError as exc:
            logger.warning("%s: %r grants nothing: %s", source, entry, exc)
            continue
        if not rule.tool.strip("*"):
            logger.warning("%s: %r grants nothing: name the tools it pre-approves", source, entry)
            continue
        rules.append(rule)
    return tuple(rules)


def preapproved(grants: Sequence[tuple[str, Sequence[str]]], cwd: str | None) -> Rules | None:
    """The allow rules of every `(source, allowed-tools)` grant, or None when there are none."""
    root = cwd or os.getcwd()
    rules = [rule for source, items in grants for rule in grant_rules(tuple(items), source, root)]
    return Rules(allow=rules) if rules else None


def run_grants(run: Run) -> Rules | None:
    """What `run` pre-approves now: its slash command's `allowed-tools`, then those of every
    skill activated since it began."""
    grants: list[tuple[str, Sequence[str]]] = []
    command = run.command
    if command is not None and command.allowed_tools:
        grants.append((command_grant(command.name), command.allowed_tools))
    skills = run.config.skills
    if skills is not None:
        grants.extend(
            (skill_grant(skill.name), skill.allowed_tools)
            for skill in skills.scope.grants(run.session)
        )
    rules = run.config.governance.rules
    return preapproved(grants, rules.cwd if rules is not None else None)


def command_grant(name: str) -> str:
    """How an explanation names the grant of the slash command `/name`."""
    return f"the /{name} command (allowed-tools)"


def skill_grant(name: str) -> str:
    """How an explanation names the grant of the skill `name`."""
    return f"skill {name!r} (allowed-tools)"
