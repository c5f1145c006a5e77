"""Hook scripts pinned by content: a script that changed after its hooks were loaded never runs.

A hook command names scripts (`$CLAUDE_PROJECT_DIR/.claude/hooks/guard.sh`, `python3
tools/check.py`); the host runs them outside any sandbox, with its whole environment. The
sandbox keeps them read-only, and this is the second line: when the hooks are loaded, every
file a command names is hashed (SHA-256); before the hook runs, each is hashed again, and a
script that changed (or disappeared) blocks the call with the reason: the hook fails closed,
whatever `failClosed` says, until the host loads its hooks again (a restart, or an edit of the
hooks file).
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex

Pins = tuple[tuple[str, str], ...]
"""(real path, SHA-256 of its content) per script a command names."""
_VARIABLE = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?")
_CHUNK = 1 << 20


def script_paths(command: str, cwd: str, plugin_root: str | None = None) -> tuple[str, ...]:
    """The existing files `command` names (as the real paths they resolve to), with
    `$CLAUDE_PROJECT_DIR`, `$TOOLWEAVE_PROJECT_DIR` and `$CLAUDE_PLUGIN_ROOT` expanded and
    relative names taken from `cwd`."""
    values = {"CLAUDE_PROJECT_DIR": cwd, "TOOLWEAVE_PROJECT_DIR": cwd}
    if plugin_root is not None:
        values["CLAUDE_PLUGIN_ROOT"] = plugin_root
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        tokens = list(lexer)
    except ValueError:  # unbalanced quotes: the shell refuses it too; pin what can be seen
        tokens = command.split()
    found: list[str] = []
    for token in tokens:
        if "=" in token and not token.startswith(("/", ".", "$")):
            token = token.split("=", 1)[1]  # an assignment names its value
        expanded = _VARIABLE.sub(lambda m: values.get(m[1], m[0]), token)
        path = os.path.join(cwd, os.path.expanduser(expanded))
        if os.path.isfile(path):
            found.append(os.path.realpath(path))
    return tuple(dict.fromkeys(found))


def pin(paths: tuple[str, ...]) -> Pins:
    """Each path with the hash of what it holds now ('' when it cannot be read)."""
    return tuple((path, _digest(path)) for path in paths)


def changed(pins: Pins) -> str | None:
    """The first pinned script whose content is no longer what was loaded, or None."""
    for path, digest in pins:
        if _digest(path) != digest:
            return path
    return None


def _digest(path: str) -> str:
    sha = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            while chunk := handle.read(_CHUNK):
                sha.update(chunk)
    except OSError:
        return ""
    return sha.hexdigest()
