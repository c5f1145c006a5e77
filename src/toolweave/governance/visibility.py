"""Which tools a caller can be shown at all: the ones no rule denies outright.

Tool search (`toolweave.tools.search_mode`) offers only tools a call could run, so a tool that
a deny rule names without a pattern (`Bash`, `mcp__github__*`, `mcp__slack`) is never returned:
every call of it would be refused. A rule with a pattern (`Bash(rm *)`) denies some calls only,
and leaves the tool visible.
"""

from __future__ import annotations

from collections.abc import Iterator

from toolweave.governance._rule_patterns import Rule
from toolweave.governance.context import GateContext
from toolweave.governance.pipeline import Governance
from toolweave.governance.rules import Rules
from toolweave.tools.base import Tool
from toolweave.tools.claude_names import rule_names


def _deny_rules(rules: Rules) -> Iterator[Rule]:
    yield from rules.deny
    for parent in rules.parents:
        yield from _deny_rules(parent)


def denied_outright(governance: Governance, tool: Tool, gate: GateContext) -> bool:
    """Whether a rule this call would meet denies every call of `tool`."""
    names = rule_names(tool.name, tool)
    rules = governance.rules_for(tool, gate)
    return any(r.specifier is None and r.matches_tool(names) for r in _deny_rules(rules))
