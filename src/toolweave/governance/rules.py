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
    Seen,
    changes_directory,
    computed_name,
    remember_assignments,
)
from toolweave.governance._rule_parts import (
    Explanation,
    Part,
    _aggregate,
    _command_decision,
    _first,
    _match_texts,
    _path_matcher,
    _redirect,
    _Writes,
)
from toolweave.governance._rule_patterns import Decision, Rule, RuleKind, resolve_path
from toolweave.governance.errors import RuleSyntaxError
from toolweave.tools import Permission, Tool
from toolweave.tools.base import PerCallAnnotations
from toolweave.tools.claude_names import claude_code_name, rule_names
from toolweave.tools.permissions import ASK_BY_DEFAULT
from toolweave.tools.shell_syntax import ShellParseError, parse_commands
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
UNASKED_MODES = frozenset({"bypassPermissions", "dontAsk"})
"""Permission modes that answer an `ask` without a person (yes, or no)."""
_PATH_ARGS = ("path", "file_path", "filename", "file", "directory", "dir")
_URL_ARGS = ("url", "uri")
_WRITE_TOOLS = ("Edit", "Write", "edit_file", "write_file")
"""The names a rule uses for a file write: a shell redirection is checked against them."""


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
                item
                if isinstance(item, Rule)
                else Rule.parse(item, decision, source=source, root=anchor)
                for item in items
            )

        object.__setattr__(self, "allow", parsed(allow, "allow"))
        object.__setattr__(self, "deny", parsed(deny, "deny"))
        object.__setattr__(self, "ask", parsed(ask, "ask"))
        object.__setattr__(self, "default", default)
        object.__setattr__(self, "cwd", os.fspath(cwd) if cwd is not None else None)
        object.__setattr__(self, "parents", parents)

    @classmethod
    def from_settings(
        cls,
        *paths: str | os.PathLike[str],
        default: Decision = "ask",
        cwd: str | os.PathLike[str] | None = None,
    ) -> Rules:
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
        self,
        tool_name: str,
        args: Mapping[str, Any],
        *,
        tool: Tool | None = None,
        accept_edits: bool = False,
    ) -> Explanation:
        """The decision with the rule (and file) that made it and every part that was checked.
        `accept_edits` (permission mode `acceptEdits`): a shell redirection into a file inside
        the project that no rule decides counts as allowed (see `_redirect`)."""
        own = self._explain_own(tool_name, args, tool, accept_edits)
        for parent in self.parents:
            other = parent.explain(tool_name, args, tool=tool, accept_edits=accept_edits)
            if _STRICTNESS[other.decision] > _STRICTNESS[own.decision]:
                own = Explanation(
                    other.decision,
                    f"{other.reason} (inherited from the parent run)",
                    other.rule,
                    other.parts,
                    checked=other.checked,
                )
        return replace(own, tool=claude_code_name(tool_name, tool))

    def allows(self, tool_name: str, tool: Tool | None) -> Callable[[str], bool]:
        """For a tool that checks what it meets (`toolweave.tools.targets`): whether these rules
        allow it another value of its primary argument (a file a walk would open, a name a
        listing would show, a redirect hop). Anything but allow refuses: the tool cannot stop
        to ask about each one."""
        key = (tool.primary_arg if tool is not None else None) or "path"

        def check(path: str) -> bool:
            return self.explain(tool_name, {key: path}, tool=tool).decision == "allow"

        return check

    def unchecked_refused(
        self, explanation: Explanation, tool_name: str, tool: Tool | None, mode: str
    ) -> Explanation:
        """In the modes that answer questions without a person (`bypassPermissions`,
        `dontAsk`), a line that cannot be checked is denied when any deny rule speaks about
        this tool (the built-in shell's `DEFAULT_DENY` included): what it runs might be what
        the rule forbids. Other explanations come back unchanged."""
        if explanation.checked or explanation.decision != "ask" or mode not in UNASKED_MODES:
            return explanation
        names = (*rule_names(tool_name, tool), *_WRITE_TOOLS)
        deny = next((r for r in self._all_deny() if r.matches_tool(names)), None)
        if deny is None:
            return explanation
        return replace(
            explanation,
            decision="deny",
            rule=deny,
            reason=f"{explanation.reason}; in permission mode {mode!r} a line that cannot be "
            f"checked is refused while a deny rule applies ({deny.text!r} from {deny.source}): "
            "rewrite it with plain commands",
        )

    def _all_deny(self) -> tuple[Rule, ...]:
        return (*self.deny, *(r for parent in self.parents for r in parent._all_deny()))

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
                rules,
                text,
                lambda r: r.specifier is None or (value is not None and r.matches_value(text)),
            )
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
        write_rules = [
            r for r in (*self.deny, *self.ask, *self.allow) if r.matches_tool(_WRITE_TOOLS)
        ]
        if not rules and not write_rules:
            return None
        try:
            commands = parse_commands(command)
        except ShellParseError as exc:
            for rule in rules:
                if rule.decision == "deny" and rule.matches_command(command):
                    return Explanation("deny", f"denied by {rule.text!r}", rule)
            return Explanation(
                "ask",
                f"the command cannot be checked, so it is never allowed: {exc}",
                checked=False,
            )
        parts: list[Part] = []
        env = Seen()
        if writes.accept_edits and any(map(changes_directory, commands)):
            writes = replace(writes, accept_edits=False)  # `cd ..; echo > x`: x is not where
        for simple in commands:
            remember_assignments(simple, env)
            if simple.words and not all(map(is_assignment, simple.words)):
                found, matched = _command_decision(simple, rules, env)
                subject = " ".join(simple.words)
                unchecked = simple.unchecked
                if unchecked is None and computed_name(simple, env):
                    unchecked = "bash computes the command's name when it runs"
                if unchecked is not None and found != "deny":
                    parts.append(
                        Part(
                            subject,
                            "ask",
                            None,
                            f"{unchecked}, so it cannot be checked",
                            unchecked=True,
                        )
                    )
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
            spec.get("allow", ()),
            spec.get("deny", ()),
            spec.get("ask", ()),
            source=f"the {tool.name} tool's own lists",
            root=cwd,
            cwd=cwd,
        )
        _TOOL_RULES[tool] = cached
    return cached


def call_rules(rules: Rules, tool: Tool, granted: Rules | None) -> Rules:
    """The rule set one call of `tool` meets: `rules`, the tool's own lists (the built-in
    shell's) and the run's grants (allowed-tools: allow rules, never above a deny or ask)."""
    own = tool_rules(tool)
    if own is not None:
        rules = rules.including(own)
    return rules.including(granted) if granted is not None else rules


def condition_matches(condition: str, tool_name: str, args: Mapping[str, Any]) -> bool:
    """Whether a hook's `if` rule (`Bash(git commit:*)`, `Edit(src/**)`) covers this call.

    It matches when any part of the call matches (one simple command of a shell line, as a deny
    rule would), and a call that cannot be checked counts as matching: a guard hook runs rather
    than be skipped."""
    rules = Rules(deny=[condition], default="allow", source="a hook's `if`")
    return rules.explain(tool_name, args).decision != "allow"


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
