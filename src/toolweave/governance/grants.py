"""Grants: allow rules a skill or a slash command adds while it is active (`allowed-tools`).

Skills and command files written for Claude Code list `Bash(git diff:*)`, `Read`, `Edit`,
`WebFetch` or `mcp__github__*`: tools Claude may use without asking while the skill is active or
the command runs. Each entry becomes an allow rule (the one rule engine, `Rules`: its syntax,
quoting, wrappers, Claude Code names and case handling) that the pipeline joins to the run's
rules for each call it decides (`GateContext.preapproved`). So deny rules still win and ask
rules still ask (deny, then ask, then allow, as for every rule); a listed call that no deny or
ask rule names runs without a question; a call not listed is decided by the rules alone. The
rule's source names the grant (`skill 'git-review' (allowed-tools)`), so an explanation says
why a call was let through. An entry the rule syntax cannot read, or a bare `*` (every tool),
grants nothing (fail closed) and is logged.
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Sequence

from toolweave.governance._rule_patterns import Rule
from toolweave.governance.errors import RuleSyntaxError
from toolweave.governance.rules import Rules

logger = logging.getLogger("toolweave.governance")


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
    """The allow rules of every `(source, allowed-tools)` grant, `/path` patterns anchored at
    `cwd` (default: the process's), or None when they grant nothing."""
    root = cwd or os.getcwd()
    rules = [rule for source, items in grants for rule in grant_rules(tuple(items), source, root)]
    return Rules(allow=rules) if rules else None


def command_grant(name: str) -> str:
    """How an explanation names the grant of the slash command `/name`."""
    return f"the /{name} command (allowed-tools)"


def skill_grant(name: str) -> str:
    """How an explanation names the grant of the skill `name`."""
    return f"skill {name!r} (allowed-tools)"
