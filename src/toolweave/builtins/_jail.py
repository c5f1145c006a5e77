"""The filesystem jail: every path a model names is opened from the jail's own descriptor.

A path is never checked by name and then opened by name (a symlink swapped in between would
lead out). Instead it is opened component by component from a descriptor on the jail's root:
each directory with `O_DIRECTORY | O_NOFOLLOW` relative to the one before it, each symlink read
(`readlinkat`) and resolved by the walk itself, `..` climbing the chain of open directories and
refused above the root, absolute link targets accepted only inside the root. Where the kernel
has `openat2` (Linux 5.6+), a file is opened in one call with `RESOLVE_BENEATH`, which the
kernel enforces atomically; what it refuses (an absolute link) falls back to the walk.

Null bytes and `~` are refused first (the first truncates C strings, the second means
"someone's home", never the jail). Files are opened non-blocking and anything but a regular file
(a FIFO, a device, a socket) is refused before a byte is read. Writes go to a temporary file
created in the already open parent directory, then renamed over the target, so a write never
follows a symlink and a crash leaves the old file whole. `canonical` answers the path the tools
will open, for permission rules to match on.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import stat
import sys
from collections.abc import Iterator
from typing import Any

from toolweave.errors import ConfigError
from toolweave.storage.files import NO_FOLLOW, atomic_write
from toolweave.tools.errors import InvalidArguments, PermissionDenied

_DIRECTORY, _NONBLOCK = getattr(os, "O_DIRECTORY", 0), getattr(os, "O_NONBLOCK", 0)
_DIR_FLAGS = os.O_RDONLY | _DIRECTORY | NO_FOLLOW | getattr(os, "O_CLOEXEC", 0)
_FILE_FLAGS = os.O_RDONLY | _NONBLOCK | getattr(os, "O_CLOEXEC", 0)
_AT_DIR = {os.open, os.stat, os.readlink} <= os.supports_dir_fd
READ_FLAGS = _FILE_FLAGS | NO_FOLLOW
"""How a file is opened for reading once its folder is open: non-blocking, never via a link."""
MAX_LINK_HOPS = 40
"""Symlinks one path may pass through (the kernel's own limit) before it is refused."""
_RESOLVE_NO_MAGICLINKS, _RESOLVE_BENEATH = 0x02, 0x08
_SYS_OPENAT2 = 437  # the same number on every Linux architecture


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]


def _load_syscall() -> Any:
    try:
        return ctypes.CDLL(None, use_errno=True).syscall
    except (OSError, AttributeError):
        return None


_syscall = _load_syscall() if sys.platform.startswith("linux") else None
openat2_works: bool | None = None if _syscall is not None else False
"""Whether the kernel has openat2: None until the first call finds out."""


def _openat2(dir_fd: int, path: str, flags: int) -> int | None:
    """A descriptor for `path` beneath `dir_fd`, or None where openat2 does not exist, or
    refuses a path the walk may still resolve (an absolute symlink inside the jail), or finds
    nothing there."""
    global openat2_works
    if openat2_works is False or _syscall is None:
        return None
    how = _OpenHow(flags, 0, _RESOLVE_BENEATH | _RESOLVE_NO_MAGICLINKS)
    fd = _syscall(_SYS_OPENAT2, dir_fd, os.fsencode(path), ctypes.byref(how), ctypes.sizeof(how))
    if fd >= 0:
        openat2_works = True
        return int(fd)
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EPERM) and openat2_works is None:
        openat2_works = False  # no such syscall, or a seccomp filter forbids it
        return None
    if code in (errno.EXDEV, errno.ELOOP, errno.EAGAIN, errno.ENOENT):
        return None  # the walk resolves it, or names what is missing relative to the jail
    raise OSError(code, os.strerror(code), path)


