"""Why a rule set answered what it did: `Explanation`, the checked `Part`s of a shell line, and
how they add up (any part denied denies, any asked asks, all allowed allows)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from toolweave.governance._rule_patterns import Decision, Rule


@dataclass(frozen=True)
class Explanation:
    """Why `decide` answered what it did: the deciding `rule` (None when no rule matched), each
    checked part of the call (`subject`, its decision, the rule) and a sentence for people."""

    decision: Decision
    reason: str
    rule: Rule | None = None
    parts: tuple[tuple[str, Decision | None, Rule | None], ...] = ()
    tool: str = ""
    """The Claude Code name the call was matched as (`Bash`, `Read`, `mcp__github__x`)."""
    checked: bool = True
    """False when part of a shell line cannot be checked (it does not parse, bash computes a
    command's name, a shell reads stdin): `unchecked_refused` denies such a line in the modes
    that would otherwise run it unasked."""

    def __str__(self) -> str:
        lines = [f"{self.decision}: {self.reason}"]
        for subject, decision, rule in self.parts:
            by = f"{rule.text!r} ({rule.decision}, from {rule.source})" if rule else "no rule"
            lines.append(f"  {subject!r}: {decision or 'unmatched'} by {by}")
        return "\n".join(lines)


@dataclass(frozen=True)
class Part:
    """One checked piece of a shell line: a command or a redirection's target."""

    subject: str
    decision: Decision | None
    rule: Rule | None
    why: str = ""
    unchecked: bool = False


def first_match(
    rules: list[Rule], subject: str, matches: Callable[[Rule], bool]
) -> Explanation | None:
    """The first matching rule in deny, ask, allow order, as an explanation."""
    for rule in rules:
        if matches(rule):
            verb = {"deny": "denied", "ask": "needs approval", "allow": "allowed"}[rule.decision]
            return Explanation(rule.decision, f"{verb} by {rule.text!r} from {rule.source}", rule,
                               ((subject, rule.decision, rule),))  # fmt: skip
    return None


def aggregate(parts: list[Part], default: Decision) -> Explanation | None:
    table = tuple((p.subject, p.decision, p.rule) for p in parts)
    checked = not any(p.unchecked for p in parts)
    for decision in ("deny", "ask"):
        for part in parts:
            if part.decision != decision:
                continue
            if part.rule is None:
                return Explanation(decision, f"{part.subject!r} needs approval: {part.why}",
                                   None, table, checked=checked)  # fmt: skip
            verb = "denied" if decision == "deny" else "needs approval"
            return Explanation(
                decision, f"{part.subject!r} {verb} by {part.rule.text!r} from "
                f"{part.rule.source}", part.rule, table, checked=checked,
            )  # fmt: skip
    if parts and all(p.decision == "allow" for p in parts):
        why = [f"{p.subject!r} by {p.rule.text!r} from {p.rule.source}" if p.rule else p.why
               for p in parts if p.rule is not None or p.why]  # fmt: skip
        return Explanation("allow", f"every command is allowed: {'; '.join(why)}", None, table)
    if any(p.decision is not None for p in parts):
        unmatched = [p.subject for p in parts if p.decision is None]
        return Explanation(
            default,
            f"not every command is allowed (no rule matched {unmatched}); "
            f"`Rules(default={default!r})` applies",
            None,
            table,
        )
    return None
