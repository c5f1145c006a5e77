"""`Rules`: allow / deny / ask permission rules in Claude Code's syntax, so users paste theirs.

`rules.decide(tool_name, args)` answers "allow", "deny" or "ask"; deny beats ask beats allow,
whatever the order or specificity. Shell commands are split into every simple command they run
(`toolweave.tools.shell_syntax`): any one denied denies the line, all allowed allows it, otherwise
it asks; a line that cannot be parsed, or that feeds a shell on stdin, is never allowed. A rule
meets each command as written and unwrapped (`toolweave.governance._command_match`). An output
redirection is a file write: Edit/Write rules decide it, and outside the project it asks. Tools
are matched by their Claude Code names too (`toolweave.tools.claude_names`), so `Read(~/.ssh/**)`
protects `read_file`. `rules.explain(...)` says which rule, from which file, decided, because
"why did my deny rule not fire?" is the question users cannot answer.

A child run narrows its parent's rules (`parent.narrow(child)`): the stricter answer wins, so a
subagent can never do what its parent may not."""

from __future__ import annotations

import json
import os
import weakref
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from toolweave.governance._command_match import (
    DYNAMIC_MARKS,
    allow_texts,
    changes_directory,
    deny_shapes,
    deny_texts,
    remember_assignments,
)
from toolweave.governance._rule_patterns import Decision, Rule, RuleKind, resolve_path
from toolweave.governance.errors import RuleSyntaxError
from toolweave.tools import PerCallAnnotations, Permission, Tool
from toolweave.tools.claude_names import claude_code_name, rule_names
from toolweave.tools.permissions import ASK_BY_DEFAULT
from toolweave.tools.shell_syntax import ShellParseError, SimpleCommand, parse_commands
from toolweave.tools.shell_wrappers import is_assignment

__all__ = [
    "Decision",
    "Explanation",
    "RuleSyntaxError",
    "Rules",
    "asks_by_default",
    "condition_matches",
]

_STRICTNESS: dict[Decision, int] = {"allow": 0, "ask": 1, "deny": 2}
_PATH_ARGS = ("path", "file_path", "filename", "file", "directory", "dir")
_URL_ARGS = ("url", "uri")
_WRITE_TOOLS = ("Edit", "Write", "edit_file", "write_file")
"""The names a rule uses for a file write: a shell redirection is checked against them."""
_HARMLESS_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})
_EXPANDS = frozenset(DYNAMIC_MARKS).union("~]}()\\")
"""Characters of a redirection target that bash would expand (or that are left over from a
quoted one): such a target's real path is unknown, so `acceptEdits` never accepts it."""


def asks_by_default(tool: Tool, args: Mapping[str, Any] | None = None) -> bool:
    """True for the tools that need a yes when no rule speaks: they declare SHELL or DELETE, or
    were explicitly marked `destructive=True`. A tool that declares its annotations per call
    (`PerCallAnnotations`: the all-in-one `note`, `kb` and `memory`) asks only for a call
    those say is destructive, so reading or adding runs and deleting asks."""
    if args is not None and isinstance(tool, PerCallAnnotations):
        call = tool.annotations_for(args)
        return Permission.SHELL in tool.permissions or (not call.read_only and call.destructive)
    if tool.permissions & ASK_BY_DEFAULT:
        return True
    return bool(getattr(tool, "destructive_declared", False))


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

    def __str__(self) -> str:
        lines = [f"{self.decision}: {self.reason}"]
        for subject, decision, rule in self.parts:
            by = f"{rule.text!r} ({rule.decision}, from {rule.source})" if rule else "no rule"
            lines.append(f"  {subject!r}: {decision or 'unmatched'} by {by}")
        return "\n".join(lines)


