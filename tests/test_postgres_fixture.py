"""The shared Postgres fixture gives a server that answers queries."""

from __future__ import annotations

import subprocess


def test_postgres_fixture_answers(postgres_dsn: str) -> None:
    out = subprocess.run(
        ["psql", postgres_dsn, "-tAc", "select 40 + 2"], check=True, capture_output=True, text=True
    )
    assert out.stdout.strip() == "42"
