"""How a `Bash(...)` rule meets one simple command: as written, unwrapped, and normalised.

Allow rules see the command as written and through neutral wrappers only (`timeout 5 git
status`), never through `sudo`, `env`, `xargs` or a `VAR=x` prefix, and never a command whose
name bash computes at run time. Deny and ask rules see every form (as written, each wrapper
peeled, the bare name of `/usr/bin/../bin/rm`, variables assigned earlier on the line
substituted) and, beyond the text, the command's *shape*: its name, the set of its flags and its
positional words. Flags are normalised the way the commands themselves read them: clusters
split (`-qf` is `-q -f`), braces expanded (`-{r,f}`), long options resolved to their short form
even when abbreviated (`rm --recur` is `rm -r`), and a `+ref` of `git push` is `-f`. So the
deny `Bash(rm -r *)` also refuses `rm x -fR`, `rm --recursive x` and `R=-rf; rm $R`.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase

from toolweave.tools.shell_syntax import SimpleCommand

DYNAMIC_MARKS = ("$", "`", "*", "?", "[", "{")
"""In a command name, these mean bash decides the name at run time (expansion, globbing)."""
_DIRECTORY_CHANGERS = frozenset({"cd", "pushd", "popd", "source", "."})

_RM = {
    "recursive": "-r",
    "force": "-f",
    "dir": "-d",
    "interactive": "-i",
    "verbose": "-v",
    "one-file-system": "",
    "no-preserve-root": "",
    "preserve-root": "",
}
_MODE = {
    "recursive": "-R",
    "changes": "-c",
    "silent": "-f",
    "quiet": "-f",
    "verbose": "-v",
    "reference": "",
    "preserve-root": "",
    "no-preserve-root": "",
    "dereference": "",
    "no-dereference": "-h",
    "from": "",
}
_PUSH = {
    "force": "-f",
    "force-with-lease": "-f",
    "force-if-includes": "-f",
    "quiet": "-q",
    "verbose": "-v",
    "delete": "-d",
    "set-upstream": "-u",
    "dry-run": "-n",
    "push-option": "-o",
    "all": "",
    "mirror": "",
    "tags": "",
    "no-verify": "",
    "atomic": "",
    "prune": "",
    "follow-tags": "",
    "porcelain": "",
    "progress": "",
    "signed": "",
    "repo": "",
    "receive-pack": "",
    "exec": "",
    "recurse-submodules": "",
    "verify": "",
    "thin": "",
    "no-thin": "",
    "ipv4": "-4",
    "ipv6": "-6",
    "no-force-with-lease": "",
}
_LONG: dict[str, dict[str, str]] = {
    "rm": _RM, "chmod": _MODE, "chown": _MODE, "chgrp": _MODE, "git push": _PUSH,
}  # fmt: skip
"""Long options (and the short flag each means) of the commands the built-in deny list names;
an unambiguous prefix (`--recur`) resolves as getopt resolves it."""
_SHORT_ALIASES: dict[str, dict[str, str]] = {"rm": {"-R": "-r"}}
_VALUED_SHORT: dict[str, frozenset[str]] = {
    "git": frozenset({"-C", "-c"}),
    "git push": frozenset({"-o"}),
}
_GIT_VALUED_LONG = frozenset({"--git-dir", "--work-tree", "--namespace", "--config-env"})
_VARIABLE = re.compile(r"^\$(?:\{(\w+)\}|(\w+))$")
_REFERENCE = re.compile(r"\$(?:\{(\w+)\}|(\w+))")
_BRACES = re.compile(r"^(.*?)\{([^{}]*,[^{}]*)\}(.*)$")


@dataclass(frozen=True, slots=True)
class Shape:
    """A command as its flags mean it: `name` (a bare name), `flags`, `positionals`."""

    name: str
    flags: frozenset[str]
    positionals: tuple[str, ...]


def text(words: Sequence[str]) -> str:
    return " ".join(words)


def allow_texts(simple: SimpleCommand) -> list[str]:
    """The command texts an allow rule may match (empty when the name is computed)."""
    forms = simple.forms[: simple.neutral + 1] or (simple.argv,)
    return [text(form) for form in forms if form and not _dynamic(form)]


@dataclass
class Seen:
    """What earlier commands of a line set up for the later ones: `variables` assigned
    (`R=-rf`) and `names` rebound (`hash -p /bin/rm r`, `alias r='rm -rf'`: `r` runs those
    words)."""

    variables: dict[str, str] = field(default_factory=dict)
    names: dict[str, tuple[str, ...]] = field(default_factory=dict)


def deny_texts(simple: SimpleCommand, env: Seen) -> list[str]:
    """Every text a deny or ask rule may match."""
    found: list[str] = []
    for form in _deny_forms(simple, env):
        for candidate in (form, (os.path.basename(form[0]), *form[1:])):
            joined = text(candidate)
            if joined not in found:
                found.append(joined)
    return found


def deny_shapes(simple: SimpleCommand, env: Seen) -> list[Shape]:
    return [shape(form) for form in _deny_forms(simple, env)]


def computed_name(simple: SimpleCommand, env: Seen) -> bool:
    """Whether bash computes the name of the command that runs (`${X}m`, `/bin/r?`,
    `$(echo rm)`) from something not known on the line, so no rule can see what runs."""
    if not simple.argv:
        return False
    expanded = _expand(simple.argv, env.variables)
    return not expanded or (expanded[0] != "[" and _dynamic(expanded))


def _deny_forms(simple: SimpleCommand, env: Seen) -> list[tuple[str, ...]]:
    forms: list[tuple[str, ...]] = []
    for form in simple.forms or (simple.argv,):
        if not form:
            continue
        for candidate in (form, _expand(form, env.variables)):
            rebound = env.names.get(candidate[0]) if candidate else None
            for found in (candidate, (*rebound, *candidate[1:]) if rebound else ()):
                if found and found not in forms:
                    forms.append(found)
    return forms


def remember_assignments(simple: SimpleCommand, env: Seen) -> None:
    """Record `R=-rf` (alone, or after `export`/`declare`/`local`) and the names `hash -p` and
    `alias` rebind, for the commands after it."""
    words = list(simple.words)
    if simple.argv[:1] == ("alias",):
        for word in simple.argv[1:]:
            name, sep, value = word.partition("=")
            if sep and spec_words(value):
                env.names[name] = tuple(spec_words(value))
        return
    if simple.argv[:2] == ("hash", "-p") and len(simple.argv) > 3:
        for name in simple.argv[3:]:
            env.names[name] = (simple.argv[2],)
        return
    if words and words[0] in ("export", "declare", "local", "readonly", "typeset"):
        words = words[1:]
    elif simple.argv:
        return
    for word in words:
        name, sep, value = word.partition("=")
        if sep and name.isidentifier():
            env.variables[name] = value


def _dynamic(form: Sequence[str]) -> bool:
    return any(mark in form[0] for mark in DYNAMIC_MARKS)


def _expand(form: Sequence[str], variables: Mapping[str, str]) -> tuple[str, ...]:
    """Known variables substituted (a whole word splits, as unquoted in bash; `${X}m` joins)
    and brace lists expanded, as bash would."""
    out: list[str] = []
    for word in form:
        match = _VARIABLE.match(word)
        if match is not None and (match.group(1) or match.group(2)) in variables:
            out.extend(variables[match.group(1) or match.group(2)].split())
            continue
        known = _REFERENCE.sub(
            lambda m: variables.get(m.group(1) or m.group(2), m.group(0)), word
        )  # fmt: skip
        out.extend(_braces(known))
    return tuple(out)


def _braces(word: str, depth: int = 0) -> list[str]:
    match = _BRACES.match(word)
    if match is None or depth > 4:
        return [word]
    head, body, tail = match.groups()
    expanded: list[str] = []
    for option in body.split(","):
        expanded.extend(_braces(head + option + tail, depth + 1))
    return expanded


def shape(form: Sequence[str]) -> Shape:
    """The normalised shape of one argv (or of a rule's words)."""
    name = os.path.basename(form[0])
    rest = list(form[1:])
    flags: set[str] = set()
    positionals: list[str] = []
    table = name
    if name == "git":
        rest = _skip_git_globals(rest)
        if rest:
            table = f"git {rest[0]}"
            positionals.append(rest.pop(0))
    options_done = False
    while rest:
        word = rest.pop(0)
        if options_done or not word.startswith("-") or word == "-":
            if table == "git push" and word.startswith("+") and len(word) > 1:
                flags.add("-f")  # `+main` force-pushes that ref
                word = word[1:]
            positionals.append(word)
        elif word == "--":
            options_done = True
        elif word.startswith("--"):
            flags.add(_long(table, word.split("=", 1)[0][2:]))
        else:
            _short(table, word, flags, rest)
    return Shape(name, frozenset(flags), tuple(positionals))


def _skip_git_globals(rest: list[str]) -> list[str]:
    while rest and rest[0].startswith("-"):
        option = rest.pop(0)
        if (option in _VALUED_SHORT["git"] or option in _GIT_VALUED_LONG) and rest:
            rest.pop(0)
    return rest


def _long(table: str, key: str) -> str:
    known = _LONG.get(table)
    if known is None:
        return f"--{key}"
    if key not in known:
        matches = [k for k in known if k.startswith(key)]
        if len(matches) != 1:
            return f"--{key}"
        key = matches[0]
    return known[key] or f"--{key}"


def _short(table: str, word: str, flags: set[str], rest: list[str]) -> None:
    if not word[1:].isalpha():
        flags.add(word)  # -10, -o=x: kept whole
        return
    valued = _VALUED_SHORT.get(table, frozenset())
    aliases = _SHORT_ALIASES.get(table, {})
    for index, letter in enumerate(word[1:], 1):
        flag = aliases.get(f"-{letter}", f"-{letter}")
        flags.add(flag)
        if flag in valued:
            if index == len(word) - 1 and rest:
                rest.pop(0)  # the value is the next word
            return


@dataclass(frozen=True, slots=True)
class ShapePattern:
    """A rule's specifier as a shape: name glob, the flags it requires, positional globs (a
    lone `*` spans any number of words) and whether more words may follow."""

    name: str
    flags: frozenset[str]
    positionals: tuple[str, ...]
    prefix: bool

    @classmethod
    def of(cls, specifier: str) -> ShapePattern | None:
        cut = specifier.endswith((":*", " *"))
        body = specifier[:-2] if cut else specifier
        prefix = specifier.endswith("*")  # `dd * of=*`: more words may follow
        words = spec_words(body)
        if not words or words[0].startswith("*"):
            return None
        parsed = shape(words)
        return cls(parsed.name, parsed.flags, parsed.positionals, prefix)

    def matches(self, candidate: Shape) -> bool:
        if not fnmatchcase(candidate.name, self.name) or not self.flags <= candidate.flags:
            return False
        return _sequence(self.positionals, candidate.positionals, self.prefix)


def _sequence(patterns: Sequence[str], words: Sequence[str], prefix: bool) -> bool:
    """Whether the positional globs match the words (a lone `*` spans any number of them), in
    time linear in patterns x words, whatever the number of `*`."""
    reachable = {0}  # how many words the patterns so far can have consumed
    for pattern in patterns:
        if pattern == "*":
            reachable = set(range(min(reachable), len(words) + 1)) if reachable else set()
        else:
            reachable = {
                at + 1 for at in reachable if at < len(words) and fnmatchcase(words[at], pattern)
            }
        if not reachable:
            return False
    return prefix or len(words) in reachable


def spec_words(specifier: str) -> list[str]:
    """A rule's command words with quotes and escapes removed the way bash removes them from
    the command, so `Bash(echo "exit=$?")` meets `echo "exit=$?"`."""
    try:
        return shlex.split(specifier)
    except ValueError:  # an unbalanced quote: the words as typed
        return specifier.split()


def changes_directory(simple: SimpleCommand) -> bool:
    """Whether `simple` may move the shell to another directory (`cd`, `pushd`, `popd`, a
    sourced script, also behind `builtin`, `command` or a wrapper, or a command bash names at
    run time), so a relative path later on the line is not where it was resolved."""
    forms = (*simple.forms, simple.argv)
    return any(_DIRECTORY_CHANGERS.intersection(form[:2]) for form in forms) or any(
        form and any(mark in form[0] for mark in DYNAMIC_MARKS) for form in forms
    )
