"""Split a shell command line into every simple command it would run, for permission rules.

A rule such as `bash(git *)` must see each command the line runs, not the line as typed:
`git status; rm -rf ~` runs `rm`, and so do `$(rm ...)`, backticks, pipes, subshells,
`bash -c "rm ..."`, `env X=1 rm`, `r''m`, `\\rm` and `$'\\x72m'`. The line is parsed with
bashlex (a port of bash's own grammar; `_shell_source` first rewrites the `time` keyword and
ANSI-C strings it cannot read). Each command keeps its forms: as written (`VAR=x` prefixes
included) and after each wrapper that runs its arguments as a command (`sudo`, `xargs`,
`timeout`, `setsid`, `flock`, ...: `_shell_wrappers`) is peeled, so a rule can match either.
Strings a shell evaluates (`bash -c`, `su -c`, `eval`, `trap`, `find -exec`) are split
recursively; a shell that reads its script from stdin (`| bash`, `bash <<<`, `source <(...)`)
is marked `unchecked`. Anything bashlex cannot parse, or whose commands cannot be known without
running it (a substitution inside `${...}` or an expanding here-document), raises
`ShellParseError`: callers fail closed.

This module sits in the tool layer so the rules of the agent and the built-in shell tool share
one parser; bashlex is imported on first use.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from toolweave.tools._shell_source import prepare
from toolweave.tools.errors import ShellParseError
from toolweave.tools.shell_wrappers import is_assignment, peel

__all__ = ["Redirect", "ShellParseError", "SimpleCommand", "parse_commands", "split_commands"]

MAX_NESTING = 16
"""How deep `bash -c "bash -c ..."` may nest before the line is refused as unparseable."""

_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "ash", "fish"})
_SHELL_OPTIONS_WITH_VALUE = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})
_WRITE_OPERATORS = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})


@dataclass(frozen=True, slots=True)
class Redirect:
    """One redirection: `operator` as written (`>`, `>>`, `<`, `&>`...) and its file `target`."""

    operator: str
    target: str

    @property
    def writes(self) -> bool:
        """True when the redirection creates or changes the target file."""
        return self.operator in _WRITE_OPERATORS


@dataclass(frozen=True, slots=True)
class SimpleCommand:
    """One command the line would run.

    `argv` is the command that really runs (quotes removed, `VAR=x` prefixes and wrappers
    stripped); `forms` are the command as written (`words`, prefixes included) and after each
    wrapper is peeled, ending with `argv`; the first `neutral` + 1 forms differ only by wrappers
    that change nothing an allow rule vouches for (`timeout 5`). `redirects` are the file
    redirections attached to it (or to the compound command around it). `unchecked` says why
    the command's real work cannot be known (a shell reading its script from stdin)."""

    argv: tuple[str, ...]
    redirects: tuple[Redirect, ...] = ()
    forms: tuple[tuple[str, ...], ...] = ()
    neutral: int = 0
    unchecked: str | None = None

    @property
    def words(self) -> tuple[str, ...]:
        """The command as written, `VAR=x` prefixes and wrappers included."""
        return self.forms[0] if self.forms else self.argv

    @property
    def writes(self) -> tuple[str, ...]:
        """The files this command's redirections write."""
        return tuple(r.target for r in self.redirects if r.writes)


def split_commands(command: str) -> list[list[str]]:
    """The argv of every simple command in `command`; raises ShellParseError when unknown.

    A bare redirection (`> file`) runs no command and has no argv; `parse_commands` shows it.
    """
    return [list(c.argv) for c in parse_commands(command) if c.argv]


def parse_commands(command: str) -> list[SimpleCommand]:
    """Every simple command in `command` with its redirections; raises ShellParseError."""
    found: list[SimpleCommand] = []
    _Walker(command, found, depth=0).run()
    return found