class Jail:
    """A directory that every path is opened beneath."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        given = os.path.abspath(os.fspath(root))
        real = os.path.realpath(given)
        if not os.path.isdir(real):
            raise ConfigError(f"filesystem root {os.fspath(root)!r} is not an existing directory")
        if not _AT_DIR:
            raise ConfigError(
                "the filesystem jail opens paths relative to folder descriptors (dir_fd), which "
                "this platform lacks; use Linux, macOS or a BSD"
            )
        self.root, self._given = real, given
        self._fd = os.open(real, _DIR_FLAGS)

    def __del__(self) -> None:
        with contextlib.suppress(OSError, AttributeError):
            os.close(self._fd)

    def relative(self, path: str) -> str:
        """`path` as written relative to the root ('' for the root): absolute paths must name
        the root or lie under it; `..` is left for the walk to resolve against real folders."""
        if "\x00" in path:
            raise self._refuse(path, "it contains a null byte")
        if path.startswith("~"):
            raise self._refuse(path, "'~' (a home directory) is outside the workspace")
        if not os.path.isabs(path):
            return path
        for base in (self.root, self._given):
            if path == base or path.startswith(base.rstrip("/") + "/"):
                return path[len(base) :].lstrip("/")
        raise self._refuse(path, "it resolves outside the workspace")

    def walk(self, path: str, *, make_folders: bool = False) -> tuple[int, str | None, str]:
        """(descriptor of the parent directory, final name or None for the root, the path
        relative to the root) with every symlink on the way, the last one too, resolved inside
        the jail; `make_folders` creates missing folders on the way, each in the one above it.
        The caller closes the descriptor."""
        pending = [p for p in self.relative(path).split("/") if p not in ("", ".")]
        chain, names, hops = [os.dup(self._fd)], list[str](), 0
        try:
            while pending:
                part = pending.pop(0)
                if part == "..":
                    if not names:
                        raise self._refuse(path, "it resolves outside the workspace")
                    os.close(chain.pop())
                    names.pop()
                    continue
                try:
                    info = os.stat(part, dir_fd=chain[-1], follow_symlinks=False)
                except FileNotFoundError:
                    if pending and make_folders and hops <= MAX_LINK_HOPS:
                        with contextlib.suppress(FileExistsError):
                            os.mkdir(part, 0o755, dir_fd=chain[-1])
                        hops += 1  # bounds a folder that keeps vanishing
                        pending.insert(0, part)
                        continue
                    if pending:
                        raise _missing("/".join([*names, part, *pending])) from None
                    info = None
                if info is not None and stat.S_ISLNK(info.st_mode):
                    hops += 1
                    if hops > MAX_LINK_HOPS:
                        raise self._refuse(path, f"it passes more than {MAX_LINK_HOPS} links")
                    target = os.readlink(part, dir_fd=chain[-1])
                    if os.path.isabs(target):
                        try:
                            target = self.relative(target)
                        except PermissionDenied:
                            raise self._refuse(
                                path, "a link on it points outside the workspace"
                            ) from None
                        while len(chain) > 1:
                            os.close(chain.pop())
                        names.clear()
                    pending[:0] = [p for p in target.split("/") if p not in ("", ".")]
                    continue
                if not pending:
                    return chain.pop(), part, "/".join([*names, part])
                try:
                    chain.append(os.open(part, _DIR_FLAGS, dir_fd=chain[-1]))
                except OSError as exc:
                    if exc.errno == errno.ENOTDIR:
                        raise _not_dir("/".join([*names, part])) from None
                    if exc.errno not in (errno.ELOOP, errno.ENOENT):
                        raise
                    hops += 1  # swapped for a link, or removed, since the stat: look again
                    if hops > MAX_LINK_HOPS:
                        raise self._refuse(path, "it keeps changing while it is opened") from None
                    pending.insert(0, part)
                    continue
                names.append(part)
            return chain.pop(), None, "/".join(names) or "."
        finally:
            for fd in chain:
                os.close(fd)

    def canonical(self, path: str) -> str:
        """The absolute host path the tools open for `path` (links resolved inside the jail)."""
        fd, _, relative = self.walk(path)
        os.close(fd)
        return self.root if relative == "." else os.path.join(self.root, relative)

    def open(self, path: str, *, directory: bool = False) -> tuple[int, str]:
        """A read descriptor on `path` and its path relative to the root; a file must be a
        regular file (opened non-blocking: a FIFO cannot hang the call), a directory one."""
        flags = _FILE_FLAGS | (_DIRECTORY if directory else 0)
        relative = self.relative(path)
        try:
            fd = _openat2(self._fd, relative or ".", flags)
        except FileNotFoundError:
            raise _missing(relative or ".") from None
        except NotADirectoryError:
            raise _not_dir(relative) from None
        if fd is None:
            parent, name, relative = self.walk(path)
            try:
                fd = parent if name is None else self._open_in(parent, name, flags, relative)
            finally:
                if name is not None:
                    os.close(parent)
        else:
            relative = self._relative_of(fd) or relative or "."
        mode = os.fstat(fd).st_mode
        if directory or stat.S_ISREG(mode):
            return fd, relative
        os.close(fd)
        if stat.S_ISDIR(mode):
            raise InvalidArguments(f"{relative!r} is a directory; use list_dir")
        raise self._refuse(relative, f"it is not a regular file ({kind(mode)})")

    def _open_in(self, parent: int, name: str, flags: int, relative: str) -> int:
        try:
            return os.open(name, flags | NO_FOLLOW, dir_fd=parent)
        except FileNotFoundError:
            raise _missing(relative) from None
        except NotADirectoryError:
            raise _not_dir(relative) from None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise self._refuse(relative, "it changed into a link while it was opened") from None
            raise

    def _relative_of(self, fd: int) -> str | None:
        with contextlib.suppress(OSError):
            where = os.readlink(f"/proc/self/fd/{fd}")
            if where == self.root:
                return "."
            if where.startswith(self.root + "/"):
                return where[len(self.root) + 1 :]
        return None

    def parent_for_write(self, path: str, make_folders: bool = False) -> tuple[int, str, str]:
        """(descriptor of the folder the file goes in, its name, its path relative to the
        root); the folder must exist inside the jail, unless `make_folders` creates it."""
        try:
            parent, name, relative = self.walk(path, make_folders=make_folders)
        except InvalidArguments as exc:
            if "no such file" in exc.message:
                why = "its parent directory does not exist; create it first"
                raise self._refuse(path, why) from None
            raise
        if name is None:
            os.close(parent)
            raise self._refuse(path, "the workspace root itself is not a file")
        return parent, name, relative

    def read(self, path: str, limit: int, offset: int = 0) -> tuple[bytes, int, str]:
        """Up to `limit` bytes of the regular file `path` from `offset`, its full size, and its
        path relative to the root."""
        fd, relative = self.open(path)
        try:
            return *read_fd(fd, limit, offset), relative
        finally:
            os.close(fd)

    def write(self, path: str, data: bytes, *, make_folders: bool = False) -> str:
        """Replace `path` with `data` atomically, in the folder the walk opened (a temporary
        sibling renamed over it, never through a link), creating missing folders first when
        `make_folders`; its path relative to the root."""
        parent, name, relative = self.parent_for_write(path, make_folders)
        try:
            atomic_write(name, data, new_mode=0o644, dir_fd=parent)
        finally:
            os.close(parent)
        return relative

    def _refuse(self, path: str, why: str) -> PermissionDenied:
        error = PermissionDenied(
            f"path {path!r} refused: {why}. Use a path relative to the workspace root "
            "(for example 'notes/todo.md').",
            permission="filesystem",
        )
        error.recoverable = True  # the model can pick another path
        return error


def _missing(relative: str) -> InvalidArguments:
    return InvalidArguments(f"no such file: {relative}")


def _not_dir(relative: str) -> InvalidArguments:
    return InvalidArguments(f"{relative!r} is not a directory")


def read_fd(fd: int, limit: int, offset: int = 0) -> tuple[bytes, int]:
    """Up to `limit` bytes of the open file from `offset`, and its full size."""
    size = os.fstat(fd).st_size
    return os.pread(fd, limit, offset), size


def kind(mode: int) -> str:
    """'file', 'dir', 'link' or 'other' for a file mode."""
    if stat.S_ISLNK(mode):
        return "link"
    if stat.S_ISDIR(mode):
        return "dir"
    return "file" if stat.S_ISREG(mode) else "other"


def scan(dir_fd: int) -> Iterator[os.DirEntry[str]]:
    """The entries of an open folder, sorted by name (links not followed)."""
    with os.scandir(dir_fd) as entries:
        yield from sorted(entries, key=lambda e: e.name)
