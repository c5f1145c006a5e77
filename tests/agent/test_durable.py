"""Crash-safe runs on DBOS: a run SIGKILLed after two of four tool calls is recovered by another
process and runs only the last two (`toolweave.agent.durable`, on SQLite and on Postgres)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from tests.agent.durable_run import CALLS, count
from toolweave import MissingDependency

ROOT = Path(__file__).parents[2]


def harness(command: str, folder: Path, database: str, workflow_id: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "tests.agent.durable_run",
        command,
        str(folder),
        database,
        workflow_id,
    ]


@pytest.fixture(params=["sqlite", "postgres"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where DBOS keeps the workflows: a SQLite file, or a fresh database on the test server."""
    if request.param == "sqlite":
        return str(tmp_path / "dbos.sqlite")
    import psycopg
    from psycopg.conninfo import conninfo_to_dict

    dsn = request.getfixturevalue("postgres_dsn")
    name = f"tw_durable_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    parts = conninfo_to_dict(dsn)
    user = parts.get("user", "postgres")
    if parts.get("password"):
        user = f"{user}:{parts['password']}"
    return f"postgresql://{user}@{parts['host']}:{parts['port']}/{name}"


def test_a_run_killed_after_two_of_four_tool_calls_runs_only_the_last_two(
    tmp_path: Path, database: str
) -> None:
    workflow_id = f"job-{uuid.uuid4().hex[:8]}"
    first = subprocess.Popen(
        harness("first", tmp_path, database, workflow_id),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert first.stdout is not None
    for line in first.stdout:  # the model's third call announces itself, then blocks
        if line.strip() == "two-done":
            break
    else:
        pytest.fail(f"the first life ended early: {first.communicate()[1][-3000:]}")
    os.kill(first.pid, signal.SIGKILL)
    first.communicate()
    assert first.returncode == -signal.SIGKILL
    before = [count(tmp_path, f"work-{n}") for n in range(1, CALLS + 1)]
    assert before == [1, 1, 0, 0] and count(tmp_path, "model") == 3
    second = subprocess.run(
        harness("recover", tmp_path, database, workflow_id),
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert second.returncode == 0, second.stderr[-3000:]
    outcome = json.loads(second.stdout.strip().splitlines()[-1])
    assert outcome == {"output": f"all {CALLS} steps done", "turns": CALLS + 1}
    after = [count(tmp_path, f"work-{n}") for n in range(1, CALLS + 1)]
    assert after == [1, 1, 1, 1]  # each tool call ran once, across both lives
    # The killed model call (the third) ran again; the two recorded ones did not.
    assert count(tmp_path, "model") == 3 + (CALLS + 1 - 2)


def test_import_toolweave_does_not_import_dbos() -> None:
    code = (
        "import sys, toolweave, toolweave.agent\n"
        "from toolweave.agent import Agent, RunState\n"
        "print('dbos' in sys.modules)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert proc.stdout.strip() == "False", proc.stderr


def test_without_the_extra_the_error_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "dbos", None)
    monkeypatch.delitem(sys.modules, "toolweave.agent.durable", raising=False)
    with pytest.raises(MissingDependency, match=r"pip install 'toolweave\[durable\]'"):
        import toolweave.agent.durable  # noqa: F401


def test_a_durable_run_paused_for_approval_is_answered_in_another_process(
    tmp_path: Path, database: str
) -> None:
    workflow_id = f"ship-{uuid.uuid4().hex[:8]}"

    def step(*args: str) -> str:
        proc = subprocess.run(
            harness(args[0], tmp_path, database, workflow_id) + list(args[1:]),
            capture_output=True,
            text=True,
            timeout=120,
            cwd=ROOT,
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        return proc.stdout.strip().splitlines()[-1]

    assert json.loads(step("pause"))[0].startswith('deploy({"target": "prod"}) needs approval')
    assert (count(tmp_path, "read_note"), count(tmp_path, "deploy")) == (1, 0)
    outcome = json.loads(step("answer", "yes"))  # the RunPaused DBOS stored, read back
    assert "deployed to prod" in outcome["output"] and outcome["turns"] == 2
    assert (count(tmp_path, "read_note"), count(tmp_path, "deploy")) == (1, 1)
