"""Where a session's history lives: the async `SessionStore` protocol and its SQLite and
Postgres implementations (one definition on `toolweave.storage.sql`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolweave._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "SQLiteSessionStore": "toolweave.agent.stores.sql",
    "SessionStore": "toolweave.agent.stores.base",
    "PostgresSessionStore": "toolweave.agent.stores.sql",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:
    from toolweave.agent.stores.base import SessionStore
    from toolweave.agent.stores.sql import PostgresSessionStore, SQLiteSessionStore

__all__ = [
    "PostgresSessionStore",
    "SQLiteSessionStore",
    "SessionStore",
]
