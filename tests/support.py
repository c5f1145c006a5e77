"""Shared by the orchestration tests: every store runs once on SQLite and once on Postgres."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest


def postgres_schema_dsn(dsn: str) -> str:
    """A DSN whose search_path is a fresh schema, so parallel tests never share tables."""
    import psycopg
    from psycopg.conninfo import make_conninfo

    schema = f"tw_orch_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    return make_conninfo(dsn, options=f"-c search_path={schema}")


@pytest.fixture(params=["sqlite", "postgres"])
def store_args(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[dict[str, Any]]:
    """Keyword arguments that open a store on SQLite (a file) or on the real Postgres server."""
    if request.param == "sqlite":
        yield {"path": tmp_path / "orch.db"}
    else:
        dsn = request.getfixturevalue("postgres_dsn")
        yield {"dsn": postgres_schema_dsn(dsn)}
