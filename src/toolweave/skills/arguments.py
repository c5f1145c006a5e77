"""Slash-command argument expansion, shared by skills and custom commands.

Claude Code merged custom commands into skills, so `/name args` expands the same way wherever
the template comes from: `$ARGUMENTS` (and its short form `$args`) is the raw argument string as
typed; `$ARGUMENTS[N]` and `$N` are the N-th (0-based) shell-style word, quotes stripped; a
positional past the end stays as written. A template that never places the whole string (no
`$ARGUMENTS`) gets it appended as an `ARGUMENTS:` line when it uses no placeholder or leaves one
unfilled (a command written for the older 1-based `$1`, run with one argument), so what the
user typed always reaches the model.
"""

from __future__ import annotations

import re
import shlex

_PLACEHOLDER = re.compile(r"\$ARGUMENTS\[(\d+)\]|\$ARGUMENTS\b|\$args\b|\$(\d+)\b")


def split_arguments(arguments: str) -> list[str]:
    """Shell-style words of an argument string (an unbalanced quote falls back to spaces)."""
    try:
        return shlex.split(arguments)
    except ValueError:
        return arguments.split()


def expand_arguments(template: str, arguments: str) -> str:
    """`template` with its argument placeholders replaced by `arguments`."""
    words: list[str] | None = None
    used = whole = unfilled = False

    def replace(match: re.Match[str]) -> str:
        nonlocal words, used, whole, unfilled
        used = True
        index = match.group(1) or match.group(2)
        if index is None:
            whole = True
            return arguments
        if words is None:
            words = split_arguments(arguments)
        position = int(index)
        if position < len(words):
            return words[position]
        unfilled = True
        return match.group(0)

    expanded = _PLACEHOLDER.sub(replace, template)
    if (not used or (unfilled and not whole)) and arguments.strip():
        expanded = f"{expanded.rstrip()}\n\nARGUMENTS: {arguments}"
    return expanded


def parse_command(text: str) -> tuple[str, str] | None:
    """`("name", "args")` for a `/name args` line, None for anything else."""
    match = re.match(r"^/([A-Za-z0-9][\w.:-]*)(?:\s+(.*))?$", text.strip(), flags=re.DOTALL)
    if match is None:
        return None
    return match.group(1), (match.group(2) or "").strip()
