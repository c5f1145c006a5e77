"""Read-only Postgres for `sql_query`, enforced by the server rather than by keyword filters.

Each query gets a fresh connection (so no session setting a query makes can outlive it) and a
`BEGIN READ ONLY` transaction that is always rolled back. `statement_timeout` is set through a
`SELECT set_config(...)`, which also takes the transaction's first snapshot, so a later
`SET TRANSACTION READ WRITE` is refused by the server. The query is sent as a prepared
statement, which the server accepts only for exactly one command.

A read-only transaction does not stop a superuser's `COPY ... TO PROGRAM`, `lo_export` or
`pg_read_file`, nor `pg_terminate_backend` from a member of `pg_signal_backend`, so such a role
is refused at connect unless `allow_privileged=True`: connect as a role with SELECT grants (the
SQL to create one is in docs/builtins.md). Functions with effects outside the transaction are
refused by name in every case (`_sql_denied.py`); a plain role can still end its own sessions.

Results are bounded before they reach this process: the query runs in a server-side cursor
from which at most `max_rows + 1` rows are fetched, and each value is cut on the server to
`MAX_CELL_CHARS + 1` characters of its text form, so a 5M-row result or a 400 MB value costs
the client no more than the rows and characters it shows.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from toolweave.builtins._sql_denied import denied_function
from toolweave.builtins.sql import MAX_CELL_CHARS

if TYPE_CHECKING:
    import psycopg

Rows = tuple[list[str], list[tuple[Any, ...]], bool]

READER_ROLE_SQL = """\
CREATE ROLE toolweave_reader LOGIN PASSWORD '...';
GRANT CONNECT ON DATABASE mydb TO toolweave_reader;
GRANT USAGE ON SCHEMA public TO toolweave_reader;
GRANT SELECT ON ALL TABLES IN SCHEMA public TO toolweave_reader;"""
"""The read-only role the refusal of a privileged role asks for (also in docs/builtins.md)."""

_PRIVILEGED_ROLES = (
    "pg_execute_server_program",
    "pg_write_server_files",
    "pg_read_server_files",
    "pg_signal_backend",
)
_SETUP = (
    "SELECT set_config('statement_timeout', %s, true), current_user, "
    "current_setting('is_superuser') = 'on' OR "
    + " OR ".join(f"pg_has_role(current_user, '{r}', 'USAGE')" for r in _PRIVILEGED_ROLES)
)

_SCHEMA_QUERY = """
SELECT table_schema, table_name, column_name, data_type
FROM information_schema.columns
WHERE table_schema NOT IN ('pg_catalog', 'information_schema')
ORDER BY table_schema, table_name, ordinal_position
"""


class PostgresReader:
    """Read-only queries against the server at `dsn`, one short connection each."""

    def __init__(self, dsn: str, timeout: float, *, allow_privileged: bool = False) -> None:
        self.dsn = dsn
        self.timeout = timeout
        self.allow_privileged = allow_privileged

    async def query(self, sql: str, max_rows: int) -> Rows:
        import psycopg

        denied = denied_function(sql)
        if denied is not None:
            raise PermissionError(
                f"sql_query does not call {denied}: it acts outside the read-only transaction "
                "(other sessions, locks, server files, or a query given as text)"
            )
        try:
            async with asyncio.timeout(self.timeout + 5):  # the server normally stops first
                connection = await psycopg.AsyncConnection.connect(
                    self.dsn, autocommit=True, connect_timeout=max(1, int(self.timeout))
                )
                async with connection:
                    await connection.execute("BEGIN READ ONLY")
                    try:
                        await self._check_role(connection)
                        columns, rows = await _fetch(connection, sql, max_rows + 1)
                    finally:
                        await connection.execute("ROLLBACK")
        except psycopg.errors.QueryCanceled as exc:
            raise TimeoutError from exc
        return columns, rows[:max_rows], len(rows) > max_rows

    async def _check_role(self, connection: psycopg.AsyncConnection[Any]) -> None:
        setup = await connection.execute(_SETUP, (str(max(1, int(self.timeout * 1000))),))
        _, role, privileged = await setup.fetchone() or ("", "", True)
        if privileged and not self.allow_privileged:
            raise PermissionError(
                f"role {role!r} is a superuser or a member of {', '.join(_PRIVILEGED_ROLES)}, "
                "which a read-only transaction does not stop (it can run server programs, touch "
                "server files or end other sessions); connect as a role with only SELECT "
                f"grants, for example:\n{READER_ROLE_SQL}\n(or pass allow_privileged=True)"
            )

    async def schema(self) -> list[tuple[str, list[tuple[str, str]]]]:
        _, rows, _ = await self.query(_SCHEMA_QUERY, 100_000)
        tables: dict[str, list[tuple[str, str]]] = {}
        for schema, table, column, kind in rows:
            name = table if schema == "public" else f"{schema}.{table}"
            tables.setdefault(name, []).append((column, kind))
        return list(tables.items())

    async def close(self) -> None:
        return None


async def _fetch(
    connection: psycopg.AsyncConnection[Any], sql: str, limit: int
) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Column names and at most `limit` rows, each value cut on the server to its shown size.

    A first cursor over the statement only gives its columns (DECLARE plans, FETCH 0 reads
    nothing); the second selects each column's text, cut, from the statement as a subquery."""
    body = sql.rstrip().rstrip(";")
    await connection.execute(f"DECLARE toolweave_probe NO SCROLL CURSOR FOR {body}\n", prepare=True)
    probe = await connection.execute("FETCH FORWARD 0 FROM toolweave_probe")
    columns = [d.name for d in probe.description or ()]
    await connection.execute("CLOSE toolweave_probe")
    if not columns:
        return [], []
    aliases = ", ".join(f"c{i}" for i in range(len(columns)))
    cut = ", ".join(f"left(c{i}::text, {MAX_CELL_CHARS + 1})" for i in range(len(columns)))
    await connection.execute(
        f"DECLARE toolweave_rows NO SCROLL CURSOR FOR "
        f"SELECT {cut} FROM (\n{body}\n) AS q({aliases})",
        prepare=True,
    )
    fetched = await connection.execute(f"FETCH FORWARD {int(limit)} FROM toolweave_rows")
    return columns, await fetched.fetchall()
