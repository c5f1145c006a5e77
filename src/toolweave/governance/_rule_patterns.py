"""One permission rule in Claude Code's syntax, and how its pattern matches a call.

`Tool`, `Tool(*)`, `Tool(specifier)`; the specifier is matched against the tool's primary
argument: a shell command (glob where `*` spans spaces; `prefix *` and the legacy `prefix:*` keep
a word boundary, so `ls *` does not match `lsof`), a path (gitignore-style, with Claude Code's
anchors `//abs`, `~/home`, `/relative-to-settings-root`, `./relative-to-cwd`; `*` stays inside a
directory, `**` crosses them) or `domain:host` for fetches. Tool names are globs matched
case-insensitively (and, outside `mcp__` names, ignoring `_`), so `mcp__github__*`, `Bash` and
`WebFetch` paste unchanged.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

from toolweave.governance._command_match import Shape, ShapePattern, spec_words
from toolweave.governance.errors import RuleSyntaxError
from toolweave.tools.base import Tool
from toolweave.tools.hosts import canonical_host, url_host
from toolweave.tools.permissions import Permission

Decision = Literal["allow", "deny", "ask"]
RuleKind = Literal["command", "path", "domain", "value"]

_RULE = re.compile(r"^\s*([A-Za-z0-9_.*?\-]+)\s*(?:\((.*)\))?\s*$", re.DOTALL)


@dataclass(frozen=True)
class Rule:
    """One parsed rule. `root` anchors `/path` patterns (the settings file's project root) and
    `source` names where the rule came from, for `Rules.explain`."""

    text: str
    decision: Decision
    tool: str
    specifier: str | None
    source: str
    root: str

    @classmethod
    def parse(cls, text: str, decision: Decision, *, source: str, root: str) -> Rule:
        match = _RULE.match(text)
        if match is None:
            raise RuleSyntaxError(
                f"permission rule {text!r} in {source} is not valid: write `Tool`, `Tool(*)` "
                "or `Tool(pattern)`, e.g. `bash(git status)`, `read(./src/**)`, "
                "`web_fetch(domain:example.com)` or `mcp__github__*`"
            )
        tool, specifier = match.group(1), match.group(2)
        if specifier is not None and specifier.strip() in ("", "*"):
            specifier = None  # `Tool(*)` and `Tool()` mean the whole tool
        return cls(text.strip(), decision, tool, specifier, source, root)

    def matches_tool(self, names: tuple[str, ...]) -> bool:
        pattern = _fold(self.tool)
        for name in names:
            lowered = _fold(name)
            if fnmatch.fnmatchcase(lowered, pattern):
                return True
            # `mcp__server` names every tool of that server, as in Claude Code.
            server_rule = pattern.startswith("mcp__") and pattern.count("__") == 1
            if server_rule and lowered.startswith(pattern + "__"):
                return True
        return False

    def matches_command(self, command: str) -> bool:
        if self.specifier is None:
            return True
        return self._command_regex.fullmatch(command) is not None

    def matches_shape(self, shape: Shape) -> bool:
        """The command's normalised shape (flags as a set) fits this rule's."""
        if self.specifier is None:
            return True
        return self._shape is not None and self._shape.matches(shape)

    @cached_property
    def _command_regex(self) -> re.Pattern[str]:
        return command_regex(self.specifier or "*")

    @cached_property
    def _shape(self) -> ShapePattern | None:
        return ShapePattern.of(self.specifier or "*")

    def matches_path(self, path: str, cwd: str) -> bool:
        """`path` must already be absolute and resolved (symlinks and `..`)."""
        if self.specifier is None:
            return True
        return path_regex(self.specifier, root=self.root, cwd=cwd).fullmatch(path) is not None

    def matches_domain(self, url: str) -> bool:
        if self.specifier is None:
            return True
        spec = self.specifier
        if not spec.startswith("domain:"):
            return fnmatch.fnmatchcase(url, spec)
        # Both sides in one spelling: `domain:127.0.0.1` meets `http://2130706433/` and
        # `domain:internal.example` meets `http://INTERNAL。example./`.
        return fnmatch.fnmatchcase(url_host(url), self._domain)

    @cached_property
    def _domain(self) -> str:
        pattern = (self.specifier or "")[len("domain:") :]
        glob = any(c in pattern for c in "*?[")
        return pattern.lower().rstrip(".") if glob else canonical_host(pattern)

    def matches_value(self, value: str) -> bool:
        return self.specifier is None or fnmatch.fnmatchcase(value, self.specifier)


def _fold(name: str) -> str:
    """Tool names compare case-insensitively and, outside `mcp__` names, without underscores,
    so Claude Code's `WebFetch` and `Bash` name our `web_fetch` and `bash`."""
    lowered = name.lower()
    return lowered if lowered.startswith("mcp__") else lowered.replace("_", "")


def command_regex(specifier: str) -> re.Pattern[str]:
    """Claude Code's command pattern: `*` spans anything (spaces too); a trailing ` *` or the
    legacy `:*` is optional and keeps the word boundary (`git *` matches `git` and `git push`,
    never `gitk`)."""
    boundary = False
    if specifier.endswith((":*", " *")):
        specifier, boundary = specifier[:-2], True
    if any(mark in specifier for mark in "'\"\\"):
        specifier = " ".join(spec_words(specifier))
    body = ".*".join(re.escape(part) for part in specifier.split("*"))
    if boundary:
        body += r"(?:\s.*)?"
    return re.compile(body, re.DOTALL)


def path_regex(specifier: str, *, root: str, cwd: str) -> re.Pattern[str]:
    """A gitignore-style path pattern, anchored as Claude Code anchors it, as an absolute regex.

    `//x` is absolute, `~/x` is under the home directory, `/x` is under `root` (the settings
    file's project), `./x` and `x` under `cwd`. An anchored pattern names one place (`./.env`
    is `<cwd>/.env`, `~/.ssh` is `$HOME/.ssh`); a bare pattern without a `/` (such as `.env` or
    `*.key`) matches that name at any depth below the cwd, as in .gitignore.
    """
    anywhere = False  # an anchor (`//`, `~/`, `/`, `./`) names one place
    if specifier.startswith("//"):
        base, rest = "/", specifier[2:]
    elif specifier == "~" or specifier.startswith("~/"):
        base, rest = os.path.expanduser("~"), specifier[2:]
    elif specifier.startswith("/"):
        base, rest = root, specifier[1:]
    elif specifier.startswith("./"):
        base, rest = cwd, specifier[2:]  # `./.env` is `<cwd>/.env`, not `src/.env`
    else:
        base, rest = cwd, specifier
        anywhere = "/" not in rest.rstrip("/")
    base = os.path.realpath(base)
    rest = rest.rstrip("/") or "**"
    prefix = re.escape(base.rstrip("/")) + "/"
    if anywhere:
        prefix += "(?:.*/)?"
    return re.compile(prefix + _glob_body(rest) + "(?:/.*)?", re.DOTALL)


def _glob_body(glob: str) -> str:
    out: list[str] = []
    index = 0
    while index < len(glob):
        char = glob[index]
        if glob.startswith("**/", index):
            out.append("(?:.*/)?")
            index += 3
            continue
        if glob.startswith("**", index):
            out.append(".*")
            index += 2
            continue
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        else:
            out.append(re.escape(char))
        index += 1
    return "".join(out)


def resolve_path(value: str, cwd: str) -> str:
    """`value` as the absolute path it names: `~` expanded, `..` folded, symlinks followed."""
    path = os.path.expanduser(value)
    if not os.path.isabs(path):
        path = os.path.join(cwd, path)
    return os.path.realpath(path)


def with_suggested_rule(
    hint: str | None, tool_name: str, tool: Tool | None, args: Mapping[str, Any]
) -> str | None:
    """`hint` with `{rule}` replaced by the narrowest allow rule for this call, as a quoted
    string: a shell tool with its one-line command (`"bash(git status)"`), any other tool by
    its name (`"note"`)."""
    if hint is None:
        return None
    rule = tool_name
    command = args.get("command")
    shell = tool is not None and Permission.SHELL in tool.permissions
    if shell and isinstance(command, str) and command.strip() and not set(")\n") & set(command):
        rule = f"{tool_name}({command.strip()})"
    return hint.replace("{rule}", json.dumps(rule))
