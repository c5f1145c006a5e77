"""The filesystem jail: every path a model names is resolved and checked before it is touched.

A path is refused unless, with every symlink followed (`realpath`), it is the root or lies under
`root + sep`: so `..`, absolute paths elsewhere, sibling prefixes (`/data/root2` next to
`/data/root`), links pointing out and links in a parent directory all fail the same single test.
Null bytes and `~` are refused before resolution (the first truncates C strings, the second
means "someone's home", never the jail). Writes go to a temporary file in the already checked
parent directory, opened relative to that directory's descriptor, then renamed over the target,
so a write never follows a symlink and a crash leaves the old file whole.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from toolweave.errors import ConfigError
from toolweave.tools.errors import PermissionDenied

_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


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
    fd = os.open(real, os.O_RDONLY | _NOFOLLOW)
    with os.fdopen(fd, "rb") as file:
        size = os.fstat(file.fileno()).st_size
        file.seek(offset)
        return file.read(limit), size


def write_atomic(real: str, data: bytes) -> None:
    """Write `data` to `real` via a temporary sibling and a rename, relative to the parent's
    descriptor, never through an existing symlink; an existing file keeps its mode."""
    parent, name = os.path.split(real)
    dir_fd = os.open(parent, _DIR_FLAGS)
    try:
        mode = 0o644
        with contextlib.suppress(FileNotFoundError):
            info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            if stat.S_ISDIR(info.st_mode):
                raise IsADirectoryError(f"{name!r} is a directory")
            mode = stat.S_IMODE(info.st_mode)
        temp = f".{name}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, mode, dir_fd=dir_fd)
        try:
            with os.fdopen(fd, "wb") as file:
                file.write(data)
                file.flush()
                os.fsync(file.fileno())
            os.replace(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp, dir_fd=dir_fd)
            raise
    finally:
        os.close(dir_fd)


def describe(path: Path) -> str:
    """'file', 'dir', 'link' or 'other' for a directory entry, without following links."""
    mode = path.lstat().st_mode
    if stat.S_ISLNK(mode):
        return "link"
    if stat.S_ISDIR(mode):
        return "dir"
    return "file" if stat.S_ISREG(mode) else "other"
