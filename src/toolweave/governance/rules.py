"""`Rules`: allow / deny / ask permission rules in Claude Code's syntax, so users paste theirs.

`rules.decide(tool_name, args)` answers "allow", "deny" or "ask"; deny beats ask beats allow,
whatever the order or specificity. Shell commands are split into every simple command they run
(`toolweave.tools.shell_syntax`): any one denied denies the line, all allowed allows it, otherwise
it asks; a line that cannot be parsed is never allowed. File writes through redirections are checked
against `edit`/`write` path rules too. `rules.explain(...)` says which rule, from which file,
decided, because "why did my deny rule not fire?" is the question users cannot answer.

A child run narrows its parent's rules (`parent.narrow(child)`): the stricter answer wins, so a
subagent can never do what its parent may not."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolweave.governance._rule_patterns import Decision, Rule, RuleKind, resolve_path
from toolweave.governance.errors import RuleSyntaxError
from toolweave.tools import Permission, Tool
from toolweave.tools.permissions import ASK_BY_DEFAULT
from toolweave.tools.shell_syntax import ShellParseError, parse_commands

__all__ = ["Decision", "Explanation", "RuleSyntaxError", "Rules", "asks_by_default"]

_STRICTNESS: dict[Decision, int] = {"allow": 0, "ask": 1, "deny": 2}
_PATH_ARGS = ("path", "file_path", "filename", "file", "directory", "dir")
_URL_ARGS = ("url", "uri")
_WRITE_TOOLS = ("edit", "write")
_DYNAMIC_MARKS = ("$", "`", "*", "?", "[", "{")
"""In a command name, these mean bash decides the name at run time (expansion, globbing)."""


def asks_by_default(tool: Tool) -> bool:
    """True for the tools that need a yes when no rule speaks: they declare SHELL or DELETE, or
    were explicitly marked `destructive=True`. A tool that gates itself (`asks_itself`: it raises
    `ApprovalRequired` before any side effect for whatever its own allow list does not cover, as
    the built-in shell does) is not asked a second time by default; rules still apply to it."""
    if getattr(tool, "asks_itself", False):
        return False
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
    def from_settings(cls, *paths: str | os.PathLike[str], default: Decision = "ask") -> Rules:
        """Rules from Claude Code settings files (`{"permissions": {"allow": [...], ...}}`).

        `/path` rules are anchored at the project: the folder holding `.claude/` for a file
        inside `.claude/`, else the settings file's own folder. Several files merge.
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
        return cls(allow, deny, ask, default)

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

    def decide(
        self, tool_name: str, args: Mapping[str, Any], *, tool: Tool | None = None
    ) -> Decision:
        """ "allow", "deny" or "ask" for calling `tool_name` with `args` (pass the `Tool` when
        you have it: its primary argument, permissions and MCP server name are used)."""
        return self.explain(tool_name, args, tool=tool).decision

    def explain(
        self, tool_name: str, args: Mapping[str, Any], *, tool: Tool | None = None
    ) -> Explanation:
        """The decision with the rule (and file) that made it and every part that was checked."""
        own = self._explain_own(tool_name, args, tool)
        for parent in self.parents:
            other = parent.explain(tool_name, args, tool=tool)
            if _STRICTNESS[other.decision] > _STRICTNESS[own.decision]:
                own = Explanation(
                    other.decision, f"{other.reason} (inherited from the parent run)",
                    other.rule, other.parts,
                )  # fmt: skip
        return own

    def _explain_own(
        self, tool_name: str, args: Mapping[str, Any], tool: Tool | None
    ) -> Explanation:
        names = _rule_names(tool_name, tool)
        rules = [r for r in (*self.deny, *self.ask, *self.allow) if r.matches_tool(names)]
        cwd = self.cwd or os.getcwd()
        key, kind = _primary(args, tool)
        value = args.get(key) if key is not None else None
        if kind == "command" and isinstance(value, str):
            outcome = self._command(value, rules, cwd)
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
        if tool is not None and not asks_by_default(tool):
            return Explanation("allow", "no rule matched and the tool is not ask-by-default")
        return Explanation(
            self.default,
            f"no rule matched; `Rules(default={self.default!r})` applies to shell, delete and "
            "destructive tools",
        )

    def _command(self, command: str, rules: list[Rule], cwd: str) -> Explanation | None:
        if not rules and not self._write_rules():
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
        parts: list[tuple[str, Decision | None, Rule | None]] = []
        for simple in commands or ():
            text = " ".join(simple.argv)
            if simple.argv:
                parts.append((text, *_command_decision(text, simple.argv, rules)))
            for target in simple.writes:
                path = resolve_path(target, cwd)
                found = _first(self._write_rules(), path, _path_matcher(path, cwd))
                if found is not None and found.decision != "allow":
                    parts.append((f"> {target}", found.decision, found.rule))
        if not commands:
            parts.append((command, *_command_decision(command, (command,), rules)))
        return _aggregate(parts, self.default)

    def _write_rules(self) -> list[Rule]:
        return [r for r in (*self.deny, *self.ask) if r.matches_tool(_WRITE_TOOLS)]


def _rule_names(tool_name: str, tool: Tool | None) -> tuple[str, ...]:
    """The names a rule may use for this tool: its own and, for an MCP tool, Claude Code's
    `mcp__server__tool`."""
    server, remote = getattr(tool, "server", None), getattr(tool, "remote_name", None)
    if isinstance(server, str) and isinstance(remote, str):
        return (tool_name, f"mcp__{server}__{remote}")
    return (tool_name,)


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
    resolved against `cwd`."""
    answer = getattr(tool, "rule_path", None)
    opened = answer(value) if callable(answer) else None
    return opened if opened is not None else (resolve_path(value, cwd), cwd)


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
    text: str, argv: tuple[str, ...], rules: list[Rule]
) -> tuple[Decision | None, Rule | None]:
    # Deny and ask rules also see the command by its bare name (`/bin/rm` is `rm`); allow rules
    # only match what was written, so an allow can never be widened by a path, and never a
    # command whose name is computed when it runs (`ls$X`, `$CMD`, `r?`, `{rm,-rf,/}`).
    variants = [text]
    if "/" in argv[0]:
        variants.append(" ".join((os.path.basename(argv[0]), *argv[1:])))
    dynamic = any(mark in argv[0] for mark in _DYNAMIC_MARKS)
    for rule in rules:
        if rule.decision == "allow" and dynamic:
            continue
        candidates = variants if rule.decision != "allow" else variants[:1]
        if any(rule.matches_command(v) for v in candidates):
            return rule.decision, rule
    return None, None


def _aggregate(
    parts: list[tuple[str, Decision | None, Rule | None]], default: Decision
) -> Explanation | None:
    for decision in ("deny", "ask"):
        for subject, found, rule in parts:
            if found == decision and rule is not None:
                verb = "denied" if decision == "deny" else "needs approval"
                return Explanation(
                    decision, f"{subject!r} {verb} by {rule.text!r} from {rule.source}", rule,
                    tuple(parts),
                )  # fmt: skip
    if parts and all(found == "allow" for _, found, _ in parts):
        return Explanation("allow", "every command is allowed", None, tuple(parts))
    if any(found is not None for _, found, _ in parts):
        unmatched = [subject for subject, found, _ in parts if found is None]
        return Explanation(
            default,
            f"not every command is allowed (no rule matched {unmatched}); "
            f"`Rules(default={default!r})` applies",
            None,
            tuple(parts),
        )
    return None
