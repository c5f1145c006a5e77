"""Storage plumbing every store shares: one SQLite connection driven from async code, and
`SQLStore` (`toolweave.storage.sql`), which runs one store's logic on SQLite or Postgres.

The stores themselves (sessions, memory, knowledge base, teams, quotas, query log, schedules)
live with their capability; this package holds only what they must not each write again. It
imports nothing else from toolweave but the leaf `toolweave.errors`, so any layer may use it.
See docs/architecture.md, "Stores".
"""

from __future__ import annotations

from .sqlite import SQLiteDatabase

__all__ = ["SQLiteDatabase"]
