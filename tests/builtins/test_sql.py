"""Read-only SQL: attack tables against SQLite and a real Postgres server.

Every attack asserts the database (its file bytes, or its rows and tables) and a sentinel file
are unchanged, and that no new file appeared beside the database.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from toolweave.builtins import SQLReader, sql_tools
from toolweave.builtins.sql import DEFAULT_MAX_CELL_BYTES
from toolweave.tools import ExecutionFailed, PermissionDenied, ToolError, ToolTimeout

ROWS = [(1, "alice", "北京"), (2, "bob", "London"), (3, "carol", "上海")]


@pytest.fixture
def sqlite_db(tmp_path: Path) -> Path:
    import sqlite3

    path = tmp_path / "data.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE accounts (id INTEGER PRIMARY KEY, name TEXT, city TEXT)")
        db.executemany("INSERT INTO accounts VALUES (?, ?, ?)", ROWS)
        db.execute("CREATE INDEX accounts_city ON accounts(city)")
    db.close()
    (tmp_path / "sentinel").write_text("unchanged")
    return path


def state(directory: Path) -> dict[str, str]:
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(directory.iterdir())
        if p.is_file()
    }


SQLITE_ATTACKS = [
    "WITH x AS (SELECT 1) DELETE FROM accounts",
    "WITH d AS (DELETE FROM accounts RETURNING *) SELECT * FROM d",
    "SELECT 1; DELETE FROM accounts",
    "SELECT 1; DROP TABLE accounts;",
    "ATTACH DATABASE '{dir}/evil.db' AS evil",
    "PRAGMA journal_mode=DELETE",
    "PRAGMA user_version=7",
    "PRAGMA writable_schema=ON",
    "VACUUM INTO '{dir}/copy.db'",
    "VACUUM",
    "SELECT load_extension('{dir}/evil.so')",
    "INSERT INTO accounts VALUES (9, 'mallory', 'x')",
    "UPDATE accounts SET name = 'pwned'",
    "DELETE FROM accounts",
    "REPLACE INTO accounts VALUES (1, 'pwned', 'x')",
    "DROP TABLE accounts",
    "CREATE TABLE evil (a)",
    "CREATE TEMP TABLE evil (a)",
    "ALTER TABLE accounts ADD COLUMN evil TEXT",
    "CREATE INDEX evil ON accounts(name)",
    "CREATE TRIGGER evil AFTER INSERT ON accounts BEGIN DELETE FROM accounts; END",
    "BEGIN IMMEDIATE",
    "SAVEPOINT evil",
    "ANALYZE",
    "REINDEX",
]


@pytest.mark.parametrize("attack", SQLITE_ATTACKS)
async def test_sqlite_attacks_change_nothing(attack: str, sqlite_db: Path) -> None:
    before = state(sqlite_db.parent)
    reader = SQLReader(f"sqlite:///{sqlite_db}")
    try:
        with pytest.raises(ExecutionFailed, match="the database refused"):
            await reader.query(attack.format(dir=sqlite_db.parent))
        listed = await reader.query("SELECT count(*) AS n FROM accounts")
    finally:
        await reader.close()
    assert "n\n3" in listed.text
    assert state(sqlite_db.parent) == before  # same files, same bytes; sentinel included


async def test_sqlite_runaway_recursive_cte_is_interrupted(sqlite_db: Path) -> None:
    reader = SQLReader(f"sqlite:///{sqlite_db}", timeout=0.2)
    try:
        with pytest.raises(ToolTimeout, match=r"0\.2 s limit"):
            await reader.query(
                "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) "
                "SELECT count(*) FROM r"
            )
        after = await reader.query("SELECT name FROM accounts WHERE id = 1")  # still usable
    finally:
        await reader.close()
    assert "alice" in after.text


async def test_sqlite_builds_no_value_over_max_cell_bytes(sqlite_db: Path) -> None:
    reader = SQLReader(f"sqlite:///{sqlite_db}", max_cell_bytes=4096)
    try:
        for attack in ("SELECT zeroblob(4097)", "SELECT hex(zeroblob(2049))"):
            with pytest.raises(ExecutionFailed, match=r"max_cell_bytes \(4096 bytes\)"):
                await reader.query(attack)
        printf = await reader.query("SELECT printf('%.*c', 5000, 'x') AS p")  # stops at the bound
        fits = await reader.query("SELECT zeroblob(4096) AS z, hex(zeroblob(2000)) AS h")
    finally:
        await reader.close()
    assert "\np\nNULL\n" in printf.text
    assert "<4096 bytes> | " + "0" * 199 + "…" in fits.text


async def test_sqlite_default_cell_bound_holds(sqlite_db: Path) -> None:
    reader = SQLReader(f"sqlite:///{sqlite_db}")
    try:
        with pytest.raises(ExecutionFailed, match="max_cell_bytes"):
            await reader.query(f"SELECT zeroblob({DEFAULT_MAX_CELL_BYTES + 1})")
        printf = await reader.query(
            f"SELECT printf('%.*c', {2 * DEFAULT_MAX_CELL_BYTES}, 'x') AS p"
        )
    finally:
        await reader.close()
    assert "\np\nNULL\n" in printf.text


async def test_sqlite_like_patterns_are_bounded(sqlite_db: Path) -> None:
    reader = SQLReader(f"sqlite:///{sqlite_db}")
    try:
        with pytest.raises(ExecutionFailed, match="pattern too complex"):  # one long VM step
            await reader.query(
                "SELECT printf('%.*c', 100000, 'a') LIKE '%' || printf('%.*c', 5000, 'a') || 'b%'"
            )
        found = await reader.query("SELECT name FROM accounts WHERE city LIKE '上%'")
    finally:
        await reader.close()
    assert "carol" in found.text


def test_cells_are_clipped_with_chinese_text() -> None:
    from toolweave.builtins.sql import MAX_CELL_CHARS, format_table

    table = format_table(["t"], [("北京|\n" * 1000,), (b"\x00" * 10,)], False, 50)
    first = table.splitlines()[1]
    assert first.endswith("…") and len(first) < MAX_CELL_CHARS * 2
    assert first.startswith("北京\\|\\n北京") and "<10 bytes>" in table


async def test_sqlite_reads_keywords_in_literals_chinese_and_caps(sqlite_db: Path) -> None:
    query, schema = sql_tools(f"sqlite:///{sqlite_db}", max_rows=2)
    literal = await query(query="SELECT 'DROP TABLE accounts; DELETE' AS note")
    assert "DROP TABLE accounts; DELETE" in literal.text
    chinese = await query(query="SELECT name FROM accounts WHERE city = '上海'")
    assert "name\ncarol" in chinese.text
    capped = await query(query="SELECT id, name, city FROM accounts ORDER BY id")
    assert "id | name | city\n1 | alice | 北京\n2 | bob | London" in capped.text
    assert "only the first 2 rows" in capped.text and "carol" not in capped.text
    recursive = await query(
        query="WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3) "
        "SELECT sum(n) AS total FROM r"
    )
    assert "total\n6" in recursive.text
    pragma = await query(query="PRAGMA table_info(accounts)")
    assert "1 | name | TEXT" in pragma.text
    tables = await schema()
    assert "accounts(id INTEGER, name TEXT, city TEXT)" in tables.text


async def test_sqlite_errors_name_the_fix(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"sqlite:///path/to\.db"):
        SQLReader("mysql://root@localhost/db")
    with pytest.raises(ValueError, match="max_rows"):
        SQLReader("sqlite:///x.db", max_rows=0)
    reader = SQLReader(f"sqlite:///{tmp_path / 'missing.db'}")
    with pytest.raises(ToolError):  # mode=ro never creates the file
        await reader.query("SELECT 1")
    assert not (tmp_path / "missing.db").exists()


# -- Postgres -------------------------------------------------------------------------------


@pytest.fixture
async def pg(postgres_dsn: str) -> AsyncIterator[tuple[str, str, str]]:
    """(superuser dsn, reader dsn, schema): a schema with `accounts` and a SELECT-only role."""
    import psycopg

    suffix = uuid.uuid4().hex[:10]
    schema, role = f"builtins_sql_{suffix}", f"builtins_reader_{suffix}"
    async with await psycopg.AsyncConnection.connect(postgres_dsn, autocommit=True) as conn:
        await conn.execute(f"CREATE SCHEMA {schema}")
        await conn.execute(
            f"CREATE TABLE {schema}.accounts (id int PRIMARY KEY, name text, city text)"
        )
        for row in ROWS:
            await conn.execute(f"INSERT INTO {schema}.accounts VALUES (%s, %s, %s)", row)
        await conn.execute(f"CREATE ROLE {role} LOGIN")
        await conn.execute(f"GRANT USAGE ON SCHEMA {schema} TO {role}")
        await conn.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA {schema} TO {role}")
    reader_dsn = psycopg.conninfo.make_conninfo(postgres_dsn, user=role)
    yield postgres_dsn, reader_dsn, schema
    async with await psycopg.AsyncConnection.connect(postgres_dsn, autocommit=True) as conn:
        await conn.execute(f"DROP SCHEMA {schema} CASCADE")
        await conn.execute(f"DROP ROLE {role}")


async def pg_state(dsn: str, schema: str) -> tuple[object, ...]:
    import psycopg

    async with await psycopg.AsyncConnection.connect(dsn) as conn:
        rows = await (await conn.execute(f"SELECT * FROM {schema}.accounts ORDER BY id")).fetchall()
        tables = await (
            await conn.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
                (schema,),
            )
        ).fetchall()
    return tuple(rows), tuple(sorted(tables))


def url(dsn: str) -> str:
    """A postgresql:// URL for a key=value conninfo string."""
    import psycopg

    parts = psycopg.conninfo.conninfo_to_dict(dsn)
    return f"postgresql://{parts['user']}@{parts['host']}:{parts['port']}/{parts['dbname']}"


