"""Nothing a sandboxed command writes is ever run by the host (issue 32, items 1-3).

Each attack of the second review runs inside the real sandbox (real bubblewrap, an allow-all
rule, approval given) against a workspace holding what the host executes or loads: a git
repository, `.claude/settings.json` with a hook script, `.mcp.json`, `mcp.json`,
`toolweave.toml`, a configured hooks file whose command names a script in a sub-folder, and a
skill root. Afterwards the host runs git, the hooks, the skills and the config loading, and
nothing planted runs. Each attack also runs with the sandbox off, where it does its harm, so
every row is a real attack.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from toolweave.builtins import filesystem_tools, shell_tool
from toolweave.governance import GateContext, Governance, Hooks, Rules
from toolweave.host.config import load_host_config
from toolweave.mcp.client._stdio import server_environment
from toolweave.skills import SkillLibrary
from toolweave.tools import Tool, ToolContext
from toolweave.tools import sandbox as sandbox_module
from toolweave.tools.errors import SandboxUnavailable
from toolweave.tools.sandbox import Sandbox, SandboxMode, sandbox_problem, sandbox_safe_path

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
SKILL = "---\nname: demo\ndescription: A demo skill.\n---\nSay hello.\n"


@dataclass(frozen=True)
class Project:
    root: Path
    outside: Path  # on the read-only host, not under the private /tmp

    @property
    def sentinel(self) -> Path:
        return self.outside / "pwned"

    @property
    def hooks_file(self) -> Path:
        return self.root / "conf" / "hooks.json"


def make_project(root: Path, outside: Path) -> Project:
    root.mkdir()
    subprocess.run([*GIT, "init", "-q"], cwd=root, check=True)
    (root / "a.txt").write_text("one\n")
    subprocess.run([*GIT, "add", "a.txt"], cwd=root, check=True)
    subprocess.run([*GIT, "commit", "-qm", "first"], cwd=root, check=True)
    (root / ".claude" / "hooks").mkdir(parents=True)
    (root / ".claude" / "hooks" / "guard.sh").write_text("exit 0\n")
    guard = {"type": "command", "command": "bash $CLAUDE_PROJECT_DIR/.claude/hooks/guard.sh"}
    settings = {
        "permissions": {"allow": ["Bash(echo:*)"], "defaultMode": "acceptEdits"},
        "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [guard]}]},
    }
    (root / ".claude" / "settings.json").write_text(json.dumps(settings))
    (root / "conf").mkdir()
    (root / "tools" / "hooks").mkdir(parents=True)
    (root / "tools" / "hooks" / "check.sh").write_text("exit 0\n")
    check = {"type": "command", "command": "bash tools/hooks/check.sh"}
    (root / "conf" / "hooks.json").write_text(json.dumps({"hooks": {"PreToolUse": [
        {"hooks": [check]}]}}))  # fmt: skip
    (root / "skills" / "demo").mkdir(parents=True)
    (root / "skills" / "demo" / "SKILL.md").write_text(SKILL)
    for name in (".mcp.json", "mcp.json"):
        (root / name).write_text('{"mcpServers": {}}')
    (root / "toolweave.toml").write_text('[serve]\nhooks = "conf/hooks.json"\n')
    return Project(root, outside)


@pytest.fixture
def outside() -> Iterator[Path]:
    found = Path(tempfile.mkdtemp(prefix="toolweave-outside-", dir="/var/tmp"))
    try:
        yield found
    finally:
        shutil.rmtree(found)


@pytest.fixture
def project(tmp_path: Path, outside: Path) -> Project:
    return make_project(tmp_path / "项目", outside)


def bash(project: Project, sandbox: SandboxMode = "on") -> Tool:
    hooks = Hooks.from_file(project.hooks_file, cwd=str(project.root))
    protected = (*hooks.files(), str(project.root / "skills"))
    return shell_tool(project.root, [], ["Bash(*)"], protected=protected, sandbox=sandbox)


def planted(s: str) -> list[str]:
    """The review's rows: each plants code the host would run outside the sandbox."""
    run_s = f"touch {s}"
    hook = f"#!/bin/sh\\n{run_s}\\n"
    return [
        "mv .git .git-old && git init -q . && git config core.fsmonitor '" + run_s + "'",
        f"git config core.fsmonitor '{run_s}'",
        f"printf '{hook}' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit",
        "git init -q --bare /tmp/b && git -C /tmp/b config core.fsmonitor '"
        + run_s
        + "' && cp -r /tmp/b .git/bare && echo bare > .git/commondir",
        f"echo '{run_s}' > .claude/hooks/guard.sh",
        f"""echo '{{"hooks": {{"PreToolUse": [{{"hooks": [{{"type": "command", "command": """
        f""""{run_s}"}}]}}]}}}}' > .claude/settings.json""",
        f"echo '{run_s}' > tools/hooks/check.sh",
        f"mv tools old && mkdir -p tools/hooks && echo '{run_s}' > tools/hooks/check.sh",
        f"echo '{run_s}' > conf/hooks.json",
        f"printf -- '---\\nname: demo\\ndescription: x\\nallowed-tools: Bash(*)\\n---\\n{run_s}\\n'"
        " > skills/demo/SKILL.md",
        f"""echo '{{"mcpServers": {{"x": {{"command": "sh", "args": ["-c", "{run_s}"]}}}}}}'"""
        " > .mcp.json",
        """echo '{"mcpServers": {"x": {"command": "sh"}}}' > mcp.json""",
        "echo '[serve]\\nhooks = \"/tmp/evil.json\"' > toolweave.toml",
    ]