class _Walker:
    """Walks one bashlex parse, appending each simple command to `found`."""

    def __init__(self, source: str, found: list[SimpleCommand], depth: int) -> None:
        if depth > MAX_NESTING:
            raise ShellParseError(
                f"shell commands nest deeper than {MAX_NESTING} levels (bash -c / eval)"
            )
        self.source = source
        self.found = found
        self.depth = depth

    def run(self) -> None:
        if not self.source.strip():
            return
        import bashlex  # lazy: only rules and the shell tool need it

        try:
            trees = bashlex.parse(prepare(self.source))
        except Exception as exc:  # bashlex raises ParsingError, NotImplementedError, others
            raise ShellParseError(
                f"cannot parse the shell command {_clip(self.source)!r}: {_clip(str(exc))}. "
                "Rewrite it with plain commands, pipes and && "
                "(case, select, coproc and [[ ]] are not supported)"
            ) from exc
        for tree in trees:
            self.visit(tree, ())

    def visit(self, node: Any, outer: tuple[Redirect, ...]) -> None:
        kind = node.kind
        if kind == "command":
            self.command(node, outer)
        elif kind in ("commandsubstitution", "processsubstitution"):
            self.visit(node.command, ())
        elif kind == "parameter":
            if any(mark in node.value for mark in ("$(", "`", "<(", ">(")):
                raise ShellParseError(
                    f"a command substitution inside ${{{node.value}}} cannot be checked; "
                    "write it as a separate command"
                )
        elif kind == "redirect":
            self.redirect(node)
        else:
            redirects = outer + self.redirects(getattr(node, "redirects", ()))
            for child in _children(node):
                self.visit(child, redirects)

    def command(self, node: Any, outer: tuple[Redirect, ...]) -> None:
        words: list[str] = []
        redirects = list(outer)
        for part in node.parts:
            if part.kind in ("word", "assignment"):
                words.append(part.word)
                self.visit_word_parts(part)
            elif part.kind == "redirect":
                redirects.extend(self.redirect(part))
            else:  # assignments and anything else: look inside for substitutions
                self.visit_word_parts(part)
        self.emit(words, tuple(redirects))

    def visit_word_parts(self, node: Any) -> None:
        for part in getattr(node, "parts", ()):
            self.visit(part, ())

    def redirects(self, nodes: Any) -> tuple[Redirect, ...]:
        collected: list[Redirect] = []
        for node in nodes:
            collected.extend(self.redirect(node))
        return tuple(collected)

    def redirect(self, node: Any) -> list[Redirect]:
        target = node.output
        heredoc = getattr(node, "heredoc", None)
        if heredoc is not None:
            if any(mark in heredoc.value for mark in ("$(", "`")):
                raise ShellParseError(
                    "a here-document that expands $(...) or backticks cannot be checked; "
                    "quote its delimiter or write the command separately"
                )
            return []
        if isinstance(target, int) or target is None:  # 2>&1: a descriptor, not a file
            return []
        self.visit_word_parts(target)
        return [Redirect(node.type, target.word)]

    def emit(self, words: list[str], redirects: tuple[Redirect, ...]) -> None:
        forms = [tuple(words)]
        argv = list(words)
        neutral = 0
        still_neutral = True
        unchecked: str | None = None
        scripts: list[str] = []
        while argv:
            while argv and is_assignment(argv[0]):
                argv.pop(0)
                still_neutral = False
            if not argv:
                break
            peeled = peel(argv)  # a WrapperError is a ShellParseError
            if peeled is None:
                break
            argv = peeled.inner
            if peeled.script is not None:
                scripts.append(peeled.script)
            if peeled.stdin_shell:
                unchecked = f"`{' '.join(words)}` starts a shell that reads its commands from stdin"
            still_neutral = still_neutral and peeled.neutral
            if argv and tuple(argv) != forms[-1]:
                forms.append(tuple(argv))
                neutral += still_neutral
        if argv and tuple(argv) != forms[-1]:
            forms.append(tuple(argv))
        if not argv and not words:
            if redirects:  # `> file` alone still truncates the file
                self.found.append(SimpleCommand((), redirects))
            return
        if argv:
            unchecked = unchecked or self.stdin_script(argv, redirects)
        self.found.append(SimpleCommand(tuple(argv), redirects, tuple(forms), neutral, unchecked))
        for script in scripts:
            _Walker(script, self.found, self.depth + 1).run()
        if not argv:
            return
        name = os.path.basename(argv[0])
        if name in _SHELLS:
            inner = _shell_script(argv)
            if inner is not None:
                _Walker(inner, self.found, self.depth + 1).run()
        elif name == "eval" and len(argv) > 1:
            _Walker(" ".join(argv[1:]), self.found, self.depth + 1).run()
        elif name == "trap":
            action = _trap_action(argv)
            if action is not None:
                _Walker(action, self.found, self.depth + 1).run()
        elif name == "find":
            for executed in _find_exec(argv):
                self.emit(executed, ())

    @staticmethod
    def stdin_script(argv: list[str], redirects: tuple[Redirect, ...]) -> str | None:
        """Why a shell here runs commands no rule can see, or None."""
        name = os.path.basename(argv[0])
        if name in _SUBSCRIPT_EVALUATORS and any(_runs_in_subscript(a) for a in argv[1:]):
            return f"`{' '.join(argv)}` evaluates an array subscript that runs a command"
        if name in ("source", ".") and any(_is_substitution(a) for a in argv[1:2]):
            return f"`{' '.join(argv)}` runs the output of another command as a script"
        if name in ("source", ".") and argv[1:2] in (["/dev/stdin"], ["-"]):
            return f"`{' '.join(argv)}` runs its script from stdin"
        if name not in _SHELLS or _shell_script(argv) is not None:
            return None
        files = [a for a in argv[1:] if not a.startswith(("-", "+"))]
        if "-s" in argv[1:] or not files or any(r.operator in ("<<<", "<<", "<") for r in
                                                     redirects):  # fmt: skip
            return f"`{' '.join(argv)}` is a shell reading its commands from stdin"
        if _is_substitution(files[0]):
            return f"`{' '.join(argv)}` runs the output of another command as a script"
        return None