PG_ATTACKS = [
    "WITH x AS (SELECT 1) DELETE FROM {s}.accounts",
    "WITH d AS (DELETE FROM {s}.accounts RETURNING *) SELECT * FROM d",
    "SELECT 1; DELETE FROM {s}.accounts",
    "INSERT INTO {s}.accounts VALUES (9, 'mallory', 'x')",
    "UPDATE {s}.accounts SET name = 'pwned'",
    "DELETE FROM {s}.accounts",
    "TRUNCATE {s}.accounts",
    "DROP TABLE {s}.accounts",
    "CREATE TABLE {s}.evil (a int)",
    "ALTER TABLE {s}.accounts ADD COLUMN evil text",
    "SET TRANSACTION READ WRITE",
    "SELECT set_config('transaction_read_only', 'off', false)",
    "COMMIT",
    "DO $$ BEGIN DELETE FROM {s}.accounts; END $$",
    "COPY {s}.accounts FROM '/etc/hostname'",
    "SELECT pg_sleep(30)",
]


@pytest.mark.parametrize("attack", PG_ATTACKS)
async def test_postgres_attacks_change_nothing(
    attack: str, pg: tuple[str, str, str], tmp_path: Path
) -> None:
    admin, reader_dsn, schema = pg
    before = await pg_state(admin, schema)
    reader = SQLReader(url(reader_dsn), timeout=0.5)
    with pytest.raises(ToolError):
        result = await reader.query(attack.format(s=schema))
        if attack.startswith(("SET TRANSACTION", "COMMIT")):  # refused or a no-op, then undone
            raise ToolError(result.text)
    assert await pg_state(admin, schema) == before


