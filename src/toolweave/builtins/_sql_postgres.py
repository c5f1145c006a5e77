"""Read-only Postgres for `sql_query`, enforced by the server rather than by keyword filters.

Each query gets a fresh connection (so no session setting a query makes can outlive it) and a
`BEGIN READ ONLY` transaction that is always rolled back. `statement_timeout` is set through a
`SELECT set_config(...)`, which also takes the transaction's first snapshot, so a later
`SET TRANSACTION READ WRITE` is refused by the server. The query is sent as a prepared
statement, which the server accepts only for exactly one command.

A read-only transaction does not stop a superuser's `COPY ... TO PROGRAM`, `lo_export` or
`pg_read_file`, so a role that is a superuser or may run server programs or read and write
server files is refused unless `allow_privileged=True`: connect as a role with SELECT grants.
"""

from __future__ import annotations

import asyncio
from typing import Any

Rows = tuple[list[str], list[tuple[Any, ...]], bool]

_PRIVILEGED_ROLES = ("pg_execute_server_program", "pg_write_server_files", "pg_read_server_files")
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

        try:
            async with asyncio.timeout(self.timeout + 5):  # the server normally stops first
                connection = await psycopg.AsyncConnection.connect(
                    self.dsn, autocommit=True, connect_timeout=max(1, int(self.timeout))
                )
                async with connection:
                    await connection.execute("BEGIN READ ONLY")
                    try:
                        setup = await connection.execute(
                            _SETUP, (str(max(1, int(self.timeout * 1000))),)
                        )
                        _, role, privileged = await setup.fetchone() or ("", "", True)
                        if privileged and not self.allow_privileged:
                            raise PermissionError(
                                f"role {role!r} is a superuser or may run server programs or "
                                "touch server files, which a read-only transaction does not "
                                "stop; connect as a role with only SELECT grants "
                                "(or pass allow_privileged=True)"
                            )
                        cursor = await connection.execute(sql, prepare=True)
                        columns = [d.name for d in cursor.description or ()]
                        rows = await cursor.fetchmany(max_rows + 1) if cursor.description else []
                    finally:
                        await connection.execute("ROLLBACK")
        except psycopg.errors.QueryCanceled as exc:
            raise TimeoutError from exc
        return columns, rows[:max_rows], len(rows) > max_rows

    async def schema(self) -> list[tuple[str, list[tuple[str, str]]]]:
        _, rows, _ = await self.query(_SCHEMA_QUERY, 100_000)
        tables: dict[str, list[tuple[str, str]]] = {}
        for schema, table, column, kind in rows:
            name = table if schema == "public" else f"{schema}.{table}"
            tables.setdefault(name, []).append((column, kind))
        return list(tables.items())

    async def close(self) -> None:
        return None
