"""The pieces `Rules` decides a call from: the `Explanation` it answers with, the checked parts
of a shell line (its commands and redirection targets) and how they add up to one decision.

Split from `toolweave.governance.rules` by what it does, unchanged: `Rules.explain` walks a
call, these match each part against the rules and aggregate the parts' decisions.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from toolweave.governance._command_match import (
    DYNAMIC_MARKS,
    Seen,
    allow_texts,
    deny_shapes,
    deny_texts,
)
from toolweave.governance._host_files import loaded_by_host
from toolweave.governance._rule_patterns import Decision, Rule, resolve_path
from toolweave.tools.shell_syntax import SimpleCommand

_HARMLESS_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})
_EXPANDS = frozenset(DYNAMIC_MARKS).union("~]}()\\")
"""Characters of a redirection target that bash would expand (or that are left over from a
quoted one): such a target's real path is unknown, so `acceptEdits` never accepts it."""


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
    command's name, a shell reads stdin): `Rules.unchecked_refused` denies such a line in the
    modes that would otherwise run it unasked."""

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


@dataclass(frozen=True)
class _Writes:
    """How a shell line's redirections are decided: rules anchored at `cwd`, targets resolved
    from `where` (the shell's directory, the project), and whether `acceptEdits` is on."""

    cwd: str
    where: str
    accept_edits: bool


def _redirect(target: str, write_rules: list[Rule], writes: _Writes) -> list[Part]:
    """A redirection writes `target`, so Edit/Write rules decide it as a file edit. A bare
    `Edit`/`Write` allow covers the project (the shell's directory) and below only; outside it
    an allow must name the path. With no rule it asks, saying whether the file is outside the
    project; in `acceptEdits` a file inside the project is accepted, as Claude Code accepts
    edits in its working directory. A target bash expands first (`$`, `~`, globs,
    substitutions) is never allowed: only a deny or ask rule decides it, else it asks."""
    if target in _HARMLESS_TARGETS:
        return []
    path = resolve_path(target, writes.where)
    expands = bool(_EXPANDS.intersection(target))
    # A target bash expands (`$HOME/x`) is not the path seen here: no allow rule vouches for it.
    rules = [r for r in write_rules if r.decision != "allow"] if expands else write_rules
    root = os.path.realpath(writes.where)
    inside = path == root or path.startswith(root.rstrip("/") + "/")
    if not inside:  # a bare `Edit` reaches the project only, as in Claude Code
        rules = [r for r in rules if r.decision != "allow" or r.specifier is not None]
    found = _first(rules, path, _path_matcher(path, writes.cwd))
    if found is not None:
        return [Part(f"> {target}", found.decision, found.rule)]
    if expands:
        return [
            Part(
                f"> {target}",
                "ask",
                None,
                "bash expands the target first, so the file "
                "it writes is not known, and no Edit or Write rule allows that",
            )
        ]
    # /proc/self/cwd, /dev/fd/N: links this process resolves to its own files, not the shell's.
    magic = os.path.normpath(os.path.join(writes.where, target)).startswith(("/proc/", "/dev/"))
    if inside and writes.accept_edits and not magic and not loaded_by_host(path, root):
        return [
            Part(
                f"> {target}",
                "allow",
                None,
                f"permission mode 'acceptEdits' accepts edits inside the project ({path})",
            )
        ]
    where = (
        "a file in the project"
        if inside
        else "a file outside the project, which a bare Edit or Write allow does not reach"
    )
    return [
        Part(
            f"> {target}",
            "ask",
            None,
            f"it writes {path}, {where}, and no Edit or Write rule allows that (a rule that "
            "names the path does)",
        )
    ]


def _first(rules: list[Rule], subject: str, matches: Callable[[Rule], bool]) -> Explanation | None:
    """The first matching rule in deny, ask, allow order, as an explanation."""
    for rule in rules:
        if matches(rule):
            verb = {"deny": "denied", "ask": "needs approval", "allow": "allowed"}[rule.decision]
            return Explanation(
                rule.decision,
                f"{verb} by {rule.text!r} from {rule.source}",
                rule,
                ((subject, rule.decision, rule),),
            )
    return None


def _path_matcher(path: str, cwd: str) -> Callable[[Rule], bool]:
    return lambda rule: rule.matches_path(path, cwd)


def _command_decision(
    simple: SimpleCommand, rules: list[Rule], env: Seen
) -> tuple[Decision | None, Rule | None]:
    return _match_texts(allow_texts(simple), deny_texts(simple, env), rules, simple, env)


def _match_texts(
    allow: list[str],
    deny: list[str],
    rules: list[Rule],
    simple: SimpleCommand | None = None,
    env: Seen | None = None,
) -> tuple[Decision | None, Rule | None]:
    # Deny and ask rules see every form of the command and its normalised shape; allow rules
    # only the forms `allow_texts` vouches for, so an allow is never widened.
    shapes = deny_shapes(simple, env or Seen()) if simple is not None else []
    deny = deny or allow
    for rule in rules:
        if rule.decision == "allow":
            if any(rule.matches_command(t) for t in allow):
                return rule.decision, rule
        elif any(rule.matches_command(t) for t in deny) or any(map(rule.matches_shape, shapes)):
            return rule.decision, rule
    return None, None


def _aggregate(parts: list[Part], default: Decision) -> Explanation | None:
    table = tuple((p.subject, p.decision, p.rule) for p in parts)
    checked = not any(p.unchecked for p in parts)
    for decision in ("deny", "ask"):
        for part in parts:
            if part.decision != decision:
                continue
            if part.rule is None:
                return Explanation(
                    decision,
                    f"{part.subject!r} needs approval: {part.why}",
                    None,
                    table,
                    checked=checked,
                )
            verb = "denied" if decision == "deny" else "needs approval"
            return Explanation(
                decision,
                f"{part.subject!r} {verb} by {part.rule.text!r} from {part.rule.source}",
                part.rule,
                table,
                checked=checked,
            )
    if parts and all(p.decision == "allow" for p in parts):
        why = [
            f"{p.subject!r} by {p.rule.text!r} from {p.rule.source}" if p.rule else p.why
            for p in parts
            if p.rule is not None or p.why
        ]
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
