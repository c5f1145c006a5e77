"""A Claude Code settings file, pasted unchanged, decides toolweave's calls as Claude Code would.

The fixture `fixtures/claude_settings.json` has the shapes real settings files use: legacy
`:*` prefixes, wrapper rules, quoted exact rules, an escaped backtick, `Read`/`Edit` path rules
with `~/` and `./` anchors, `WebFetch(domain:...)` and `mcp__server__tool` names.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from toolweave.builtins import filesystem_tools, shell_tool
from toolweave.governance import CallBlocked, GateContext, Governance, Rules
from toolweave.tools import ToolContext, tool
from toolweave.tools.claude_names import claude_code_name, rule_names

FIXTURE = Path(__file__).parent / "fixtures" / "claude_settings.json"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("PRIVATE KEY")
    monkeypatch.setenv("HOME", str(home))
    root = tmp_path / "项目"
    (root / ".claude").mkdir(parents=True)
    (root / "src").mkdir()
    (root / "secrets").mkdir()
    shutil.copy(FIXTURE, root / ".claude" / "settings.json")
    return root


def settings(project: Path) -> Rules:
    return Rules.from_settings(project / ".claude" / "settings.json", cwd=project)


def shell(rules: Rules, command: str) -> str:
    return rules.decide("bash", {"command": command})


def test_builtin_tools_have_their_claude_code_names() -> None:
    assert claude_code_name("bash") == "Bash" and claude_code_name("read_file") == "Read"
    assert claude_code_name("fetch") == "WebFetch" and claude_code_name("todo_write") == "TodoWrite"
    assert claude_code_name("sql_query") == "sql_query"  # no Claude Code counterpart
    assert set(rule_names("search_files")) >= {"Grep", "Glob", "Read", "search_files"}
    assert set(rule_names("write_file")) >= {"Write", "Edit"} and "Edit" in rule_names("edit_file")
    assert "Write" not in rule_names("edit_file")  # a Write rule does not cover Edit


def test_seed_names_of_the_skill_tools_are_understood_in_rules_and_grants(
    project: Path,
) -> None:
    """A HelloAgents-style skill lists `load_skill_resource` and `query_skill_data` in its
    `allowed-tools`; they name toolweave's `skill_resource` and `skill_data`."""
    from toolweave.governance.grants import preapproved

    assert "load_skill_resource" in rule_names("skill_resource")
    assert "query_skill_data" in rule_names("skill_data")
    rules = Rules(deny=["query_skill_data"], ask=["load_skill_resource"], cwd=project)
    assert rules.decide("skill_data", {"name": "x", "file": "d.csv"}) == "deny"
    assert rules.decide("skill_resource", {"name": "x", "path": "a.md"}) == "ask"
    grant = preapproved([("skill 'seed' (allowed-tools)", ["load_skill_resource"])], str(project))
    assert grant is not None
    assert grant.decide("skill_resource", {"name": "x", "path": "a.md"}) == "allow"
    assert grant.decide("skill_data", {"name": "x", "file": "d.csv"}) != "allow"


def test_read_deny_protects_read_file_and_the_whole_reading_family(project: Path) -> None:
    rules = settings(project)
    key = str(Path.home() / ".ssh" / "id_ed25519")
    for name in ("read_file", "search_files", "list_dir", "file_info"):
        assert rules.decide(name, {"path": key}) == "deny", name
    explanation = rules.explain("read_file", {"path": "~/.ssh/id_ed25519"})
    assert explanation.rule is not None and explanation.rule.text == "Read(~/.ssh/**)"
    assert explanation.tool == "Read"


def test_dot_slash_paths_are_relative_to_the_cwd_only(project: Path) -> None:
    rules = settings(project)
    assert rules.decide("read_file", {"path": str(project / ".env")}) == "deny"
    assert rules.decide("read_file", {"path": str(project / "src" / ".env")}) == "allow"


def test_edit_rules_reach_every_editing_tool(project: Path) -> None:
    rules = settings(project)
    target = str(project / "secrets" / "token.txt")
    assert rules.decide("write_file", {"path": target, "content": "x"}) == "deny"
    assert rules.decide("edit_file", {"path": target, "old_text": "a", "new_text": "b"}) == "deny"
    assert shell(rules, "echo x > secrets/token.txt") == "deny"  # a redirection is an edit


def test_webfetch_domain_rules_fire_for_fetch(project: Path) -> None:
    rules = settings(project)
    assert rules.decide("fetch", {"url": "https://evil.example/x"}) == "deny"
    assert rules.decide("fetch", {"url": "https://docs.python.org/3/"}) == "allow"