_SUBSCRIPT_EVALUATORS = frozenset(
    {"printf", "test", "[", "read", "declare", "typeset", "local", "export", "readonly", "unset",
     "let", "mapfile", "readarray", "wait"}
)  # fmt: skip
"""Builtins that evaluate a quoted `a[...]` name, running any `$(...)` inside the subscript."""


def _runs_in_subscript(word: str) -> bool:
    start = word.find("[")
    return start > 0 and any(mark in word[start:] for mark in ("$(", "`"))


def _is_substitution(word: str) -> bool:
    return word.startswith(("<(", "/dev/fd/", "/proc/self/fd/"))


def _clip(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def _children(node: Any) -> list[Any]:
    """The sub-nodes of a bashlex list, pipeline, compound, loop or function node."""
    children: list[Any] = []
    for attribute in ("parts", "list"):
        value = getattr(node, attribute, None)
        if isinstance(value, list):
            children.extend(value)
    return children


def _shell_script(argv: list[str]) -> str | None:
    """The string a `bash -c '...'`-style call runs, or None when it runs a file or stdin."""
    args = argv[1:]
    index = 0
    while index < len(args):
        arg = args[index]
        if arg in _SHELL_OPTIONS_WITH_VALUE:
            index += 2
            continue
        if arg.startswith("-") and not arg.startswith("--") and "c" in arg[1:]:
            if index + 1 >= len(args):
                raise ShellParseError(f"`{' '.join(argv)}`: -c needs a command string")
            return args[index + 1]
        if not arg.startswith(("-", "+")):
            return None
        index += 1
    return None


def _trap_action(argv: list[str]) -> str | None:
    """The command string `trap 'cmd' EXIT` runs when the signal comes (None for `trap -p`,
    `trap -l`, `trap - SIG` and a bare `trap SIG`, which run nothing)."""
    args = argv[1:]
    if args[:1] == ["--"]:
        args = args[1:]
    if len(args) < 2 or args[0] in ("-", "-p", "-l", "-P"):
        return None
    return args[0]


def _find_exec(argv: list[str]) -> list[list[str]]:
    """The commands `find ... -exec cmd {} ;` (and -execdir, -ok, -okdir) runs."""
    commands: list[list[str]] = []
    index = 1
    while index < len(argv):
        if argv[index] in ("-exec", "-execdir", "-ok", "-okdir"):
            end = index + 1
            while end < len(argv) and argv[end] not in (";", "+"):
                end += 1
            if end > index + 1:
                commands.append(argv[index + 1 : end])
            index = end
        index += 1
    return commands