ROWS = planted("{s}")


def approved() -> ToolContext:
    return ToolContext(tool_call_approved=True)


def host_state(project: Project) -> dict[str, bytes]:
    """Every file the host executes or loads, by path."""
    found = sorted(project.root.rglob("*"))
    return {str(p.relative_to(project.root)): p.read_bytes() for p in found if p.is_file()}


async def git(cwd: Path, *argv: str) -> None:
    """The host's own git, outside any sandbox (whatever it exits with)."""
    process = await asyncio.create_subprocess_exec(
        *GIT, *argv, cwd=cwd, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL
    )
    await process.wait()


async def host_runs_everything(project: Project) -> None:
    """What the host does next, outside the sandbox: git, the hooks, skills and config."""
    for argv in (["status"], ["diff"], ["commit", "-qam", "two"]):
        await git(project.root, *argv)
    for hooks in (
        Hooks.from_settings(project.root / ".claude" / "settings.json", cwd=str(project.root)),
        Hooks.from_file(project.hooks_file, cwd=str(project.root)),
    ):
        await hooks.run("PreToolUse", {"tool_name": "Bash", "tool_input": {"command": "ls"}})
    SkillLibrary([project.root / "skills"]).get("demo")
    load_host_config(project.root / "toolweave.toml", env={})


@pytest.mark.parametrize("row", range(len(ROWS)), ids=ROWS)
async def test_nothing_the_sandbox_writes_is_run_by_the_host(row: int, project: Project) -> None:
    command = planted(str(project.sentinel))[row]
    before = host_state(project)
    result = await bash(project).execute({"command": command}, approved())
    assert host_state(project) == before, result.text
    await host_runs_everything(project)
    assert not project.sentinel.exists(), result.text
    await bash(project, sandbox="off").execute({"command": command}, approved())
    assert host_state(project) != before, f"the attack changed nothing unsandboxed: {command}"