def test_mcp_tools_are_named_mcp_server_tool(project: Path) -> None:
    @tool
    def delete_repo(repo: str) -> str:
        """Delete a repository."""
        return repo

    @tool
    def get_issue(number: int) -> str:
        """Read an issue."""
        return str(number)

    for item, remote in ((delete_repo, "delete_repo"), (get_issue, "get_issue")):
        item.server, item.remote_name = "github", remote  # type: ignore[attr-defined]
    rules = settings(project)
    assert rules.decide("github_delete_repo", {"repo": "x"}, tool=delete_repo) == "deny"
    explanation = rules.explain("github_get_issue", {"number": 1}, tool=get_issue)
    assert explanation.decision == "allow" and explanation.tool == "mcp__github__get_issue"


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("echo hello", "allow"),
        ("git diff --stat", "allow"),
        ("time make", "allow"),  # Bash(time:*) vouches for the line as written
        ("time git log -1", "allow"),
        ("find . -name '*.py' | xargs grep TODO", "ask"),  # find is not allowed
        ("xargs grep TODO < files.txt", "allow"),
        ("grep TODO", "ask"),  # allow `xargs grep` is not allow `grep`
        ('echo "exit=$?"', "allow"),
        ("python3 -c \"import json,sys; print(json.load(sys.stdin)['name'])\"", "allow"),
        ("echo \\`hostname\\`", "allow"),
        ("timeout 30 npm test", "allow"),
        ("sudo shutdown -h now", "deny"),
        ("sudo -u root ls", "deny"),
        ("curl https://x", "deny"),
        ("timeout 5 curl https://x", "deny"),  # unwrapped
        ("env curl https://x", "deny"),
        ("git push origin main", "ask"),
        ("GIT_EXTERNAL_DIFF=./x git diff", "ask"),  # the prefix is part of the command
        ("while ! grep -q ready log.txt; do echo waiting; done", "ask"),
        ("cat script.sh | bash", "ask"),
        ("echo ls | sh", "ask"),
        ("bash <<< 'echo hi'", "ask"),
        ("source <(echo echo hi)", "ask"),
        ("case x in x) echo hi;; esac", "ask"),  # cannot be parsed: asks, never allows
        ("echo hi > /etc/passwd", "ask"),
        ("echo hi > /dev/null", "allow"),
        ("$'\\x63url' https://x", "deny"),  # ANSI-C quoting decoded: curl
    ],
)
def test_shell_commands_decided_as_claude_code_does(
    command: str, expected: str, project: Path
) -> None:
    assert shell(settings(project), command) == expected


def test_the_escaped_backtick_rule_parses_and_what_cannot_be_parsed_asks(project: Path) -> None:
    rules = settings(project)
    explanation = rules.explain("bash", {"command": "echo `hostname"})
    assert explanation.decision == "ask" and "cannot be checked" in explanation.reason


async def test_a_settings_allow_lets_the_builtin_shell_run(project: Path) -> None:
    bash = shell_tool(project)  # no allow list of its own
    gov = Governance(rules=settings(project))
    gate = GateContext(session_id="s")
    args = (await gov.clear("bash", "c1", {"command": "echo hello 你好"}, bash, gate)).args
    result = await bash.execute(args, ToolContext(tool_call_cleared=True))
    assert "exit code 0" in result.text and "hello 你好" in result.text
    with pytest.raises(CallBlocked) as blocked:  # the shell's own deny list still holds
        await gov.clear("bash", "c2", {"command": "echo x; rm -rf src"}, bash, gate)
    assert blocked.value.stage == "rules"


@pytest.mark.parametrize("mode", ["default", "bypassPermissions", "acceptEdits", "dontAsk"])
async def test_sudo_deny_holds_in_every_mode(mode: Any, project: Path) -> None:
    bash = shell_tool(project)
    gate = GateContext(session_id="s", mode=mode)
    with pytest.raises(CallBlocked, match="Bash\\(sudo"):
        await Governance(rules=settings(project)).clear(
            "bash", "c", {"command": "sudo shutdown -h now"}, bash, gate
        )


async def test_read_file_tool_is_refused_through_governance(project: Path) -> None:
    reader = {t.name: t for t in filesystem_tools(str(Path.home()))}["read_file"]
    key = str(Path.home() / ".ssh" / "id_ed25519")
    with pytest.raises(CallBlocked, match=r"Read\(~/.ssh/\*\*\)"):
        await Governance(rules=settings(project)).clear(
            "read_file", "c", {"path": key}, reader, GateContext(session_id="s")
        )


def test_path_rules_meet_the_file_the_jailed_tool_opens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    jail = tmp_path / "jail"
    jail.mkdir()
    (jail / "secret.txt").write_text("s3cret")
    (jail / "alias.txt").symlink_to(jail / "secret.txt")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # the process's cwd is not the jail
    reader = {t.name: t for t in filesystem_tools(str(jail))}["read_file"]
    rules = Rules(deny=[f"Read(/{jail}/secret.txt)"])
    for path in ("secret.txt", "alias.txt", str(jail / "secret.txt")):
        assert rules.decide("read_file", {"path": path}, tool=reader) == "deny", path
    assert rules.decide("read_file", {"path": "other.txt"}, tool=reader) == "allow"


def test_an_allowed_builtin_evaluating_a_subscript_still_asks() -> None:
    rules = Rules(allow=["Bash(printf *)", "Bash(test *)"])
    assert rules.decide("bash", {"command": "printf -v 'a[$(touch /tmp/x)]' 1"}) == "ask"
    assert rules.decide("bash", {"command": "test -v 'a[`id`]'"}) == "ask"
    assert rules.decide("bash", {"command": "printf '%s' hi"}) == "allow"


def test_anchored_path_patterns_name_one_place(tmp_path: Path) -> None:
    project = tmp_path / "p"
    (project / "src" / "tmp").mkdir(parents=True)
    rules = Rules(allow=[f"Read(/{tmp_path}/p/tmp)", "Read(./notes)"], default="deny", cwd=project)
    nested = str(project / "src" / "tmp" / "x")
    assert rules.explain("read_file", {"path": nested}).rule is None  # not //.../p/tmp
    assert rules.explain("read_file", {"path": str(project / "src" / "notes")}).rule is None
    assert rules.explain("read_file", {"path": str(project / "notes" / "a.md")}).rule is not None
    bare = Rules(deny=["Read(.env)"], cwd=project)
    assert bare.decide("read_file", {"path": str(project / "src" / ".env")}) == "deny"
