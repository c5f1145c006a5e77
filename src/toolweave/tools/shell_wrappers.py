"""Commands that run their arguments as a command (`sudo`, `xargs`, `timeout`, ...), unwrapped.

A rule must see `sudo shutdown -h now` both as written (so `Bash(sudo *)` denies it) and as the
command it runs (`shutdown -h now`, so `Bash(shutdown *)` denies it too). `unwrap` peels one
layer at a time: it knows each wrapper's options that take a value (so `xargs
--process-slot-var ls touch` runs `touch`, not `ls touch`) and its leading positionals (the
duration of `timeout`, the mask of `taskset`, the lock file of `flock`). Wrappers that run a
string through a shell (`su -c`, `script -c`, `flock -c`) hand back that string to be parsed.

A layer is *neutral* when peeling it changes nothing an allow rule vouches for (`timeout 5 git
status` is `git status` with a deadline); `sudo`, `env`, `xargs`, `setsid` and the like are not,
so an allow rule for the inner command never covers them.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass

from toolweave.tools.errors import WrapperError


@dataclass(frozen=True, slots=True)
class _Wrapper:
    valued: frozenset[str] = frozenset()
    """Options that take a separate value (`-u root`)."""
    positionals: int = 0
    """Leading arguments after the options that are not the command (`timeout 5 cmd`)."""
    script: frozenset[str] = frozenset()
    """Options whose value is a shell command string (`su -c 'cmd'`)."""
    neutral: bool = False
    bare_is_shell: bool = False
    """With no command left, the wrapper starts an interactive shell reading stdin."""


def _set(text: str) -> frozenset[str]:
    return frozenset(text.split())


WRAPPERS: dict[str, _Wrapper] = {
    "env": _Wrapper(_set("-u --unset -C --chdir -S --split-string")),
    "timeout": _Wrapper(_set("-s --signal -k --kill-after"), 1, neutral=True),
    "nice": _Wrapper(_set("-n --adjustment"), neutral=True),
    "nohup": _Wrapper(neutral=True),
    "time": _Wrapper(_set("-f --format -o --output"), neutral=True),
    "command": _Wrapper(neutral=True),
    "builtin": _Wrapper(neutral=True),
    "exec": _Wrapper(_set("-a")),
    "stdbuf": _Wrapper(_set("-i -o -e --input --output --error"), neutral=True),
    "ionice": _Wrapper(_set("-c -n -p -P -u --class --classdata --pid --pgid --uid"),
                       neutral=True),
    "chrt": _Wrapper(_set("-T -P -D --sched-runtime --sched-period --sched-deadline"), 1,
                     neutral=True),
    "taskset": _Wrapper(_set("--cpu-list"), 1, neutral=True),
    "setsid": _Wrapper(),
    "flock": _Wrapper(_set("-w --wait --timeout -E --conflict-exit-code"), 1, _set("-c --command")),
    "script": _Wrapper(_set("-E --echo -I --log-in -O --log-out -B --log-io -T --log-timing "
                            "-m --logging-format -o --output-limit"), 1, _set("-c --command"),
                       bare_is_shell=True),
    "su": _Wrapper(_set("-g --group -G --supp-group -s --shell -w --whitelist-environment"), 1,
                   _set("-c --command --session-command"), bare_is_shell=True),
    "xargs": _Wrapper(_set(
        "-I -n -P -L -s -d -E -a --max-args --max-procs --max-lines --max-chars --delimiter "
        "--eof --arg-file --replace --process-slot-var"
    )),
    "sudo": _Wrapper(_set(
        "-u -g -C -D -h -p -r -t -T -U --user --group --close-from --chdir --host --prompt "
        "--role --type --command-timeout --other-user"
    )),
    "doas": _Wrapper(_set("-u -C")),
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Peeled:
    """One wrapper layer removed: the `inner` argv, a shell `script` the wrapper runs instead
    (`su -c '...'`), whether the layer was `neutral`, and `stdin_shell` when the wrapper starts
    a shell that reads its commands from stdin (`su`, `script` with no command)."""

    inner: list[str]
    script: str | None = None
    neutral: bool = False
    stdin_shell: bool = False


def is_assignment(word: str) -> bool:
    name, sep, _ = word.partition("=")
    return bool(sep) and name.isidentifier()


def peel(argv: list[str]) -> Peeled | None:
    """Remove the outer wrapper of `argv`, or None when `argv[0]` is not a wrapper."""
    name = os.path.basename(argv[0])
    spec = WRAPPERS.get(name)
    if spec is None:
        return None
    rest = argv[1:]
    if name == "command" and rest[:1] in (["-v"], ["-V"]):
        return None  # `command -v x` only looks x up
    script: str | None = None
    split: str | None = None
    shell = False
    while rest and rest[0].startswith(("-", "+")) and rest[0] not in ("-", "+"):
        option = rest.pop(0)
        if option == "--":
            break
        key, has_value, inline = option.partition("=")
        if name == "nice" and option[1:].isdigit():  # nice -10
            continue
        cluster = _cluster(option, spec)
        if cluster is not None:  # env -iS'rm -rf V' is env -i -S 'rm -rf V'
            rest[:0] = cluster
            continue
        if key in spec.script or key in spec.valued:
            value = inline if has_value else None
            if value is None:
                if not rest:
                    raise WrapperError(f"`{name} {option}` is missing its value")
                value = rest.pop(0)
            if key in spec.script:
                script = value
            elif key in ("-S", "--split-string"):
                split = value
        elif name == "su" and option == "-":
            continue
        elif name == "sudo" and key in ("-s", "-i", "--shell", "--login"):
            shell = True
    if name == "env":
        if rest[:1] == ["-"]:  # `env - cmd` is `env -i cmd`
            rest.pop(0)
        while rest and is_assignment(rest[0]):
            rest.pop(0)
    if split is not None:  # env -S "rm -rf /" runs the split string
        rest = shlex.split(split) + rest
    inner = rest[spec.positionals :]
    if script is None and inner[:1] and inner[0] in spec.script:  # flock FILE -c 'cmd'
        if len(inner) < 2:
            raise WrapperError(f"`{name} {inner[0]}` is missing its command")
        script = inner[1]
    if script is not None:
        return Peeled([], script=script, neutral=False)
    if name == "su":
        inner = []  # `su user args` passes args to the user's shell: only -c runs a command
    if name == "xargs" and not inner:
        inner = ["echo"]  # xargs runs echo by default
    if not inner and (spec.bare_is_shell or shell):
        return Peeled([], neutral=False, stdin_shell=True)
    return Peeled(inner, neutral=spec.neutral)


def _cluster(option: str, spec: _Wrapper) -> list[str] | None:
    """A cluster of short options split as getopt reads it (`-lc` is `-l -c`, `-iSrm -rf` is
    `-i -S 'rm -rf'`, `-ufoo` is `-u foo`): each letter a flag until one that takes a value,
    which takes the rest of the word. None when `option` is not a cluster."""
    if option.startswith("--") or len(option) < 3 or "=" in option[:3]:
        return None
    split: list[str] = []
    for index, letter in enumerate(option[1:], 1):
        flag = f"-{letter}"
        split.append(flag)
        if flag in spec.valued or flag in spec.script:
            tail = option[index + 1 :]
            return split + ([tail] if tail else [])
    return split