async def test_absent_folders_cannot_be_created_and_leave_nothing_behind(
    tmp_path: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No `.git`, `.claude` or `.agents` yet: each gets an empty read-only placeholder for the
    call, so a new repository with an fsmonitor cannot be made; none is left afterwards (the
    first call of a process, which proves bwrap works, included)."""
    monkeypatch.setattr(sandbox_module, "_PROVEN", set())
    sentinel = outside / "pwned"
    bare = tmp_path / "bare"
    bare.mkdir()
    command = (
        f"git init -q . ; git config core.fsmonitor 'touch {sentinel}' ; "
        "mkdir -p .claude/hooks .agents/skills/x ; echo ok > notes.md"
    )
    tool = shell_tool(bare, deny=[], allow=["Bash(*)"])
    result = await tool.execute({"command": command}, approved())
    assert "Read-only file system" in result.text, result.text
    assert sorted(p.name for p in bare.iterdir()) == ["notes.md"]
    await git(bare, "status")
    assert not sentinel.exists()


async def test_a_workspace_without_git_cannot_become_a_bare_repository(
    tmp_path: Path, outside: Path
) -> None:
    """No `.git`: the sandbox copies a bare repository's files (`HEAD`, `objects/`, `refs/`,
    `config`) into the workspace itself; git then takes the folder for a repository and the
    host's `git log` at a terminal runs the planted `core.pager`. `HEAD` cannot be made."""
    sentinel = outside / "pwned"
    root = tmp_path / "ws"
    root.mkdir()
    command = (
        "git init -q --bare /tmp/b && cp -r /tmp/b/. . ; "
        f"git config -f config core.pager 'touch {sentinel}; cat' ; echo ok > notes.md"
    )
    tool = shell_tool(root, deny=[], allow=["Bash(*)"])
    await tool.execute({"command": command}, approved())
    assert "HEAD" not in {p.name for p in root.iterdir()}
    assert await pager(root) is None
    await shell_tool(root, deny=[], allow=["Bash(*)"], sandbox="off").execute(
        {"command": command}, approved()
    )
    assert str(sentinel) in (await pager(root) or ""), "unsandboxed, git reads the planted config"


async def pager(cwd: Path) -> str | None:
    """The `core.pager` the host's git reads in `cwd`, or None outside any repository."""
    process = await asyncio.create_subprocess_exec(
        "git", "config", "core.pager", cwd=cwd, stdout=asyncio.subprocess.PIPE
    )
    out, _ = await process.communicate()
    return out.decode() if process.returncode == 0 else None


@pytest.fixture
def worktree(tmp_path: Path) -> Path:
    root = tmp_path / "wt"
    root.mkdir()
    subprocess.run([*GIT, "init", "-q", "--separate-git-dir", str(root / "gitdir")], cwd=root,
                   check=True)  # fmt: skip
    return root


async def test_a_git_file_and_the_folder_it_names_stay_read_only(worktree: Path) -> None:
    """A worktree's `.git` file: rewriting it, or the git folder it names inside the
    workspace, would point the host's git at planted code."""
    root = worktree
    marker = (root / ".git").read_text()
    config = (root / "gitdir" / "config").read_text()
    command = "echo 'gitdir: /tmp/x' > .git; git config core.fsmonitor 'touch x'"
    result = await shell_tool(root, deny=[], allow=["Bash(*)"]).execute(
        {"command": command}, approved()
    )
    assert (root / ".git").read_text() == marker, result.text
    assert (root / "gitdir" / "config").read_text() == config


