"""Read-only Postgres for `sql_query`, enforced by the server rather than by keyword filters.

Each query gets a fresh connection (so no session setting a query makes can outlive it) and a
`BEGIN READ ONLY` transaction that is always rolled back. `statement_timeout` is set through a
`SELECT set_config(...)`, which also takes the transaction's first snapshot, so a later
`SET TRANSACTION READ WRITE` is refused by the server. The query is sent as a prepared
statement, which the server accepts only for exactly one command. For defence in depth,
connect as a role that has only SELECT grants (docs/builtins.md).
"""

from __future__ import annotations

import asyncio
from typing import Any

Rows = tuple[list[str], list[tuple[Any, ...]], bool]

_SCHEMA_QUERY = """
SELECT table_schema, table_name, column_name, data_type
FROM information_schema.columns
WHERE table_schema NOT IN ('pg_catalog', 'information_schema')
ORDER BY table_schema, table_name, ordinal_position
"""


class PostgresReader:
    """Read-only queries against the server at `dsn`, one short connection each."""

    def __init__(self, dsn: str, timeout: float) -> None:
        self.dsn = dsn
        self.timeout = timeout

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
                        await connection.execute(
                            "SELECT set_config('statement_timeout', %s, true)",
                            (str(max(1, int(self.timeout * 1000))),),
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
