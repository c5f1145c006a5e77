"""What a sandboxed process may not write, or see, inside the folders it may write.

The sandbox writes the workspace; the host later *executes or loads* some files there, outside
the sandbox: git runs what `.git` names (hooks, `core.fsmonitor`, a `commondir` pointing at
another repository), Claude Code and toolweave load `.claude/` settings and hooks, `.agents/`
skills, `.mcp.json` servers and `toolweave.toml`, and the host runs its hooks files and the
scripts their commands name. So inside every writable folder:

- each name of `PROTECTED_IN_WORKSPACE` is bound read-only; `.git`, `HEAD`, `.claude` and
  `.agents` get an empty read-only placeholder where absent, so they cannot be created (the
  host removes the empty folders after the last call using that folder ends; git would not take
  an empty `.git` for a repository anyway, nor a folder whose `HEAD` is a folder for a bare
  one);
- a `.git` *file* (a worktree or submodule) is bound read-only, and so are the git folder it
  names and that folder's `commondir` where they lie inside a writable folder;
- every extra protected path the host names (its config, hooks files, hook scripts, skill
  roots) and the host's own Python installation (`sys.prefix`) is bound read-only;
- every folder between a writable root and a protected path is bound onto itself: a mount
  point cannot be renamed, so `mv scripts old && mkdir scripts` cannot swap in a new file;
- a protected name that is a symbolic link is refused (the link itself could be replaced);
- hidden paths (the host's `data_dir`, its config) are covered by an empty read-only folder
  (`/dev/null` for a file), so the sandbox cannot read another user's memory or the tokens.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Sequence

from toolweave.tools.errors import SandboxUnavailable

PROTECTED_IN_WORKSPACE = (
    ".git",
    "HEAD",
    ".claude",
    ".agents",
    ".mcp.json",
    "mcp.json",
    "toolweave.toml",
)
"""Names in every writable folder kept read-only: git runs what `.git` names (and what the
folder itself names once it holds a `HEAD`: git takes a folder with `HEAD`, `objects/` and
`refs/` for a bare repository and reads its `config`, `core.pager` included), and the host
loads settings, hooks, skills, MCP servers and its config from the others."""
PLACEHOLDER_DIRS = (".git", "HEAD", ".claude", ".agents")
"""Of those, the folders that get an empty read-only placeholder where absent."""
_GIT_FILE_MAX_BYTES = 4096


def inside(path: str, root: str) -> bool:
    """Whether `path` is `root` or below it (both absolute, real paths)."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def host_runtime() -> tuple[str, ...]:
    """The host's own Python installation (a virtual environment in the workspace, say): the
    host imports and runs it at its next start, so a writable folder never exposes it."""
    return tuple(dict.fromkeys(real_paths((sys.prefix, sys.exec_prefix))))


def real_paths(paths: Iterable[str]) -> list[str]:
    """`paths` with every link resolved, so writable, protected and hidden paths compare."""
    return [os.path.realpath(p) for p in paths]


def absent_placeholders(writable: Sequence[str]) -> list[str]:
    """The paths in the `writable` folders that get an empty read-only placeholder now."""
    paths = (os.path.join(root, name) for root in writable for name in PLACEHOLDER_DIRS)
    return [path for path in paths if not os.path.lexists(path)]


def protection_args(
    writable: Sequence[str], protected: Iterable[str], hidden: Iterable[str], tool: str
) -> list[str]:
    """bwrap arguments binding `writable` read-write with everything above kept from it."""
    hidden = [p for p in hidden if os.path.lexists(p)]
    first = [p for p in hidden if any(inside(w, p) for w in writable)]
    args: list[str] = []
    for path in first:  # before the writable binds, so a workspace inside still shows
        args += _cover(path)
    for root in writable:
        args += ["--bind", root, root]
    for path in hidden:  # elsewhere on the read-only host
        if not any(inside(path, w) or inside(w, path) for w in writable):
            args += _cover(path)
    candidates = [*protected, *(p for p in hidden if p not in first), *host_runtime()]
    for root in writable:
        candidates += [os.path.join(root, name) for name in PROTECTED_IN_WORKSPACE]
        candidates += _git_file_targets(root)
    pinned = _outermost(c for c in candidates if any(inside(c, w) for w in writable))
    seen: set[str] = set()
    for path in pinned:  # the folders above first, shallowest first, then the pins
        root = max((w for w in writable if inside(path, w)), key=len)
        for folder in _between(root, path):
            if folder not in seen and not any(inside(folder, p) for p in pinned):
                seen.add(folder)
                args += ["--bind", folder, folder]
    for path in pinned:
        args += _pin(path, hidden, writable, tool)
    return args + [a for p in hidden if os.path.isdir(p) for a in ("--remount-ro", p)]


def _outermost(paths: Iterable[str]) -> list[str]:
    """The distinct paths not below another one, shallowest first."""
    kept: list[str] = []
    for path in sorted(set(paths), key=lambda p: (p.count(os.sep), p)):
        if not any(inside(path, k) for k in kept):
            kept.append(path)
    return kept


def _between(root: str, path: str) -> list[str]:
    """The folders strictly between `root` and `path`, outermost first."""
    parts = os.path.relpath(path, root).split(os.sep)[:-1]
    found: list[str] = []
    current = root
    for part in parts:
        current = os.path.join(current, part)
        if os.path.islink(current) or not os.path.isdir(current):
            break
        found.append(current)
    return found


def _pin(path: str, hidden: Sequence[str], writable: Sequence[str], tool: str) -> list[str]:
    if path in hidden:
        return _cover(path)
    name = os.path.basename(path)
    if os.path.islink(path):
        where = next(os.path.relpath(path, w) for w in writable if inside(path, w))
        raise SandboxUnavailable(
            f"{tool} refused: {where} in the writable folder is a symbolic link, which a "
            "sandboxed command could replace and the host would then load; replace the link "
            "with the file or folder it points to",
            tool=tool,
        )
    if os.path.lexists(path):
        return ["--ro-bind", path, path]
    if name in PLACEHOLDER_DIRS and os.path.dirname(path) in writable:
        return ["--tmpfs", path, "--remount-ro", path]  # empty and read-only: cannot be made
    return []


def _cover(path: str) -> list[str]:
    """An empty read-only view of `path`: a folder (remounted read-only last) or /dev/null."""
    if os.path.isdir(path):
        return ["--tmpfs", path]
    return ["--ro-bind", "/dev/null", path]


def _git_file_targets(root: str) -> list[str]:
    """The git folder a `.git` file in `root` names, and that folder's `commondir`."""
    marker = os.path.join(root, ".git")
    if os.path.islink(marker) or not os.path.isfile(marker):
        return []
    gitdir = _pointer(marker, "gitdir:", root)
    if gitdir is None:
        return []
    found = [gitdir]
    common = _pointer(os.path.join(gitdir, "commondir"), "", gitdir)
    if common is not None:
        found.append(common)
    return found


def _pointer(file: str, prefix: str, base: str) -> str | None:
    """The real path a git pointer file names (`gitdir: X`, or a bare path), resolved from
    `base`; None when it has none."""
    try:
        with open(file, "rb") as handle:
            text = handle.read(_GIT_FILE_MAX_BYTES).decode("utf-8", "replace").strip()
    except OSError:
        return None
    if not text.startswith(prefix):
        return None
    target = text[len(prefix) :].strip()
    return os.path.realpath(os.path.join(base, target)) if target else None