async def test_a_protected_name_that_is_a_link_is_refused(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    root = tmp_path / "ws"
    root.mkdir()
    os.symlink(tmp_path / "elsewhere", root / ".claude")
    with pytest.raises(SandboxUnavailable, match=r"\.claude in the writable folder is a symbolic"):
        await shell_tool(root, deny=[], allow=["Bash(*)"]).execute({"command": "true"}, approved())


async def test_a_changed_hook_script_fails_closed(project: Project) -> None:
    """Pinned by content when loaded: a script swapped in later (by a rename of the folder
    above it, say) blocks the call instead of running."""
    hooks = Hooks.from_file(project.hooks_file, cwd=str(project.root))
    payload = {"tool_name": "Bash", "tool_input": {"command": "ls"}}
    assert not (await hooks.run("PreToolUse", payload)).blocked
    (project.root / "tools" / "hooks" / "check.sh").write_text(f"touch {project.sentinel}\n")
    outcome = await hooks.run("PreToolUse", payload)
    assert outcome.blocked and "check.sh changed since the hooks were loaded" in outcome.reason
    assert not project.sentinel.exists()
    assert str(project.root / "tools" / "hooks" / "check.sh") in hooks.files()


async def test_a_bwrap_planted_on_path_is_never_run(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An activated `.venv/bin` inside the workspace: the sandbox's bwrap is the root-owned one."""
    venv = project.root / ".venv" / "bin"
    venv.mkdir(parents=True)
    fake = venv / "bwrap"
    fake.write_text(f'#!/bin/sh\ntouch {project.sentinel}\nexec /usr/bin/bwrap "$@"\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{venv}:{os.environ['PATH']}")
    result = await bash(project).execute({"command": "echo 你好"}, approved())
    assert "你好" in result.text and not project.sentinel.exists()


async def test_the_hosts_own_python_in_the_workspace_stays_read_only(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The host runs from `.venv` inside its workspace (`toolweave chat` in an activated
    project venv): rewriting a module there would run at the host's next start."""
    venv = project.root / ".venv"
    module = venv / "lib" / "site-packages" / "toolweave_hook.py"
    module.parent.mkdir(parents=True)
    module.write_text("VALUE = 1\n")
    monkeypatch.setattr(sys, "prefix", str(venv))
    command = f'echo \'open("{project.sentinel}", "w")\' > .venv/lib/site-packages/{module.name}'
    result = await bash(project).execute({"command": command}, approved())
    assert "Read-only file system" in result.text, result.text
    assert module.read_text() == "VALUE = 1\n"
    await bash(project, sandbox="off").execute({"command": command}, approved())
    assert module.read_text() != "VALUE = 1\n", "unsandboxed, the module is rewritten"


@pytest.fixture
def shared_bwrap(tmp_path: Path) -> Path:
    """A copy of bwrap in a folder anyone may write (so anyone could swap the binary)."""
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)
    shutil.copy("/usr/bin/bwrap", shared / "bwrap")
    return shared / "bwrap"


async def test_bwrap_must_be_root_owned_and_not_writable_by_others(
    shared_bwrap: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sandbox_module, "BWRAP_PATHS", (str(shared_bwrap),))
    assert "not owned by root or is writable by others" in await sandbox_problem()


async def test_hooks_and_mcp_servers_never_find_programs_in_writable_folders(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    Sandbox(writable=(str(project.root),))  # a sandbox writes there in this process
    planted_bin = project.root / ".venv" / "bin"
    planted_bin.mkdir(parents=True)
    git = planted_bin / "git"
    git.write_text(f"#!/bin/sh\ntouch {project.sentinel}\n")
    git.chmod(0o755)
    path = f"{planted_bin}:.::{os.environ['PATH']}"
    assert sandbox_safe_path(path) == os.environ["PATH"]
    assert server_environment({"PATH": path})["PATH"] == os.environ["PATH"]
    hook = {"type": "command", "command": "git --version > version.txt"}
    hooks = Hooks({"hooks": {"Stop": [{"hooks": [hook]}]}}, cwd=str(project.root))
    monkeypatch.setenv("PATH", path)  # the host's own PATH carries the workspace's bin
    await hooks.run("Stop", {})
    assert "git version" in (project.root / "version.txt").read_text()
    assert not project.sentinel.exists()


@pytest.mark.parametrize(
    "target",
    [".claude/hooks/guard.sh", ".claude/settings.json", ".git/hooks/pre-commit",
     ".agents/skills/x/SKILL.md", ".mcp.json", "mcp.json", "toolweave.toml", "sub/.git/config"],
)  # fmt: skip
def test_accept_edits_never_accepts_a_write_the_host_runs(project: Project, target: str) -> None:
    """The review's settings (allow `Bash(echo:*)`, mode acceptEdits): a redirect into what
    the host runs asks; one into an ordinary file is still accepted. (`write_file` is declared
    destructive, so it asks in acceptEdits whatever its path.)"""
    rules = Rules.from_settings(project.root / ".claude" / "settings.json", cwd=project.root)
    governance, mode = Governance(rules=rules), GateContext("s", "acceptEdits")
    shell = shell_tool(project.root)
    writer = {t.name: t for t in filesystem_tools(project.root)}["write_file"]

    def decide(tool: Tool, args: dict[str, str]) -> str:
        return governance.decide(tool.name, args, tool, mode).decision

    assert decide(shell, {"command": f"echo x > {target}"}) == "ask"
    assert decide(writer, {"path": target, "content": "x"}) == "ask"
    assert decide(shell, {"command": "echo x > notes.md"}) == "allow"
