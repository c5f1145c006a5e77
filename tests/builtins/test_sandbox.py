"""The OS sandbox under `bash`, with real bubblewrap and real processes.

Each attack runs with an allow-everything rule, an empty deny list and approval given, so only
the sandbox stands between it and the host: the sentinel outside the workspace is never
created and the outside victim file is never changed. Each attack is also run with the sandbox
off, where it does its harm, so every row is a real attack and not a typo.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.builtins.processes import (
    announcing_sleeper,
    gone,
    marker,
    pidfd_of,
    pidfd_unless_ended,
)
from toolweave.builtins import shell_tool
from toolweave.tools import ApprovalRequired, Tool, ToolContext
from toolweave.tools import sandbox as sandbox_module
from toolweave.tools.errors import SandboxUnavailable
from toolweave.tools.sandbox import Sandbox, sandbox_problem

SRC = str(Path(__file__).resolve().parents[2] / "src")


@dataclass(frozen=True)
class Places:
    workspace: Path
    outside: Path  # on the read-only host filesystem, not under the private /tmp

    @property
    def sentinel(self) -> Path:
        return self.outside / "pwned"

    @property
    def victim(self) -> Path:
        return self.outside / "victim.txt"


@pytest.fixture
def places(tmp_path: Path) -> Iterator[Places]:
    workspace = tmp_path / "工作区"
    workspace.mkdir()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], cwd=workspace, check=True)
    (workspace / "a.txt").write_text("one\n")
    subprocess.run([*git, "add", "a.txt"], cwd=workspace, check=True)
    subprocess.run([*git, "commit", "-qm", "first"], cwd=workspace, check=True)
    (workspace / "a.txt").write_text("two\n")
    outside = Path(tempfile.mkdtemp(prefix="toolweave-outside-", dir="/var/tmp"))
    (outside / "victim.txt").write_text("unchanged")
    try:
        yield Places(workspace, outside)
    finally:
        shutil.rmtree(outside)


def attacks(s: str, v: str, outside: str) -> list[str]:
    """The review's rows; `s` is the sentinel to create, `v` the victim to delete or change."""
    run_s = f"touch {s}"
    value = f"GIT_CONFIG_VALUE_0='{run_s};:'"
    return [
        f"GIT_EXTERNAL_DIFF='{run_s};:' git diff",
        f"GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=diff.external {value} git diff",
        f"GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor {value} git status",
        f"git diff --output={s}",
        f"echo {s} | xargs --process-slot-var ls touch",
        f"cd {outside} && echo pwned > 5 && mv 5 {s}",
        f"echo pwned > {s}",
        f"echo pwned >> {v}",
        f"echo pwned 2> {s} 1>&2",
        f"echo pwned &> {s}",
        f"printf -v 'a[$({run_s})]' x",
        f"test -v 'a[$({run_s})]'",
        f"setsid -w {run_s}",
        f"flock {s}.lock rm {v}",
        f"chrt -o 0 {run_s}",
        f"taskset -c 0 {run_s}",
        f"script -qc '{run_s}' /dev/null",
        f"bash <<< '{run_s}'",
        f"echo '{run_s}' | bash",
        f"source <(echo '{run_s}')",
        f"find {outside} -name victim.txt -delete",
        f'perl -e \'open(my $f, ">", "{s}")\'',
        f'python3 -c \'open("{s}", "w")\'',
        f"git -c alias.x='!rm {v}' x",
        f"$'\\x72m' {v}",
    ]


ROWS = attacks("{s}", "{v}", "{outside}")


def run_bash(places: Places, command: str, **options: object) -> Tool:
    return shell_tool(places.workspace, deny=[], allow=[r".*"], **options)  # type: ignore[arg-type]


def approved() -> ToolContext:
    return ToolContext(tool_call_approved=True)


def exists(path: str) -> bool:
    return os.path.exists(path)


def harmed(places: Places) -> bool:
    victim = places.victim
    return places.sentinel.exists() or not victim.exists() or victim.read_text() != "unchanged"


@pytest.mark.parametrize("row", range(len(ROWS)), ids=ROWS)
async def test_the_sandbox_stops_what_a_pattern_cannot(row: int, places: Places) -> None:
    command = attacks(str(places.sentinel), str(places.victim), str(places.outside))[row]
    result = await run_bash(places, command).execute({"command": command}, approved())
    assert not harmed(places), result.text
    unsandboxed = run_bash(places, command, sandbox="off")
    await unsandboxed.execute({"command": command}, approved())
    assert harmed(places), f"the attack did no harm even unsandboxed: {command}"


async def test_the_workspace_and_private_tmp_are_writable(places: Places) -> None:
    tool, name = run_bash(places, ""), f"toolweave-{marker()}"
    result = await tool.execute(
        {"command": f"echo 你好 > 笔记.md && echo t > /tmp/{name} && cat /tmp/{name} 笔记.md"},
        approved(),
    )
    assert "exit code 0" in result.text and "你好" in result.text, result.text
    assert (places.workspace / "笔记.md").read_text() == "你好\n"
    assert not exists(f"/tmp/{name}")  # the private /tmp went away with the call


