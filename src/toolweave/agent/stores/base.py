"""The `SessionStore` protocol: where session histories live between runs and processes.

Stores are async (as openai-agents' `Session` protocol is): a locked database or a slow disk
must never freeze the event loop every run, MCP connection and HTTP stream share. The SQLite
and Postgres stores (`toolweave.agent.stores.sql`) are one definition on `toolweave.storage.sql`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from toolweave.llm import Message


@runtime_checkable
class SessionStore(Protocol):
    """Persistence for `Session`; every method is one atomic write or read."""

    async def load(self, session_id: str) -> list[Message]: ...

    async def append(self, session_id: str, messages: Sequence[Message]) -> None: ...

    async def rewrite(self, session_id: str, messages: Sequence[Message]) -> None: ...

    async def clear(self, session_id: str) -> None: ...
