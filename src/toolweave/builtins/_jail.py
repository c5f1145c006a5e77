"""The filesystem jail: every path a model names is resolved and checked before it is touched.

A path is refused unless, with every symlink followed (`realpath`), it is the root or lies under
`root + sep`: so `..`, absolute paths elsewhere, sibling prefixes (`/data/root2` next to
`/data/root`), links pointing out and links in a parent directory all fail the same single test.
Null bytes and `~` are refused before resolution (the first truncates C strings, the second
means "someone's home", never the jail). Writes go through `toolweave.storage.files.atomic_write`
with `follow_links=False`: a temporary file in the already checked parent directory, opened
relative to that directory's descriptor, then renamed over the target, so a write never follows
a symlink and a crash leaves the old file whole.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from toolweave.errors import ConfigError
from toolweave.storage.files import NO_FOLLOW
from toolweave.tools.errors import PermissionDenied


class Jail:
    """A directory that resolved paths must stay inside."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        real = os.path.realpath(os.fspath(root))
        if not os.path.isdir(real):
            raise ConfigError(f"filesystem root {os.fspath(root)!r} is not an existing directory")
        self.root = real

    def contains(self, real: str) -> bool:
        return real == self.root or real.startswith(self.root + os.sep)

    def resolve(self, path: str) -> str:
        """The real, absolute path `path` names inside the jail, or PermissionDenied."""
        if "\x00" in path:
            raise self._refuse(path, "it contains a null byte")
        if path.startswith("~"):
            raise self._refuse(path, "'~' (a home directory) is outside the workspace")
        candidate = os.path.join(self.root, path) if path else self.root
        real = os.path.realpath(candidate)
        if not self.contains(real):
            raise self._refuse(path, "it resolves outside the workspace")
        return real

    def resolve_for_write(self, path: str) -> str:
        """Like `resolve`, and the parent directory (where the temporary file goes) must be a
        real directory inside the jail too."""
        real = self.resolve(path)
        if real == self.root:
            raise self._refuse(path, "the workspace root itself is not a file")
        parent = os.path.dirname(real)
        if not os.path.isdir(parent):
            raise self._refuse(path, "its parent directory does not exist; create it first")
        return real

    def display(self, real: str) -> str:
        """A path as the model should see it: relative to the root, '.' for the root."""
        return os.path.relpath(real, self.root)

    def _refuse(self, path: str, why: str) -> PermissionDenied:
        error = PermissionDenied(
            f"path {path!r} refused: {why}. Use a path relative to the workspace root "
            "(for example 'notes/todo.md').",
            permission="filesystem",
        )
        error.recoverable = True  # the model can pick another path
        return error


def read_bytes(real: str, limit: int, offset: int = 0) -> tuple[bytes, int]:
    """Up to `limit` bytes of the file from `offset`, and its full size; the final component is
    not followed (a link swapped in after the check fails instead of being read)."""
    fd = os.open(real, os.O_RDONLY | NO_FOLLOW)
    with os.fdopen(fd, "rb") as file:
        size = os.fstat(file.fileno()).st_size
        file.seek(offset)
        return file.read(limit), size


def describe(path: Path) -> str:
    """'file', 'dir', 'link' or 'other' for a directory entry, without following links."""
    mode = path.lstat().st_mode
    if stat.S_ISLNK(mode):
        return "link"
    if stat.S_ISDIR(mode):
        return "dir"
    return "file" if stat.S_ISREG(mode) else "other"
