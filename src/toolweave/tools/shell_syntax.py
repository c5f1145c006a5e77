"""Split a shell command line into every simple command it would run, for permission rules.

A rule such as `bash(git *)` must see each command the line runs, not the line as typed:
`git status; rm -rf ~` runs `rm`, and so do `$(rm ...)`, backticks, pipes, subshells,
`bash -c "rm ..."`, `env X=1 rm`, `r''m` and `\\rm`. The line is parsed with bashlex (a port of
bash's own grammar); wrappers that run their arguments as a command (`env`, `timeout`, `nice`,
`nohup`, `command`, `xargs`, `sudo`, `exec`, ...) are stripped with their options, and strings a
shell evaluates (`bash -c`, `eval`, `find -exec`) are split recursively. Anything bashlex cannot
parse, or whose commands cannot be known without running it (a substitution inside `${...}` or an
expanding here-document), raises `ShellParseError`: callers fail closed.

This module sits in the tool layer so the rules of the agent and the built-in shell tool share
one parser; bashlex is imported on first use.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from typing import Any

from toolweave.tools.errors import ShellParseError

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
    """One command the line would run: `argv` (quotes removed, wrappers stripped) and the
    file redirections attached to it (or to the compound command around it)."""

    argv: tuple[str, ...]
    redirects: tuple[Redirect, ...] = ()

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
            trees = bashlex.parse(self.source)
        except Exception as exc:  # bashlex raises ParsingError, NotImplementedError, others
            raise ShellParseError(
                f"cannot parse the shell command {_clip(self.source)!r}: {_clip(str(exc))}. "
                "Rewrite it with plain commands, pipes and && "
                "(case, select, coproc, time and [[ ]] are not supported)"
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
            if part.kind == "word":
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
        argv = _strip_wrappers(words)
        if not argv:
            if redirects:  # `> file` alone still truncates the file
                self.found.append(SimpleCommand((), redirects))
            return
        self.found.append(SimpleCommand(tuple(argv), redirects))
        name = os.path.basename(argv[0])
        if name in _SHELLS:
            script = _shell_script(argv)
            if script is not None:
                _Walker(script, self.found, self.depth + 1).run()
        elif name == "eval" and len(argv) > 1:
            _Walker(" ".join(argv[1:]), self.found, self.depth + 1).run()
        elif name == "find":
            for inner in _find_exec(argv):
                self.emit(inner, ())


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


# Wrapper name -> (options that take a separate value, how many leading positionals to skip)
_WRAPPERS: dict[str, tuple[frozenset[str], int]] = {
    "env": (frozenset({"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}), 0),
    "timeout": (frozenset({"-s", "--signal", "-k", "--kill-after"}), 1),
    "nice": (frozenset({"-n", "--adjustment"}), 0),
    "nohup": (frozenset(), 0),
    "command": (frozenset(), 0),
    "builtin": (frozenset(), 0),
    "exec": (frozenset({"-a"}), 0),
    "stdbuf": (frozenset({"-i", "-o", "-e", "--input", "--output", "--error"}), 0),
    "ionice": (frozenset({"-c", "-n", "-p", "--class", "--classdata"}), 0),
    "xargs": (
        frozenset(
            {
                "-I", "-n", "-P", "-L", "-s", "-d", "-E", "-a",
                "--max-args", "--max-procs", "--max-lines", "--max-chars",
                "--delimiter", "--eof", "--arg-file", "--replace",
            }
        ),
        0,
    ),
    "sudo": (
        frozenset(
            {
                "-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-T", "-U",
                "--user", "--group", "--close-from", "--chdir", "--host", "--prompt",
                "--role", "--type", "--command-timeout", "--other-user",
            }
        ),
        0,
    ),
    "doas": (frozenset({"-u", "-C"}), 0),
}  # fmt: skip


def _strip_wrappers(words: list[str]) -> list[str]:
    """Drop leading VAR=x words and wrapper commands (with their options) until the real one."""
    argv = list(words)
    while argv:
        while argv and _is_assignment(argv[0]):
            argv.pop(0)
        if not argv:
            return []
        name = os.path.basename(argv[0])
        spec = _WRAPPERS.get(name)
        if spec is None:
            return argv
        with_value, positionals = spec
        rest = argv[1:]
        if name == "command" and rest[:1] in (["-v"], ["-V"]):
            return argv  # `command -v x` only looks x up; keep it visible as itself
        split_string: str | None = None
        while rest and rest[0].startswith(("-", "+")) and rest[0] not in ("-", "+"):
            option = rest.pop(0)
            if option == "--":
                break
            key = option.split("=", 1)[0]
            if name == "nice" and option[1:].isdigit():  # nice -10
                continue
            if key in with_value and "=" not in option:
                if not rest:
                    raise ShellParseError(f"`{name} {option}` is missing its value")
                value = rest.pop(0)
                if key in ("-S", "--split-string"):
                    split_string = value
            elif key in ("-S", "--split-string"):
                split_string = option.split("=", 1)[1]
        if name == "env":
            while rest and _is_assignment(rest[0]):
                rest.pop(0)
        if split_string is not None:  # env -S "rm -rf /" runs the split string
            rest = shlex.split(split_string) + rest
        argv = rest[positionals:]
        if name == "xargs" and not argv:
            return ["echo"]  # xargs runs echo by default
    return argv


def _is_assignment(word: str) -> bool:
    name, sep, _ = word.partition("=")
    return bool(sep) and name.isidentifier()


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