async def test_postgres_reads_and_caps(pg: tuple[str, str, str]) -> None:
    _, reader_dsn, schema = pg
    query, schema_tool = sql_tools(url(reader_dsn), max_rows=2)
    rows = await query(query=f"SELECT id, name, city FROM {schema}.accounts ORDER BY id")
    assert "id | name | city\n1 | alice | 北京\n2 | bob | London" in rows.text
    assert "only the first 2 rows" in rows.text
    literal = await query(query="SELECT 'DELETE FROM accounts' AS note, 100 % 7 AS m")
    assert "DELETE FROM accounts | 2" in literal.text
    assert f"{schema}.accounts(id integer, name text, city text)" in (await schema_tool()).text


async def test_postgres_statement_timeout_interrupts(pg: tuple[str, str, str]) -> None:
    _, reader_dsn, _ = pg
    reader = SQLReader(url(reader_dsn), timeout=0.3)
    with pytest.raises(ToolTimeout):
        await reader.query("SELECT pg_sleep(30)")


async def test_postgres_superuser_is_refused_by_default(pg: tuple[str, str, str]) -> None:
    admin, _, schema = pg
    with pytest.raises(PermissionDenied, match="superuser"):
        await SQLReader(url(admin)).query(f"SELECT * FROM {schema}.accounts")
    opted_in = SQLReader(url(admin), allow_privileged=True)
    assert "alice" in (await opted_in.query(f"SELECT name FROM {schema}.accounts")).text


