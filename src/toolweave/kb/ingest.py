"""Folders and files into a knowledge base, resumably, and kept in step with the disk.

`ingest_paths` walks the given files and folders (supported suffixes, hidden entries and
links skipped, sorted so runs are reproducible; each file read through descriptors opened
beneath its folder, never through a link) and adds each file in its own write: a crash leaves
every file either fully in or as it was, and running again skips unchanged files by content
hash, so an interrupted ingest resumes. With `prune=True` documents whose source file under
those paths has gone are removed (what the host's watcher does). A file that cannot be
converted is reported and skipped, never fatal for the rest. `watch_paths` re-runs the sync
after each batch of changes (watchfiles, from the `kb` extra).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import stat
import tempfile
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from toolweave.kb.convert import SUPPORTED_SUFFIXES
from toolweave.kb.errors import DocumentError
from toolweave.kb.knowledge_base import KnowledgeBase
from toolweave.kb.results import AddResult, ProgressCallback

logger = logging.getLogger("toolweave.kb")
_COPY_CHUNK = 1 << 20

FileCallback = Callable[[Path, "AddResult | DocumentError"], None]
"""Called after each file with its result, or the error that skipped it."""


@dataclass(slots=True)
class IngestSummary:
    added: list[AddResult] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    removed: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.removed) or any(r.status in ("added", "replaced") for r in self.added)


def _resolved(paths: Iterable[str | Path]) -> list[Path]:
    return [Path(p).expanduser().resolve() for p in paths]


def collect_files(paths: Iterable[str | Path]) -> list[Path]:
    """The supported files at `paths` (folders searched recursively), resolved and sorted.

    A folder is walked by descriptor (`os.fwalk`) and never through a link: a symbolic link
    below it (to a file or a folder, inside or out) is skipped, as is anything not a regular
    file, so a link planted in a watched folder cannot pull a host file in."""
    found: set[Path] = set()
    for raw in paths:
        path = Path(raw).expanduser().resolve()
        if path.is_file():
            found.add(path)
        elif path.is_dir():
            found.update(_walk(path))
        elif path.exists():
            raise DocumentError(
                f"{path} is neither a file nor a folder (a device, pipe or socket); pass "
                "documents or folders of them"
            )
        else:
            raise DocumentError(f"{path}: no such file or folder; check the path")
    return sorted(found)


def _walk(root: Path) -> Iterator[Path]:
    """The supported regular files below `root`, hidden entries and links skipped."""
    for folder, dirnames, filenames, folder_fd in os.fwalk(root, follow_symlinks=False):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for name in filenames:
            if name.startswith(".") or Path(name).suffix.lower() not in SUPPORTED_SUFFIXES:
                continue
            with contextlib.suppress(OSError):
                if stat.S_ISREG(os.stat(name, dir_fd=folder_fd, follow_symlinks=False).st_mode):
                    yield Path(folder) / name


def _private_copy(file: Path, roots: Sequence[Path], max_bytes: int, folder: Path) -> Path:
    """`file` as read through descriptors opened beneath the folder root it lies under (each
    step `O_NOFOLLOW`, as the filesystem jail does), copied into the private `folder` under the
    same name: what is converted is the file the walk found, even if a folder above it was
    swapped for a link since. A file named directly (under no folder root) is used as is."""
    under = [r for r in roots if r.is_dir() and file.is_relative_to(r)]
    if not under:
        return file
    root = max(under, key=lambda r: len(r.parts))
    with os.fdopen(_open_beneath(root, file.relative_to(root).parts), "rb") as source:
        size = os.fstat(source.fileno()).st_size
        if size > max_bytes:  # refused before it is copied, as convert_file refuses it
            raise DocumentError(
                f"{file}: refused: {size} bytes, over max_file_bytes ({max_bytes}); split the "
                "file or raise max_file_bytes"
            )
        copy = folder / file.name
        with copy.open("xb") as target:
            shutil.copyfileobj(source, target, _COPY_CHUNK)
    return copy


def _open_beneath(root: Path, parts: Sequence[str]) -> int:
    """A read descriptor on the regular file `parts` below `root`, no step followed through a
    link (`DocumentError` otherwise)."""
    where = Path(*parts)
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for part in parts[:-1]:
            inner = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = inner
        found = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=fd)
    except OSError as exc:
        raise DocumentError(
            f"{where}: changed while it was read (a link or a non-folder on the way: "
            f"{exc.strerror}); skipped"
        ) from None
    finally:
        os.close(fd)
    if not stat.S_ISREG(os.fstat(found).st_mode):
        os.close(found)
        raise DocumentError(f"{where}: not a regular file any more; skipped")
    return found


async def ingest_paths(
    kb: KnowledgeBase,
    paths: Sequence[str | Path],
    *,
    prune: bool = False,
    on_file: FileCallback | None = None,
    on_embed: ProgressCallback | None = None,
) -> IngestSummary:
    """Add every supported file under `paths`; see the module docstring."""
    files = await asyncio.to_thread(collect_files, paths)
    roots = await asyncio.to_thread(_resolved, paths)
    summary = IngestSummary()
    for file in files:
        try:
            result = await _add_file(kb, file, roots, on_embed)
        except DocumentError as exc:
            summary.failed[str(file)] = exc.message
            if on_file is not None:
                on_file(file, exc)  # the caller reports it: said once, not twice
            else:
                logger.warning("skipped: %s", exc.message)
            continue
        summary.added.append(result)
        if on_file is not None:
            on_file(file, result)
    if prune:
        present = {str(f) for f in files}
        for doc in await kb.documents():
            source = doc.source
            if source is None or source in present:
                continue
            if any(Path(source).is_relative_to(root) for root in roots):
                await kb.remove(doc.doc_id)
                summary.removed.append(doc.doc_id)
    return summary


async def _add_file(
    kb: KnowledgeBase, file: Path, roots: Sequence[Path], on_embed: ProgressCallback | None
) -> AddResult:
    """`kb.add_file` of the private copy of `file`, recorded under `file`'s own path."""
    folder = Path(await asyncio.to_thread(tempfile.mkdtemp, prefix="toolweave-kb-"))
    try:
        limit = kb.conversion.max_file_bytes
        copy = await asyncio.to_thread(_private_copy, file, roots, limit, folder)
        try:
            return await kb.add_file(copy, progress=on_embed, source=file)
        except DocumentError as exc:  # name the file, never the private copy
            raise DocumentError(exc.message.replace(str(copy), str(file))) from None
    finally:
        await asyncio.to_thread(shutil.rmtree, folder, True)


async def watch_paths(
    kb: KnowledgeBase, paths: Sequence[str | Path], *, debounce_ms: int = 500
) -> AsyncIterator[IngestSummary]:
    """Sync `paths` into `kb` after every batch of file changes; yields each sync's summary."""
    try:
        from watchfiles import awatch
    except ImportError:
        raise DocumentError(
            "watching [kb].paths needs watchfiles; install it with: pip install 'toolweave[kb]'"
        ) from None
    roots = await asyncio.to_thread(_resolved, paths)
    async for _changes in awatch(*roots, debounce=debounce_ms, recursive=True):
        yield await ingest_paths(kb, paths, prune=True)