async def test_git_hooks_and_config_stay_read_only(places: Places) -> None:
    """Git runs them later, outside the sandbox: writing them would escape it. The whole `.git`
    is read-only now (round two, item 1), so `git add` fails too; reading works."""
    hook = places.workspace / ".git" / "hooks" / "post-commit"
    config = (places.workspace / ".git" / "config").read_text()
    command = (
        f"echo 'touch {places.sentinel}' > {hook}; git config core.pager 'touch x'; git add a.txt"
    )
    result = await run_bash(places, "").execute({"command": command}, approved())
    assert not hook.exists() and (places.workspace / ".git" / "config").read_text() == config
    assert "Read-only file system" in result.text
    changed = await run_bash(places, "").execute({"command": "git diff --stat"}, approved())
    assert "a.txt" in changed.text  # reading the repository works as usual


async def test_no_network_unless_allowed(places: Places) -> None:
    connected = asyncio.Event()

    async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connected.set()
        writer.close()

    server = await asyncio.start_server(accept, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    command = f"echo hi > /dev/tcp/127.0.0.1/{port}"
    async with server:
        closed = await run_bash(places, "").execute({"command": command}, approved())
        assert closed.is_error and not connected.is_set()
        opened = await run_bash(places, "", network=True).execute({"command": command}, approved())
        assert "exit code 0" in opened.text
        await asyncio.wait_for(connected.wait(), 30)


async def test_host_unix_sockets_are_out_of_reach(places: Places) -> None:
    """A read-only mount does not stop connect() to a socket file: the seccomp filter does."""
    connected = asyncio.Event()

    async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connected.set()
        writer.close()

    path = places.outside / "service.sock"
    connect = f"import socket; socket.socket(socket.AF_UNIX).connect({str(path)!r})"
    command = {"command": f'python3 -c "{connect}"'}
    server = await asyncio.start_unix_server(accept, str(path))
    async with server:
        refused = await run_bash(places, "").execute(command, approved())
        assert refused.is_error and "PermissionError" in refused.text and not connected.is_set()
        reached = await run_bash(places, "", sandbox="off").execute(command, approved())
        assert "exit code 0" in reached.text
        await asyncio.wait_for(connected.wait(), 30)  # the server saw it (its task may lag)


async def test_a_new_session_in_the_background_dies_with_the_call(places: Places) -> None:
    duration, fifo, go = marker(), places.workspace / "ready.fifo", places.workspace / "go.fifo"
    os.mkfifo(fifo)
    os.mkfifo(go)
    watcher = asyncio.create_task(asyncio.to_thread(_announced, fifo, duration, go))
    sleeper = announcing_sleeper(duration, fifo, quiet=True)
    result = await run_bash(places, "").execute(
        {"command": f"{sleeper} read _ < {go}; echo started"},
        approved(),
    )
    assert "exit code 0" in result.text and "started" in result.text
    assert gone(await watcher)


async def test_a_timeout_kills_a_new_session_holding_the_output(places: Places) -> None:
    duration, fifo = marker(), places.workspace / "ready.fifo"
    os.mkfifo(fifo)
    watcher = asyncio.create_task(asyncio.to_thread(_announced, fifo, duration))
    call = run_bash(places, "", timeout=3).execute(
        {"command": f"{announcing_sleeper(duration, fifo)} wait"}, approved()
    )
    result = await asyncio.wait_for(call, 60)  # unsandboxed, it holds the pipe for minutes
    assert result.is_error and "killed after 3 s (timeout)" in result.text
    assert gone(await watcher)


def _announced(fifo: Path, duration: str, go: Path | None = None) -> int | None:
    """The pidfd of the announced sleeper; then, when `go` is given, let the command go on.
    Without `go` nothing holds the command back, so its timeout may already have killed the
    sleeper when this looks (None: gone, as `pidfd_unless_ended` says)."""
    assert fifo.read_text().strip() == "ready"
    fd = pidfd_of(duration) if go is not None else pidfd_unless_ended(duration)
    if go is not None:
        go.write_text("go\n")
    return fd


async def test_sandbox_off_asks_for_every_command(places: Places) -> None:
    tool = run_bash(places, "", sandbox="off")
    with pytest.raises(ApprovalRequired, match='sandbox = "off"'):
        await tool.execute({"command": "echo hi"}, ToolContext())


async def test_no_sandbox_means_refusal_with_the_fix(
    places: Places, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = (str(places.workspace / "bwrap"),)  # bwrap is never looked up through PATH
    monkeypatch.setattr(sandbox_module, "BWRAP_PATHS", missing)
    with pytest.raises(SandboxUnavailable, match=r"bwrap .* not installed.*apt-get install"):
        await run_bash(places, "").execute({"command": "echo hi"}, ToolContext())
    assert "not installed" in await sandbox_problem()
    with pytest.raises(ValueError, match='sandbox must be "on" or "off"'):
        Sandbox(mode="maybe")  # type: ignore[arg-type]


async def test_refused_user_namespaces_are_reported(places: Places) -> None:
    """Inside a sandbox that forbids user namespaces, no sandbox can be made: the real refusal."""
    probe = "import asyncio; from toolweave.tools.sandbox import sandbox_problem as p; "
    probe += "print(asyncio.run(p()))"
    inner = Sandbox(readable=(SRC,)).wrap(  # the checkout may live under /tmp
        [sys.executable, "-c", probe], "/", shutil.which("bwrap") or "bwrap"
    )
    process = await asyncio.create_subprocess_exec(
        *inner,
        env={"PATH": os.environ["PATH"], "PYTHONPATH": SRC},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    said = (await process.communicate())[0].decode()
    assert "bwrap cannot make a sandbox here" in said and "apt-get install bubblewrap" in said, said