async def test_postgres_signal_backend_member_is_refused_naming_the_role(
    pg: tuple[str, str, str],
) -> None:
    import psycopg

    admin, reader_dsn, schema = pg
    role = psycopg.conninfo.conninfo_to_dict(reader_dsn)["user"]
    async with await psycopg.AsyncConnection.connect(admin, autocommit=True) as conn:
        await conn.execute(f"GRANT pg_signal_backend TO {role}")
    with pytest.raises(PermissionDenied, match="pg_signal_backend") as refused:
        await SQLReader(url(reader_dsn)).query(f"SELECT * FROM {schema}.accounts")
    assert "CREATE ROLE toolweave_reader LOGIN" in str(refused.value)
    assert "GRANT SELECT ON ALL TABLES" in str(refused.value)


SIDE_EFFECTS = [
    "SELECT pg_terminate_backend({pid})",
    "SELECT pg_cancel_backend({pid})",
    'SELECT "pg_terminate_backend"({pid})',
    "SELECT PG_CATALOG . /* a comment */ PG_TERMINATE_BACKEND({pid})",
    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid()",
    "SELECT query_to_xml('SELECT pg_terminate_backend({pid})', true, true, '')",
    "SELECT query_to_xml($q$SELECT 1$q$, true, true, '')",
    'SELECT U&"pg_terminate_backen\\0064"({pid})',
    "SELECT pg_advisory_lock(7)",
    "SELECT pg_notify('jobs', 'x')",
    "SELECT pg_stat_reset()",
    "SELECT pg_reload_conf()",
]


@pytest.mark.parametrize("attack", SIDE_EFFECTS)
async def test_postgres_side_effect_functions_are_denied(
    attack: str, pg: tuple[str, str, str]
) -> None:
    import psycopg

    admin, reader_dsn, _ = pg
    async with await psycopg.AsyncConnection.connect(reader_dsn, autocommit=True) as victim:
        pid = victim.info.backend_pid  # the same role: no privilege stops this kill
        for reader in (SQLReader(url(reader_dsn)), SQLReader(url(admin), allow_privileged=True)):
            with pytest.raises(PermissionDenied, match="sql_query does not call"):
                await reader.query(attack.format(pid=pid))
        alive = await (await victim.execute("SELECT 1")).fetchone()
    assert alive == (1,)


async def test_postgres_literals_naming_a_denied_function_are_read(
    pg: tuple[str, str, str],
) -> None:
    _, reader_dsn, _ = pg
    result = await SQLReader(url(reader_dsn)).query(
        "SELECT 'pg_terminate_backend' AS word, $$lo_export$$ AS other -- pg_notify"
    )
    assert "pg_terminate_backend | lo_export" in result.text


async def test_postgres_fetches_at_most_max_rows_plus_one(pg: tuple[str, str, str]) -> None:
    _, reader_dsn, _ = pg
    reader = SQLReader(url(reader_dsn), max_rows=2)
    # the fourth row divides by zero: a cursor that fetched it (or the whole result) would fail
    result = await reader.query("SELECT 12 / (4 - g) AS q FROM generate_series(1, 1000000) g;")
    assert "q\n4\n6\n" in result.text and "only the first 2 rows" in result.text


async def test_postgres_cells_are_cut_on_the_server(pg: tuple[str, str, str]) -> None:
    from toolweave.builtins._sql_postgres import PostgresReader
    from toolweave.builtins.sql import MAX_CELL_CHARS

    _, reader_dsn, _ = pg
    reader = PostgresReader(url(reader_dsn), 5.0)
    columns, rows, more = await reader.query(
        "SELECT repeat('x', 1000000) AS big, repeat('北京', 300000) AS cjk, NULL AS n", 5
    )
    assert columns == ["big", "cjk", "n"] and not more
    assert rows == [("x" * (MAX_CELL_CHARS + 1), "北京" * 100 + "北", None)]


async def test_database_error_text_is_wrapped_as_data(
    sqlite_db: Path, pg: tuple[str, str, str]
) -> None:
    from tests.builtins.test_http_bounds import INJECTED, only_the_wrapper_closes

    query, _ = sql_tools(f"sqlite:///{sqlite_db}")
    with pytest.raises(ExecutionFailed) as failed:  # the refusal quotes the table name
        await query(query=f'SELECT * FROM "{INJECTED}"')
    assert only_the_wrapper_closes(failed.value.message)
    _, reader_dsn, schema = pg
    pg_query, _ = sql_tools(url(reader_dsn))
    with pytest.raises(ExecutionFailed) as refused:  # Postgres quotes the row's value
        await pg_query(query=f"SELECT CAST(name AS int) FROM {schema}.accounts")
    assert 'tool="sql_query"' in refused.value.message and '"alice"' in refused.value.message
    assert refused.value.message.count("</tool_output>") == 1