@dataclass(frozen=True, init=False)
class Rules:
    """Permission rules. `default` answers calls of ask-by-default tools (shell, delete,
    destructive) that no rule matched; other tools run as they always did. `default="allow"`
    opts out of asking entirely."""

    allow: tuple[Rule, ...] = ()
    deny: tuple[Rule, ...] = ()
    ask: tuple[Rule, ...] = ()
    default: Decision = "ask"
    cwd: str | None = None
    parents: tuple[Rules, ...] = field(default=(), repr=False)

    def __init__(
        self,
        allow: Iterable[str | Rule] = (),
        deny: Iterable[str | Rule] = (),
        ask: Iterable[str | Rule] = (),
        default: Decision = "ask",
        *,
        source: str = "Rules(...)",
        root: str | os.PathLike[str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        parents: tuple[Rules, ...] = (),
    ) -> None:
        if default not in _STRICTNESS:
            raise RuleSyntaxError(
                f"Rules(default={default!r}) is not valid: use 'allow', 'ask' or 'deny'"
            )
        anchor = os.fspath(root) if root is not None else os.getcwd()

        def parsed(items: Iterable[str | Rule], decision: Decision) -> tuple[Rule, ...]:
            if isinstance(items, str):
                raise RuleSyntaxError(
                    f"Rules({decision}=...) must be a list of rules, got the string {items!r}"
                )
            return tuple(
                item if isinstance(item, Rule) else Rule.parse(item, decision, source=source,
                                                              root=anchor)
                for item in items
            )  # fmt: skip

        object.__setattr__(self, "allow", parsed(allow, "allow"))
        object.__setattr__(self, "deny", parsed(deny, "deny"))
        object.__setattr__(self, "ask", parsed(ask, "ask"))
        object.__setattr__(self, "default", default)
        object.__setattr__(self, "cwd", os.fspath(cwd) if cwd is not None else None)
        object.__setattr__(self, "parents", parents)

    @classmethod
    def from_settings(
        cls, *paths: str | os.PathLike[str], default: Decision = "ask",
        cwd: str | os.PathLike[str] | None = None,
    ) -> Rules:  # fmt: skip
        """Rules from Claude Code settings files (`{"permissions": {"allow": [...], ...}}`).

        `/path` rules are anchored at the project: the folder holding `.claude/` for a file
        inside `.claude/`, else the settings file's own folder; `./path` and `path` at `cwd`
        (default: the process's). Several files merge.
        """
        allow: list[Rule] = []
        deny: list[Rule] = []
        ask: list[Rule] = []
        for path in paths:
            file = Path(path).resolve()
            try:
                data = json.loads(file.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise RuleSyntaxError(f"cannot read settings file {file}: {exc}") from exc
            permissions = data.get("permissions", {}) if isinstance(data, dict) else None
            if not isinstance(permissions, dict):
                raise RuleSyntaxError(f"{file}: `permissions` must be an object")
            root = file.parent.parent if file.parent.name == ".claude" else file.parent
            for key, into in (("allow", allow), ("deny", deny), ("ask", ask)):
                items = permissions.get(key, [])
                if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
                    raise RuleSyntaxError(f"{file}: `permissions.{key}` must be a list of strings")
                decision: Decision = key  # type: ignore[assignment]
                into.extend(
                    Rule.parse(i, decision, source=str(file), root=str(root)) for i in items
                )
        return cls(allow, deny, ask, default, cwd=cwd)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], *, source: str, root: str) -> Rules:
        """Rules from a parsed table such as toolweave.toml's `[serve.rules]`."""
        unknown = set(data) - {"allow", "deny", "ask", "default"}
        if unknown:
            raise RuleSyntaxError(
                f"{source}: unknown key(s) {sorted(unknown)}; use allow, deny, ask and default"
            )
        return cls(
            data.get("allow", ()),
            data.get("deny", ()),
            data.get("ask", ()),
            data.get("default", "ask"),
            source=source,
            root=root,
        )

    def narrow(self, child: Rules) -> Rules:
        """`child`'s rules under these: each call gets the stricter of the two answers."""
        return Rules(
            child.allow,
            child.deny,
            child.ask,
            child.default,
            cwd=child.cwd or self.cwd,
            parents=(*child.parents, self),
        )

    def including(self, other: Rules) -> Rules:
        """These rules with `other`'s added at every level (a tool's own lists, such as the
        built-in shell's, join whatever rule set decides its calls)."""
        return Rules(
            (*self.allow, *other.allow),
            (*self.deny, *other.deny),
            (*self.ask, *other.ask),
            self.default,
            cwd=other.cwd or self.cwd,
            parents=tuple(parent.including(other) for parent in self.parents),
        )

    def decide(
        self, tool_name: str, args: Mapping[str, Any], *, tool: Tool | None = None
    ) -> Decision:
        """ "allow", "deny" or "ask" for calling `tool_name` with `args` (pass the `Tool` when
        you have it: its primary argument, permissions and MCP server name are used)."""
        return self.explain(tool_name, args, tool=tool).decision

    def explain(
        self, tool_name: str, args: Mapping[str, Any], *, tool: Tool | None = None,
        accept_edits: bool = False,
    ) -> Explanation:  # fmt: skip
        """The decision with the rule (and file) that made it and every part that was checked.
        `accept_edits` (permission mode `acceptEdits`): a shell redirection into a file inside
        the project that no rule decides counts as allowed (see `_redirect`)."""
        own = self._explain_own(tool_name, args, tool, accept_edits)
        for parent in self.parents:
            other = parent.explain(tool_name, args, tool=tool, accept_edits=accept_edits)
            if _STRICTNESS[other.decision] > _STRICTNESS[own.decision]:
                own = Explanation(
                    other.decision, f"{other.reason} (inherited from the parent run)",
                    other.rule, other.parts,
                )  # fmt: skip
        return replace(own, tool=claude_code_name(tool_name, tool))

    def _explain_own(
        self, tool_name: str, args: Mapping[str, Any], tool: Tool | None, accept_edits: bool
    ) -> Explanation:
        names = rule_names(tool_name, tool)
        rules = [r for r in (*self.deny, *self.ask, *self.allow) if r.matches_tool(names)]
        cwd = self.cwd or os.getcwd()
        key, kind = _primary(args, tool)
        value = args.get(key) if key is not None else None
        if kind == "command" and isinstance(value, str):
            # Redirections resolve where the shell runs (its `permission_cwd`); acceptEdits
            # accepts them only for a shell that says where that is (not a remote one).
            where = getattr(tool, "permission_cwd", None)
            writes = _Writes(cwd, where or cwd, accept_edits and where is not None)
            outcome = self._command(value, rules, writes)
        elif kind == "path" and isinstance(value, str):
            path, base = _opened_path(tool, value, cwd)
            outcome = _first(rules, path, _path_matcher(path, base))
        elif kind == "domain" and isinstance(value, str):
            outcome = _first(rules, value, lambda r: r.matches_domain(value))
        else:
            text = "" if value is None else str(value)
            outcome = _first(
                rules, text, lambda r: r.specifier is None or (value is not None and
                                                              r.matches_value(text))
            )  # fmt: skip
        if outcome is not None:
            return outcome
        if tool is not None and not asks_by_default(tool, args):
            return Explanation("allow", "no rule matched and the tool is not ask-by-default")
        return Explanation(
            self.default,
            f"no rule matched; `Rules(default={self.default!r})` applies to shell, delete and "
            "destructive tools",
        )

    def _command(self, command: str, rules: list[Rule], writes: _Writes) -> Explanation | None:
        write_rules = [r for r in (*self.deny, *self.ask, *self.allow) if
                       r.matches_tool(_WRITE_TOOLS)]  # fmt: skip
        if not rules and not write_rules:
            return None
        try:
            commands = parse_commands(command)
        except ShellParseError as exc:
            for rule in rules:
                if rule.decision == "deny" and rule.matches_command(command):
                    return Explanation("deny", f"denied by {rule.text!r}", rule)
            return Explanation(
                "ask", f"the command cannot be checked, so it is never allowed: {exc}"
            )
        parts: list[Part] = []
        env: dict[str, str] = {}
        if writes.accept_edits and any(map(changes_directory, commands)):
            writes = replace(writes, accept_edits=False)  # `cd ..; echo > x`: x is not where
        for simple in commands:
            remember_assignments(simple, env)
            if simple.words and not all(map(is_assignment, simple.words)):
                found, matched = _command_decision(simple, rules, env)
                subject = " ".join(simple.words)
                if simple.unchecked is not None and found != "deny":
                    parts.append(Part(subject, "ask", None, f"{simple.unchecked}, so it "
                                      "cannot be checked"))  # fmt: skip
                else:
                    parts.append(Part(subject, found, matched))
            for target in simple.writes:
                parts.extend(_redirect(target, write_rules, writes))
        if not commands:
            found, matched = _match_texts([command], [], rules)
            parts.append(Part(command, found, matched))
        return _aggregate(parts, self.default)


