"""Live reload of a config file by content hash.

Modification times lie (editors that write twice, `touch`, coarse filesystem clocks), so a
change is a change of the SHA-256 of the bytes: saving an identical file does nothing, and two
quick edits are never merged into one missed update.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import inspect
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path

logger = logging.getLogger("toolweave.mcp.watch")

DEFAULT_INTERVAL = 1.0
OnChange = Callable[[bytes], Awaitable[None] | None]


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def content_hash(path: str | Path) -> str | None:
    """SHA-256 of the file, or None when it does not exist (yet)."""
    data = _read(Path(path))
    return None if data is None else hashlib.sha256(data).hexdigest()


class ConfigWatcher:
    """Calls `on_change(content)` whenever the file's content hash changes.

    `check()` runs one comparison (tests and custom loops use it); `start()` polls every
    `interval` seconds in a background task until `stop()`. A failing callback is logged and
    the new hash still counts as seen, so a bad config is reported once, not every second.
    """

    def __init__(
        self, path: str | Path, on_change: OnChange, *, interval: float = DEFAULT_INTERVAL
    ) -> None:
        if interval <= 0:
            raise ValueError("interval must be a positive number of seconds")
        self.path = Path(path)
        self.on_change = on_change
        self.interval = interval
        self.last_hash = content_hash(self.path)
        self._task: asyncio.Task[None] | None = None

    async def check(self) -> bool:
        """Compare once; True when the content changed and `on_change` was called."""
        data = _read(self.path)  # read once: the callback gets exactly the bytes hashed
        if data is None:
            return False
        current = hashlib.sha256(data).hexdigest()
        if current == self.last_hash:
            return False
        self.last_hash = current
        try:
            outcome = self.on_change(data)
            if inspect.isawaitable(outcome):
                await outcome
        except Exception:
            logger.exception("reloading %s failed; keeping the previous config", self.path)
        return True

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            await self.check()

    def start(self) -> ConfigWatcher:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run())
        return self

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


def watch_config(
    path: str | Path, on_change: OnChange, *, interval: float = DEFAULT_INTERVAL
) -> ConfigWatcher:
    """Start watching `path` (from inside a running event loop); `await watcher.stop()` ends it."""
    return ConfigWatcher(path, on_change, interval=interval).start()
