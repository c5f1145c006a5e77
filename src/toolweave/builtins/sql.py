"""Read-only SQL tools: `sql_query` and `sql_schema` over SQLite or Postgres.

Read-only is enforced by the database (see `_sql_sqlite.py` and `_sql_postgres.py`), never by
looking for keywords, so `SELECT 'DROP TABLE x'` works and `WITH d AS (DELETE ...) SELECT`
does not. Results come back as a compact table with column names, rows capped with a note.
"""

from __future__ import annotations

import importlib.util
from typing import Any, Protocol

from toolweave.builtins._output import MAX_ERROR_BODY_CHARS, check_positive, untrusted
from toolweave.errors import ConfigError
from toolweave.tools.base import Tool
from toolweave.tools.errors import (
    ExecutionFailed,
    InvalidArguments,
    PermissionDenied,
    ToolTimeout,
)
from toolweave.tools.function_tool import tool
from toolweave.tools.permissions import Permission
from toolweave.tools.result import ToolResult
from toolweave.tools.shaping import DEFAULT_MAX_CHARS, wrap_untrusted

DEFAULT_TIMEOUT = 5.0
"""Seconds one query may run before the database interrupts it."""
DEFAULT_MAX_ROWS = 50
"""Rows `sql_query` returns at most; more are announced, not fetched."""
MAX_CELL_CHARS = 200
"""Characters of one value shown in a result table."""
DEFAULT_MAX_CELL_BYTES = 64 * 1024
"""Bytes of the largest value SQLite may build while running a query (`SQLITE_LIMIT_LENGTH`).
It also bounds what one uninterruptible step costs: `instr` or `replace` over 1 MiB values took
12 s in a single step, over 64 KiB values 0.16 s."""

_SQLITE_PREFIX = "sqlite:///"
_POSTGRES_PREFIXES = ("postgresql://", "postgres://")


class _Reader(Protocol):
    async def query(self, sql: str, max_rows: int) -> tuple[list[str], list[Any], bool]: ...

    async def schema(self) -> list[tuple[str, list[tuple[str, str]]]]: ...

    async def close(self) -> None: ...


