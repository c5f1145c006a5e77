"""The `memory` provider: `toolweave serve` exposes the `memory` tool over a store on disk.

The store is `<[serve].data_dir>/memory.db` (SQLite, the default WordLlama embedder, no
network). Every MCP client shares it, separated by user: a call's `user_id` argument, or its
request `_meta["toolweave/user_id"]`, selects whose memories are read and written (default
user "default"). The deleting actions (`remove`, `forget`, `clear_all`) are not served: the
host asks before any tool that deletes, and a remote client has no one to ask; use the CLI or
the Python API to delete.

```toml
[memory]
embedder = "auto"         # auto (WordLlama), minilm, e5, use, hash[:dim], openai-compat:...

[memory.embed_retry]      # a failing embedder (the same table exists as [kb.embed_retry])
attempts = 3              # tries of one embedding call before search falls back to keywords
backoff = 0.5             # seconds before the second try, doubled before each further one
recheck = 30.0            # seconds searches stay keyword-only before the embedder is retried
```
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import Field

from toolweave.host.config import HostConfig
from toolweave.host.sections import Section
from toolweave.storage.retrieval.embed_guard import (
    DEFAULT_EMBED_ATTEMPTS,
    DEFAULT_EMBED_BACKOFF,
    DEFAULT_EMBED_RECHECK,
    MAX_EMBED_ATTEMPTS,
    EmbedRetry,
)
from toolweave.tools.base import Tool

if TYPE_CHECKING:
    from toolweave.memory import MemoryManager

MEMORY_FILE = "memory.db"


class EmbedRetrySection(Section):
    """`[memory.embed_retry]` and `[kb.embed_retry]`: `EmbedRetry` as a table."""

    attempts: int = Field(default=DEFAULT_EMBED_ATTEMPTS, ge=1, le=MAX_EMBED_ATTEMPTS)
    backoff: float = Field(default=DEFAULT_EMBED_BACKOFF, ge=0, allow_inf_nan=False)
    recheck: float = Field(default=DEFAULT_EMBED_RECHECK, ge=0, allow_inf_nan=False)

    def retry(self) -> EmbedRetry:
        return EmbedRetry(self.attempts, self.backoff, self.recheck)


class MemorySection(Section):
    """`[memory]`: the store the served `memory` tool uses (in `[serve].data_dir`)."""

    embedder: str = "auto"
    """auto (WordLlama), minilm, hash[:dim] or openai-compat:... (docs/memory.md); a store
    keeps the embedder it was created with."""
    embed_retry: EmbedRetrySection = Field(default_factory=EmbedRetrySection)


class MemoryProvider:
    """Serves one `MemoryTool(per_user=True)`; the store opens on the first tools/list."""

    name = "memory"

    def __init__(self, config: HostConfig) -> None:
        self.path = config.data_dir / MEMORY_FILE
        self.settings = config.section("memory", MemorySection)
        self.authenticated = bool(config.token)
        self._manager: MemoryManager | None = None

    @classmethod
    def store_files(cls, config: HostConfig) -> list[Path]:
        """The SQLite file this provider opens (checked before it is made)."""
        return [config.data_dir / MEMORY_FILE]

    def describe(self) -> str:
        who = (
            "every client holding the token"
            if self.authenticated
            else "one store shared by every client (no authentication)"
        )
        return f"the memory tool over {self.path}: {who}"

    async def tools(self) -> list[Tool]:
        from toolweave.memory import MemoryManager
        from toolweave.memory.tool import NON_DELETING_ACTIONS, MemoryTool
        from toolweave.storage.retrieval import IndexSettings

        index = IndexSettings(embed_retry=self.settings.embed_retry.retry())
        manager = MemoryManager(self.path, embedder=self.settings.embedder, index=index)
        self._manager = manager
        return [MemoryTool(manager, actions=NON_DELETING_ACTIONS, per_user=True)]

    async def close(self) -> None:
        if self._manager is not None:
            await self._manager.close()
            self._manager = None