_TOOL_RULES: weakref.WeakKeyDictionary[Tool, Rules] = weakref.WeakKeyDictionary()


def tool_rules(tool: Tool) -> Rules | None:
    """The rules a tool carries for itself (`permission_rules`, as the built-in shell's allow
    and deny lists), parsed once; None when it has none."""
    spec = getattr(tool, "permission_rules", None)
    if not spec:
        return None
    cached = _TOOL_RULES.get(tool)
    if cached is None:
        cwd = getattr(tool, "permission_cwd", None)
        cached = Rules(
            spec.get("allow", ()), spec.get("deny", ()), spec.get("ask", ()),
            source=f"the {tool.name} tool's own lists", root=cwd, cwd=cwd,
        )  # fmt: skip
        _TOOL_RULES[tool] = cached
    return cached


def condition_matches(condition: str, tool_name: str, args: Mapping[str, Any]) -> bool:
    """Whether a hook's `if` rule (`Bash(git commit:*)`, `Edit(src/**)`) covers this call.

    It matches when any part of the call matches (one simple command of a shell line, as a deny
    rule would), and a call that cannot be checked counts as matching: a guard hook runs rather
    than be skipped."""
    rules = Rules(deny=[condition], default="allow", source="a hook's `if`")
    return rules.explain(tool_name, args).decision != "allow"