class SQLReader:
    """Read-only access to one database, behind `sql_query` and `sql_schema`.

    `dsn` is `sqlite:///path/to.db` (relative) or `sqlite:////abs/path.db`, or a
    `postgresql://` URL. `close()` releases the SQLite connection. A Postgres role that is a
    superuser (or may run server programs or touch server files) is refused unless
    `allow_privileged=True`, since a read-only transaction does not bind it. SQLite builds no
    value over `max_cell_bytes`; a table shows at most `MAX_CELL_CHARS` of each value.
    """

    def __init__(
        self,
        dsn: str,
        timeout: float = DEFAULT_TIMEOUT,
        max_rows: int = DEFAULT_MAX_ROWS,
        *,
        max_chars: int = DEFAULT_MAX_CHARS,
        max_cell_bytes: int = DEFAULT_MAX_CELL_BYTES,
        allow_privileged: bool = False,
    ) -> None:
        check_positive("timeout", timeout)
        check_positive("max_cell_bytes", max_cell_bytes)
        check_positive("max_rows", max_rows)
        check_positive("max_chars", max_chars)
        self.max_rows = max_rows
        self.max_chars = max_chars
        self._reader: _Reader
        if dsn.startswith(_SQLITE_PREFIX):
            from toolweave.builtins._sql_sqlite import SQLiteReader

            self._reader = SQLiteReader(dsn[len(_SQLITE_PREFIX) :], timeout, max_cell_bytes)
        elif dsn.startswith(_POSTGRES_PREFIXES):
            from toolweave.builtins._sql_postgres import PostgresReader

            if importlib.util.find_spec("psycopg") is None:
                raise ConfigError(
                    "a postgresql:// dsn needs psycopg: pip install 'toolweave[postgres]'"
                )

            self._reader = PostgresReader(dsn, timeout, allow_privileged=allow_privileged)
        else:
            raise ConfigError(
                f"dsn {_redact(dsn)!r} is not supported: use sqlite:///path/to.db or "
                "postgresql://user@host/dbname"
            )
        self.timeout = timeout

    async def query(self, sql: str) -> ToolResult:
        """Run one read-only statement; the table (or the database's refusal) as text."""
        if not sql.strip():
            raise InvalidArguments("query is empty: pass one SELECT statement", tool="sql_query")
        try:
            columns, rows, more = await self._reader.query(sql, self.max_rows)
        except PermissionError as exc:
            raise PermissionDenied(str(exc), tool="sql_query", permission="read") from None
        except TimeoutError:
            raise ToolTimeout(
                f"the query ran past the {self.timeout:g} s limit and was interrupted; add a "
                "WHERE clause or a LIMIT",
                tool="sql_query",
                timeout=self.timeout,
            ) from None
        except Exception as exc:  # the database's own refusal, worded by the database
            refusal = str(exc)[:MAX_ERROR_BODY_CHARS]  # may quote row values: data, wrapped
            raise ExecutionFailed(
                "the database refused the query. sql_query runs exactly one read-only "
                "statement (SELECT, WITH ... SELECT); use sql_schema to see the tables. "
                f"The database said:\n{wrap_untrusted(refusal, 'sql_query')}",
                tool="sql_query",
            ) from exc
        return untrusted(
            format_table(columns, rows, more, self.max_rows), "sql_query", self.max_chars
        )

    async def schema(self) -> ToolResult:
        """Every table and view with its columns and their types."""
        tables = await self._reader.schema()
        lines = [
            f"{name}({', '.join(f'{c} {t}'.strip() for c, t in cols)})" for name, cols in tables
        ]
        return untrusted("\n".join(lines) or "(no tables)", "sql_schema", self.max_chars)

    def tools(self) -> list[Tool]:
        reader = self

        @tool(read_only=True, permissions=[Permission.READ], primary_arg="query", open_world=False)
        async def sql_query(query: str) -> ToolResult:
            """Run one read-only SQL statement (SELECT or WITH ... SELECT) and get a table.

            Args:
                query: Exactly one SQL query; writes, ATTACH and PRAGMA changes are refused.
            """
            return await reader.query(query)

        @tool(read_only=True, permissions=[Permission.READ], open_world=False)
        async def sql_schema() -> ToolResult:
            """List the database's tables and views with their columns."""
            return await reader.schema()

        return [sql_query, sql_schema]

    async def close(self) -> None:
        await self._reader.close()


def sql_tools(
    dsn: str,
    timeout: float = DEFAULT_TIMEOUT,
    max_rows: int = DEFAULT_MAX_ROWS,
    *,
    max_cell_bytes: int = DEFAULT_MAX_CELL_BYTES,
    allow_privileged: bool = False,
) -> list[Tool]:
    """`sql_query` and `sql_schema` over the database at `dsn` (see `SQLReader`)."""
    return SQLReader(
        dsn, timeout, max_rows, max_cell_bytes=max_cell_bytes, allow_privileged=allow_privileged
    ).tools()


def format_table(columns: list[str], rows: list[Any], more: bool, max_rows: int) -> str:
    """A compact pipe-separated table: a header, one line per row, a note when rows were cut."""
    if not columns:
        return "(the statement returned no result set)"
    lines = [" | ".join(columns)]
    lines.extend(" | ".join(_cell(v) for v in row) for row in rows)
    if not rows:
        lines.append("(no rows)")
    if more:
        lines.append(
            f"[... only the first {max_rows} rows are shown (max_rows); add WHERE, LIMIT or "
            "an aggregate to see the rest ...]"
        )
    return "\n".join(lines)


def _cell(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bytes | bytearray | memoryview):
        return f"<{memoryview(value).nbytes} bytes>"
    text = value if isinstance(value, str) else str(value)
    clipped = len(text) > MAX_CELL_CHARS
    text = text[: MAX_CELL_CHARS - 1] if clipped else text  # clipped before any copy
    text = text.replace("\n", "\\n").replace("|", "\\|")
    return text + "…" if clipped else text


def _redact(dsn: str) -> str:
    """`dsn` without a password, for error messages."""
    scheme, sep, rest = dsn.partition("://")
    credentials, at, host = rest.rpartition("@")
    if not sep or not at or ":" not in credentials:
        return dsn
    return f"{scheme}://{credentials.split(':', 1)[0]}:***@{host}"
