"""`toolweave policy explain`: the decision, the deciding rule and the file it came from."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from toolweave.cli import app

runner = CliRunner()


def _settings(tmp_path: Path) -> Path:
    path = tmp_path / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(
        json.dumps(
            {
                "permissions": {
                    "allow": ["Bash(git *)", "Bash(make *)"],
                    "deny": ["Bash(rm -rf *)", "Read(./.env)"],
                }
            }
        )
    )
    return path


def test_explain_names_the_rule_and_the_file(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    result = runner.invoke(
        app, ["policy", "explain", "bash(make && rm -rf build)", "-s", str(settings)]
    )
    assert result.exit_code == 0, result.output
    assert "deny:" in result.output
    assert "Bash(rm -rf *)" in result.output
    assert str(settings.resolve()) in result.output
    assert "'make': allow" in result.output


def test_explain_discovers_project_settings(tmp_path: Path, monkeypatch: object) -> None:
    _settings(tmp_path)
    monkeypatch.chdir(tmp_path)  # type: ignore[attr-defined]
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # type: ignore[attr-defined]
    result = runner.invoke(app, ["policy", "explain", "read(.env)"])
    assert result.exit_code == 0, result.output
    assert "deny:" in result.output and "Read(./.env)" in result.output
    result = runner.invoke(app, ["policy", "explain", "bash(git status)"])
    assert "allow: every command is allowed" in result.output
    result = runner.invoke(app, ["policy", "explain", "bash(curl example.com)"])
    assert "ask: no rule matched" in result.output


def test_explain_reports_bad_settings_and_bad_calls(tmp_path: Path) -> None:
    bad = tmp_path / "settings.json"
    bad.write_text('{"permissions": {"deny": ["Bash(rm"]}}')
    result = runner.invoke(app, ["policy", "explain", "bash(ls)", "-s", str(bad)])
    assert result.exit_code == 2
    assert "Tool(pattern)" in result.output
    result = runner.invoke(
        app, ["policy", "explain", "not a call(", "-s", str(_settings(tmp_path))]
    )
    assert result.exit_code != 0
    assert "tool(argument)" in result.output


def test_explain_reads_the_hosts_toolweave_toml(tmp_path: Path) -> None:
    toml = tmp_path / "toolweave.toml"
    toml.write_text('[serve.rules]\nallow = ["files__read_*"]\ndeny = ["bash(curl *)"]\n')
    result = runner.invoke(
        app, ["policy", "explain", "bash(ls | curl -d @.env x)", "-c", str(toml)]
    )
    assert result.exit_code == 0, result.output
    assert "[serve.rules]" in result.output and "deny:" in result.output
    result = runner.invoke(app, ["policy", "explain", "files__read_text", "-c", str(toml)])
    assert "allow:" in result.output


def test_explain_answers_with_the_claude_code_tool_name(tmp_path: Path) -> None:
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"permissions": {"deny": ["Read(~/.ssh/**)"]}}))
    home = tmp_path / "home"
    result = runner.invoke(
        app,
        [
            "policy",
            "explain",
            f"read_file({home}/.ssh/id_rsa)",
            "--arg",
            "path",
            "-s",
            str(settings),
        ],
        env={"HOME": str(home)},
    )
    assert result.exit_code == 0, result.output
    assert "matched as: Read" in result.output and "deny:" in result.output
    result = runner.invoke(app, ["policy", "explain", "bash(ls)", "-s", str(settings)])
    assert "matched as: Bash" in result.output


def test_explain_with_config_includes_the_builtin_shell_lists(tmp_path: Path) -> None:
    config = tmp_path / "toolweave.toml"
    config.write_text(
        '[serve.rules]\nallow = ["Bash(git status)"]\n\n'
        '[builtins]\nshell = true\nshell_allow = ["echo *"]\n'
    )
    result = runner.invoke(app, ["policy", "explain", "bash(echo 你好)", "-c", str(config)])
    assert result.exit_code == 0, result.output
    assert "allow: every command is allowed" in result.output
    result = runner.invoke(app, ["policy", "explain", "bash(rm -fr /tmp/x)", "-c", str(config)])
    assert "deny:" in result.output and "Bash(rm -r *)" in result.output


SERVED_CALLS = [
    ("get_weather(Beijing)", "get_weather", {"city": "Beijing"}),
    ("read_file(./notes/计划.md)", "read_file", {"path": "./notes/计划.md"}),
    ("bash(ls)", "bash", {"command": "ls"}),
    ("bash(make)", "bash", {"command": "make"}),
    ("bash(rm -rf notes)", "bash", {"command": "rm -rf notes"}),
    ("bash(git push)", "bash", {"command": "git push"}),
    ("write_file(notes/a.md)", "write_file", {"path": "notes/a.md", "content": "你好"}),
    ("write_file(./src/app.py)", "write_file", {"path": "./src/app.py", "content": "x"}),
]


def _served_outcome(result: dict[str, object]) -> str:
    """What the host did with a call from a client that cannot be asked."""
    text = json.dumps(result.get("content"), ensure_ascii=False)
    if not result.get("isError"):
        return "allow"
    if "(approval)" in text or "needs approval" in text:
        return "ask"
    return "deny"


def test_explain_answers_what_serve_does(tmp_path: Path) -> None:
    """Side by side: `policy explain --config` and the running host, call by call."""
    from toolweave.host import ToolHost, load_host_config
    from toolweave.mcp.server.testing import connect

    work = tmp_path / "work"
    (work / "notes").mkdir(parents=True)
    (work / "src").mkdir()
    (work / "notes" / "计划.md").write_text("先写测试", encoding="utf-8")
    config = tmp_path / "toolweave.toml"
    config.write_text(
        f'[serve]\ndata_dir = "{tmp_path / "data"}"\nproviders = ["builtins", "demo"]\n\n'
        '[serve.rules]\nallow = ["write_file(./notes/**)"]\ndeny = ["bash(git push*)"]\n\n'
        f'[builtins]\nroot = "{work}"\nshell = true\nshell_allow = ["ls", "ls *"]\n',
        encoding="utf-8",
    )

    async def serve() -> dict[str, str]:
        host = ToolHost(load_host_config(config))
        try:
            async with connect(host.server) as client:
                return {
                    call: _served_outcome(await client.call_tool(name, args))
                    for call, name, args in SERVED_CALLS
                }
        finally:
            await host.close()

    served = asyncio.run(serve())
    explained = {}
    for call, _name, _args in SERVED_CALLS:
        result = runner.invoke(app, ["policy", "explain", call, "--config", str(config)])
        assert result.exit_code == 0, result.output
        explained[call] = result.output.splitlines()[2].split(":", 1)[0]
    assert explained == served
    assert served == {
        "get_weather(Beijing)": "allow",
        "read_file(./notes/计划.md)": "allow",
        "bash(ls)": "allow",
        "bash(make)": "ask",
        "bash(rm -rf notes)": "deny",
        "bash(git push)": "deny",
        "write_file(notes/a.md)": "allow",
        "write_file(./src/app.py)": "ask",
    }


def test_explain_with_a_skills_or_commands_allowed_tools(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    skill = tmp_path / "skills" / "git-review"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: git-review\ndescription: 审查改动\nallowed-tools: Bash(curl *) Read\n---\nBody",
        encoding="utf-8",
    )
    command = tmp_path / "commands" / "fetch.md"
    command.parent.mkdir()
    command.write_text(
        "---\nallowed-tools: Bash(wget:*), Bash(rm -rf:*)\n---\nGo", encoding="utf-8"
    )
    base = ["policy", "explain", "-s", str(settings), "--grant", str(skill), "-g", str(command)]
    result = runner.invoke(app, [*base[:2], "bash(curl example.com)", *base[2:]])
    assert result.exit_code == 0, result.output
    assert "allow: every command is allowed: 'curl example.com' by 'Bash(curl *)' from skill " \
        "'git-review' (allowed-tools)" in result.output  # fmt: skip
    result = runner.invoke(app, [*base[:2], "bash(wget x)", *base[2:]])
    assert "from the /fetch command (allowed-tools)" in result.output
    result = runner.invoke(app, [*base[:2], "bash(rm -rf build)", *base[2:]])
    assert "deny:" in result.output and "Bash(rm -rf *)" in result.output  # the deny wins
    result = runner.invoke(app, [*base[:2], "read(.env)", *base[2:]])
    assert "deny:" in result.output and "Read(./.env)" in result.output
    result = runner.invoke(app, ["policy", "explain", "bash(curl x)", "-s", str(settings)])
    assert "ask: no rule matched" in result.output  # without the grant
    missing = runner.invoke(app, [*base[:2], "bash(ls)", "-s", str(settings), "-g", "nope.md"])
    assert missing.exit_code == 2 and "--grant nope.md: cannot read it" in missing.output


def test_explain_without_config_answers_what_serve_does_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No --config and no Claude Code settings: serve's own default config decides, the
    all-in-one tools per action, and a tool serve does not have is unknown (it used to answer
    "ask" for all of these)."""
    monkeypatch.chdir(tmp_path)
    expected = {
        "kb_search(backups)": "allow",
        "note(list)": "allow",
        "note(delete)": "ask",
        "Read(./notes/计划.md)": "allow",
        "frobnicate(x)": "deny",
    }
    answers = {}
    for call in expected:
        result = runner.invoke(app, ["policy", "explain", call])
        assert result.exit_code == 0, result.output
        lines = result.output.splitlines()
        assert lines[0].startswith("rules from: toolweave serve's config (default)")
        answers[call] = lines[2].split(":", 1)[0]
    assert answers == expected
    assert "matched as: Read" in runner.invoke(app, ["policy", "explain", "Read(x)"]).output
    unknown = runner.invoke(app, ["policy", "explain", "frobnicate(x)"]).output
    assert "serve has no tool 'frobnicate'" in unknown
