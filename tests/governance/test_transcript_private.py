"""Hook transcripts in a shared TMPDIR (issue 32, item 19).

The review's attack on a multi-user host: another user creates `toolweave-transcripts-<uid>`
first, world-writable, with a link where a session's transcript goes; toolweave used the folder
and followed the link, overwriting the victim. Now the folder is made exclusively: one that
someone else made (or that others may write, or a link) is never used, and a transcript is
never written through a link.
"""

from __future__ import annotations

import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Any

import pytest

from toolweave import Agent
from toolweave.agent.session import Session
from toolweave.builtins import shell_tool
from toolweave.governance import Governance, Hooks
from toolweave.llm import Message, ScriptedModel, ToolCallPart


async def transcript_of_a_run(workspace: Path, session: Session) -> Path:
    seen: list[dict[str, Any]] = []
    hooks = Hooks({})

    @hooks.on("PostToolUse", matcher="Bash")
    async def record(data: dict[str, Any]) -> None:
        seen.append(data)

    model = ScriptedModel(
        [
            Message("assistant", [ToolCallPart("c1", "bash", {"command": "echo 你好"})]),
            Message.assistant("done"),
        ]
    )
    tools = [shell_tool(workspace, allow=["echo *"])]
    await Agent(model, tools, governance=Governance(hooks=hooks)).run("hello 你好", session)
    return Path(seen[0]["transcript_path"])


@pytest.fixture
def shared_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shared = tmp_path / "shared-tmp"
    shared.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(shared))
    return shared


@pytest.mark.parametrize("owner", ["another user", "world-writable"])
async def test_a_folder_made_first_by_someone_else_is_never_used(
    tmp_path: Path, shared_tmp: Path, owner: str
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("unchanged")
    trap = shared_tmp / f"toolweave-transcripts-{os.getuid()}"
    trap.mkdir(mode=0o777)
    trap.chmod(0o777)
    if owner == "another user" and os.getuid() == 0:
        os.chown(trap, 65534, 65534)
    session = Session()
    os.symlink(victim, trap / f"{session.id}.jsonl")
    path = await transcript_of_a_run(tmp_path, session)
    assert victim.read_text() == "unchanged"
    assert path.parent != trap and path.parent.parent == shared_tmp
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert "hello 你好" in path.read_text(encoding="utf-8")


async def test_a_link_in_place_of_the_folder_is_never_followed(
    tmp_path: Path, shared_tmp: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    os.symlink(elsewhere, shared_tmp / f"toolweave-transcripts-{os.getuid()}")
    path = await transcript_of_a_run(tmp_path, Session())
    assert not list(elsewhere.iterdir()) and json.loads(path.read_text().splitlines()[0])
