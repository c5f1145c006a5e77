"""Folders and files into a knowledge base, resumably, and kept in step with the disk.

`ingest_paths` walks the given files and folders (supported suffixes, hidden entries skipped,
sorted so runs are reproducible) and adds each file in its own write: a crash leaves every file
either fully in or as it was, and running again skips unchanged files by content hash, so an
interrupted ingest resumes. With `prune=True` documents whose source file under those paths has
gone are removed (what the host's watcher does). A file that cannot be converted is reported
and skipped, never fatal for the rest. `watch_paths` re-runs the sync after each batch of
changes (watchfiles, from the `kb` extra).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from toolweave.kb.convert import SUPPORTED_SUFFIXES
from toolweave.kb.errors import DocumentError
from toolweave.kb.knowledge_base import KnowledgeBase
from toolweave.kb.results import AddResult, ProgressCallback

logger = logging.getLogger("toolweave.kb")

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
    """The supported files at `paths` (folders searched recursively), resolved and sorted."""
    found: set[Path] = set()
    for raw in paths:
        path = Path(raw).expanduser().resolve()
        if path.is_file():
            found.add(path)
        elif path.is_dir():
            for child in path.rglob("*"):
                relative = child.relative_to(path).parts
                if any(part.startswith(".") for part in relative):
                    continue
                if child.is_file() and child.suffix.lower() in SUPPORTED_SUFFIXES:
                    found.add(child)
        elif path.exists():
            raise DocumentError(
                f"{path} is neither a file nor a folder (a device, pipe or socket); pass "
                "documents or folders of them"
            )
        else:
            raise DocumentError(f"{path}: no such file or folder; check the path")
    return sorted(found)


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
    summary = IngestSummary()
    for file in files:
        try:
            result = await kb.add_file(file, progress=on_embed)
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
        roots = await asyncio.to_thread(_resolved, paths)
        present = {str(f) for f in files}
        for doc in await kb.documents():
            source = doc.source
            if source is None or source in present:
                continue
            if any(Path(source).is_relative_to(root) for root in roots):
                await kb.remove(doc.doc_id)
                summary.removed.append(doc.doc_id)
    return summary


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