@dataclass(frozen=True)
class Part:
    """One checked piece of a shell line: a command or a redirection's target."""

    subject: str
    decision: Decision | None
    rule: Rule | None
    why: str = ""


@dataclass(frozen=True)
class _Writes:
    """How a shell line's redirections are decided: rules anchored at `cwd`, targets resolved
    from `where` (the shell's directory, the project), and whether `acceptEdits` is on."""

    cwd: str
    where: str
    accept_edits: bool


def _redirect(target: str, write_rules: list[Rule], writes: _Writes) -> list[Part]:
    """A redirection writes `target`, so Edit/Write rules decide it as a file edit. With no
    rule it asks, saying whether the file is outside the project; in `acceptEdits` a file
    inside the project is accepted, as Claude Code accepts edits in its working directory. A
    target bash expands first (`$`, `~`, globs, substitutions) is never allowed: only a deny or
    ask rule decides it, else it asks."""
    if target in _HARMLESS_TARGETS:
        return []
    path = resolve_path(target, writes.where)
    expands = bool(_EXPANDS.intersection(target))
    # A target bash expands (`$HOME/x`) is not the path seen here: no allow rule vouches for it.
    rules = [r for r in write_rules if r.decision != "allow"] if expands else write_rules
    found = _first(rules, path, _path_matcher(path, writes.cwd))
    if found is not None:
        return [Part(f"> {target}", found.decision, found.rule)]
    if expands:
        return [Part(f"> {target}", "ask", None, "bash expands the target first, so the file "
                     "it writes is not known, and no Edit or Write rule allows that")]  # fmt: skip
    root = os.path.realpath(writes.where)
    inside = path == root or path.startswith(root.rstrip("/") + "/")
    # /proc/self/cwd, /dev/fd/N: links this process resolves to its own files, not the shell's.
    magic = os.path.normpath(os.path.join(writes.where, target)).startswith(("/proc/", "/dev/"))
    if inside and writes.accept_edits and not magic:
        return [Part(f"> {target}", "allow", None, "permission mode 'acceptEdits' accepts "
                     f"edits inside the project ({path})")]  # fmt: skip
    where = "a file in the project" if inside else "a file outside the project"
    return [Part(f"> {target}", "ask", None, f"it writes {path}, {where}, and no Edit or "
                 "Write rule allows that")]  # fmt: skip


