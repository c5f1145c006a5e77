"""Which tools a caller can be shown at all: the ones no rule denies outright.

A tool that a deny rule names without a pattern (`bash`, `slack_*`, `mcp__github`) is refused
whatever its arguments, so neither `toolweave serve` lists it nor tool search
(`toolweave.tools.search_mode`) returns it. A rule with a pattern (`Bash(rm *)`) denies some
calls only, and leaves the tool visible: each call is still decided by the rules.
"""

from __future__ import annotations

from toolweave.governance.rules import Rules
from toolweave.tools.base import Tool


def denied_outright(rules: Rules | None, name: str, tool: Tool) -> str | None:
    """The deny rule that refuses every call of `name` whatever its arguments, or None."""
    if rules is None:
        return None
    explanation = rules.explain(name, {}, tool=tool)
    rule = explanation.rule
    if explanation.decision == "deny" and rule is not None and rule.specifier is None:
        return rule.text
    return None
