"""Deciding a call by the permission patterns its tool reports (the forge probe, seed 002).

An MCP server built with a forge-style toolkit can say, without running the tool, which
permission patterns a call would need (`write:docs/a.txt`, `fs:write`). Before a person is asked
about a call that no rule decided, governance probes such a tool and matches every reported
pattern against the rules written for it, with the pattern as the rule's specifier
(`mcp__files__write_file(write:docs/*)`): a pattern a deny rule matches refuses the call, one an
ask rule matches asks, and when an allow rule matches every pattern the call runs without a
question. Anything else (a pattern no rule names, a probe that reports nothing) leaves the
question as it was. The explanation names the pattern and the rule.

Only tools that advertise the probe are asked (an unaware server would run the tool for real);
a probe that fails raises, so the call is refused rather than run unchecked.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from toolweave.governance._rule_parts import Explanation
from toolweave.governance._rule_patterns import Rule
from toolweave.governance.rules import Rules
from toolweave.tools import Tool
from toolweave.tools.claude_names import rule_names


class ProbedPatterns(Protocol):
    patterns: list[str]
    always: list[str]


@runtime_checkable
class PatternProbe(Protocol):
    """A tool that can report the permission patterns a call needs (the MCP bridge's tools)."""

    @property
    def supports_permission_probe(self) -> bool: ...

    async def permission_patterns(self, args: dict[str, Any]) -> ProbedPatterns | None: ...


def _named_rules(rules: Rules, names: tuple[str, ...]) -> tuple[list[Rule], list[Rule], list[Rule]]:
    """The deny, ask and allow rules for these tool names that carry a specifier, parents'
    included (a parent run's deny and ask still hold in its children)."""
    deny: list[Rule] = []
    ask: list[Rule] = []
    allow: list[Rule] = []
    for holder in _with_parents(rules):
        for rule in (*holder.deny, *holder.ask, *holder.allow):
            if rule.specifier is None or not rule.matches_tool(names):
                continue
            {"deny": deny, "ask": ask, "allow": allow}[rule.decision].append(rule)
    return deny, ask, allow


def _with_parents(rules: Rules) -> list[Rules]:
    return [rules, *(r for parent in rules.parents for r in _with_parents(parent))]


async def probed_decision(
    rules: Rules, tool_name: str, tool: Tool, args: dict[str, Any]
) -> Explanation | None:
    """The rules' decision over the patterns `tool` reports for this call, or None when the
    tool has no probe or the patterns decide nothing."""
    if not isinstance(tool, PatternProbe) or not tool.supports_permission_probe:
        return None
    names = rule_names(tool_name, tool)
    deny, ask, allow = _named_rules(rules, names)
    if not (deny or ask or allow):
        return None  # no rule could match a pattern: do not bother the server
    found = await tool.permission_patterns(args)
    patterns = [*found.patterns, *found.always] if found is not None else []
    if not patterns:
        return None
    for decision, candidates in (("deny", deny), ("ask", ask)):
        for pattern in patterns:
            rule = next((r for r in candidates if r.matches_value(pattern)), None)
            if rule is not None:
                verb = "denied" if decision == "deny" else "needs approval"
                return Explanation(
                    rule.decision,
                    f"the call needs permission {pattern!r} (the tool's probe), {verb} by "
                    f"{rule.text!r} from {rule.source}",
                    rule,
                    ((pattern, rule.decision, rule),),
                )
    matched = [(p, next((r for r in allow if r.matches_value(p)), None)) for p in patterns]
    if any(rule is None for _, rule in matched):
        return None
    return Explanation(
        "allow",
        "every permission the tool's probe reported is allowed: "
        + "; ".join(f"{p!r} by {r.text!r} from {r.source}" for p, r in matched if r),
        None,
        tuple((p, "allow", r) for p, r in matched),
    )