def _primary(args: Mapping[str, Any], tool: Tool | None) -> tuple[str | None, RuleKind]:
    key = tool.primary_arg if tool is not None else None
    if key is None:
        key = next((k for k in ("command", *_PATH_ARGS, *_URL_ARGS) if k in args), None)
    if key is None and len(args) == 1:  # a one-argument tool: that argument is the primary
        key = next(iter(args))
    if key == "command" or (tool is not None and Permission.SHELL in tool.permissions):
        return key, "command"
    if key in _PATH_ARGS:
        return key, "path"
    if key in _URL_ARGS:
        return key, "domain"
    return key, "value"


def _opened_path(tool: Tool | None, value: str, cwd: str) -> tuple[str, str]:
    """The path a tool will open for `value` and the folder its relative rules are anchored
    at: the tool's own answer (`rule_path`, as the filesystem jail gives), else `value`
    resolved against the tool's `permission_cwd` (or `cwd`), with rules anchored at `cwd`."""
    answer = getattr(tool, "rule_path", None)
    opened: tuple[str, str] | None = answer(value) if callable(answer) else None
    if opened is not None:
        return opened
    return resolve_path(value, getattr(tool, "permission_cwd", None) or cwd), cwd


def _first(rules: list[Rule], subject: str, matches: Callable[[Rule], bool]) -> Explanation | None:
    """The first matching rule in deny, ask, allow order, as an explanation."""
    for rule in rules:
        if matches(rule):
            verb = {"deny": "denied", "ask": "needs approval", "allow": "allowed"}[rule.decision]
            return Explanation(rule.decision, f"{verb} by {rule.text!r} from {rule.source}", rule,
                               ((subject, rule.decision, rule),))  # fmt: skip
    return None


def _path_matcher(path: str, cwd: str) -> Callable[[Rule], bool]:
    return lambda rule: rule.matches_path(path, cwd)


def _command_decision(
    simple: SimpleCommand, rules: list[Rule], env: Mapping[str, str]
) -> tuple[Decision | None, Rule | None]:
    return _match_texts(allow_texts(simple), deny_texts(simple, env), rules, simple, env)


def _match_texts(
    allow: list[str], deny: list[str], rules: list[Rule], simple: SimpleCommand | None = None,
    env: Mapping[str, str] | None = None,
) -> tuple[Decision | None, Rule | None]:  # fmt: skip
    # Deny and ask rules see every form of the command and its normalised shape; allow rules
    # only the forms `allow_texts` vouches for, so an allow is never widened.
    shapes = deny_shapes(simple, env or {}) if simple is not None else []
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
    for decision in ("deny", "ask"):
        for part in parts:
            if part.decision != decision:
                continue
            if part.rule is None:
                return Explanation(decision, f"{part.subject!r} needs approval: {part.why}",
                                   None, table)  # fmt: skip
            verb = "denied" if decision == "deny" else "needs approval"
            return Explanation(
                decision, f"{part.subject!r} {verb} by {part.rule.text!r} from "
                f"{part.rule.source}", part.rule, table,
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
