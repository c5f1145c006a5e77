"""Damaged stores: one line naming the file and the fix, and the rest of the host serves.

A provider that keeps SQLite files in `[serve].data_dir` declares them (`store_files(config)`,
a class method, so they are checked before the provider is made: the knowledge base opens its
file when made). `damaged_store` opens such a file read-only and reads its schema; a file that
is not a database, or whose first pages are garbage, is damaged. `toolweave serve` leaves that
provider out (the banner and the log say why, in one line), and so does `toolweave doctor`. The
host's query log is checked the same way: a damaged one is switched off rather than failing
every call.
"""

from __future__ import annotations

import sqlite3
import urllib.parse
from pathlib import Path


def damaged_store(path: Path) -> str | None:
    """Why the SQLite file `path` cannot be read (None when it can, or does not exist yet)."""
    if not path.exists():
        return None
    if path.is_dir():
        return "a folder where a SQLite file belongs"
    uri = f"file:{urllib.parse.quote(str(path))}?mode=ro"
    try:
        connection = sqlite3.connect(uri, uri=True)
        try:
            connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
        finally:
            connection.close()
    except sqlite3.DatabaseError as exc:
        return f"SQLite says: {exc}"
    return None


def damaged_line(what: str, path: Path, why: str) -> str:
    """The one line that says `what` ("memory not served") happened because `path` is damaged,
    and how to fix it."""
    return (
        f"{what}: {path} is damaged ({why}); move it aside "
        f"(mv {path} {path}.damaged) to start an empty one, or restore a backup, and restart"
    )
