"""`toolweave run`/`chat` with MCP servers (--mcp in both formats, --eager, --config), --version,
--no-stream, a server that ignores streaming, and errors that name the CLI flag."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.agent.fake_openai import FakeOpenAI, Reply
from toolweave.cli import app
from toolweave.version import __version__

runner = CliRunner()
SERVER = str(Path(__file__).resolve().parents[2] / "examples" / "weather_server.py")


def offered(request: dict[str, object]) -> list[str]:
    return sorted(t["function"]["name"] for t in request.get("tools", []))  # type: ignore[attr-defined, index]


def lazy_replies() -> list[Reply]:
    return [
        Reply(None, [("d", "mcp_discover", {})]),
        Reply(None, [("l", "mcp_load", {"tools": ["weather__get_weather"]})]),
        Reply(None, [("w", "weather__get_weather", {"city": "Beijing"})]),
        Reply("北京晴，30°C。"),
    ]


@pytest.mark.parametrize("key", ["mcpServers", "servers"])
def test_run_loads_mcp_servers_lazily_from_either_format(tmp_path: Path, key: str) -> None:
    entry: dict[str, object] = {"command": sys.executable, "args": [SERVER]}
    if key == "servers":
        entry["type"] = "stdio"  # VS Code's .vscode/mcp.json
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({key: {"weather": entry}}))
    with FakeOpenAI(lazy_replies()) as server:
        model = f"openai-compat:{server.base_url}#fake"
        args = ["run", "北京天气?", "-m", model, "--tools", "none", "--mcp", str(config)]
        result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert result.output.strip() == "北京晴，30°C。"
    assert offered(server.requests[0]) == ["mcp_discover", "mcp_load", "read_result"]
    assert "weather__get_weather" in offered(server.requests[2])
    tool_answer = server.requests[3]["messages"][-1]["content"]
    assert "Beijing" in tool_answer


def test_run_eager_offers_every_mcp_tool_at_once(tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(
        json.dumps({"mcpServers": {"w": {"command": sys.executable, "args": [SERVER]}}})
    )
    with FakeOpenAI([Reply("ok")]) as server:
        model = f"openai-compat:{server.base_url}#fake"
        result = runner.invoke(app, ["run", "hi", "-m", model, "--mcp", str(config), "--eager"])
    assert result.exit_code == 0, result.output
    names = offered(server.requests[0])
    assert "w__get_weather" in names and "get_weather" in names  # --tools demo stays on
    assert "mcp_discover" not in names


def test_run_with_config_uses_its_providers_servers_and_policy(tmp_path: Path) -> None:
    config = tmp_path / "toolweave.toml"
    config.write_text(
        f"""
[serve]
providers = ["demo"]

[serve.policy]
denied = ["mcp:weather"]

[mcpServers.weather]
command = {json.dumps(sys.executable)}
args = [{json.dumps(SERVER)}]
"""
    )
    with FakeOpenAI([Reply("ok")]) as server:
        model = f"openai-compat:{server.base_url}#fake"
        args = ["run", "hi", "-m", model, "--config", str(config)]
        result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    # What the host policy refuses is not published by serve, so it is not offered either.
    names = set(offered(server.requests[0]))
    assert {"calculate", "get_weather"} <= names
    assert not any(name.startswith("weather__") for name in names)


def test_a_missing_mcp_file_is_a_one_line_error(tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["run", "hi", "-m", "openai-compat:http://127.0.0.1:9/v1#m", "--mcp", "nope.json"]
    )
    assert result.exit_code == 2
    (line,) = result.output.strip().splitlines()
    assert line.startswith("error: MCP config file nope.json does not exist")


def test_a_server_that_cannot_start_is_reported_once(tmp_path: Path) -> None:
    """In a real process (logging unconfigured, as a user runs it): one warning line."""
    config = tmp_path / "mcp.json"
    missing = str(tmp_path / "no-such-server")
    config.write_text(json.dumps({"mcpServers": {"broken": {"command": missing}}}))
    with FakeOpenAI([Reply("好")]) as server:
        model = f"openai-compat:{server.base_url}#fake"
        done = subprocess.run(
            [sys.executable, "-c", "from toolweave.cli import main; main()",
             "run", "hi", "-m", model, "--mcp", str(config)],
            capture_output=True, text=True, timeout=120, cwd=tmp_path,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "好"
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("warning: MCP server 'broken' is unavailable")
    assert missing in lines[0]


def test_version() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and result.output.strip() == f"toolweave {__version__}"


def test_max_turns_exhaustion_names_the_flag() -> None:
    replies = [Reply(None, [("c", "calculate", {"expression": "1+1"})])] * 2
    with FakeOpenAI(replies) as server:
        model = f"openai-compat:{server.base_url}#fake"
        result = runner.invoke(app, ["run", "hi", "-m", model, "--max-turns", "2"])
    assert result.exit_code == 1
    (line,) = result.output.strip().splitlines()
    assert "(--max-turns 2)" in line and "raise --max-turns" in line


@pytest.mark.parametrize("no_stream", [False, True])
def test_chat_against_a_server_that_ignores_streaming(tmp_path: Path, no_stream: bool) -> None:
    replies = [Reply(None, [("w", "get_weather", {"city": "Beijing"})]), Reply("Sunny, 12°C.")]
    with FakeOpenAI(replies, ignore_stream=True) as server:
        model = f"openai-compat:{server.base_url}#fake"
        args = ["chat", "-m", model, "--session-file", str(tmp_path / "s.db")]
        result = runner.invoke(app, args + (["--no-stream"] if no_stream else []), input="hi\n")
    assert result.exit_code == 0, result.output
    assert "Sunny, 12°C." in result.output and "get_weather" in result.output
    assert "→ get_weather(city='Beijing')" in result.output  # the call line, in both modes
    assert all(
        request.get("stream") is (not no_stream) or (no_stream and "stream" not in request)
        for request in server.requests
    )


def test_chat_session_file_in_a_missing_directory_says_so(tmp_path: Path) -> None:
    missing = tmp_path / "no" / "such" / "chat.db"
    result = runner.invoke(
        app, ["chat", "-m", "openai-compat:http://127.0.0.1:9/v1#m", "--session-file", str(missing)]
    )
    assert result.exit_code == 2
    assert "of --session-file does not exist" in result.output and not missing.parent.exists()


@pytest.mark.parametrize(("answer", "runs"), [("y", True), ("n", False)])
def test_chat_config_shell_runs_when_the_person_says_yes(
    tmp_path: Path, answer: str, runs: bool
) -> None:
    """`[builtins] shell = true` under `chat --config`: the chat's own prompt decides the call
    (the host's gate would only ask an MCP client, and there is none)."""
    work = tmp_path / "work"
    config = tmp_path / "toolweave.toml"
    config.write_text(
        f'[serve]\ndata_dir = "{tmp_path / "data"}"\nproviders = ["builtins"]\n\n'
        f'[builtins]\nroot = "{work}"\nshell = true\n'
    )
    replies = [Reply(None, [("b", "bash", {"command": "echo 你好 > made.txt"})]), Reply("好了")]
    with FakeOpenAI(replies) as server:
        model = f"openai-compat:{server.base_url}#fake"
        args = ["chat", "-m", model, "--config", str(config), "--session-file"]
        args.append(str(tmp_path / "s.db"))
        result = runner.invoke(app, args, input=f"写个文件\n{answer}\n")
    assert result.exit_code == 0, result.output
    assert "needs approval" in result.output and "allow? [y/n/a]" in result.output
    assert (work / "made.txt").exists() is runs, result.output
    if runs:
        assert (work / "made.txt").read_text(encoding="utf-8").strip() == "你好"
    else:  # refused: the model hears why and answers; nothing was written
        assert "好了" in result.output and not (work / "made.txt").exists()
    # The terminal's decision is kept in the config's query log, with who decided.
    audit = runner.invoke(app, ["log", "--config", str(config), "--approvals", "--json"])
    (decision,) = [json.loads(line) for line in audit.output.splitlines()]
    assert decision["decision"] == ("approved" if runs else "denied")
    assert decision["decided_by"].startswith("chat:") and "你好" in decision["args"]


WRITER = str(Path(__file__).resolve().parents[2] / "examples" / "probe_file_writer.py")


@pytest.mark.parametrize(("answer", "writes"), [("y", True), ("n", False)])
def test_an_mcp_tool_that_declares_destructive_asks(
    tmp_path: Path, answer: str, writes: bool
) -> None:
    """`destructiveHint: true` from an MCP server asks under `chat --mcp`, as a local
    `destructive=True` tool does."""
    config = tmp_path / "mcp.json"
    entry = {"command": sys.executable, "args": [WRITER, "--root", str(tmp_path)]}
    config.write_text(json.dumps({"mcpServers": {"files": entry}}))
    call = ("w", "files__write_file", {"path": "笔记.md", "content": "你好"})
    with FakeOpenAI([Reply(None, [call]), Reply("好了")]) as server:
        model = f"openai-compat:{server.base_url}#fake"
        args = ["chat", "-m", model, "--tools", "none", "--mcp", str(config), "--eager"]
        args += ["--session-file", str(tmp_path / "s.db")]
        result = runner.invoke(app, args, input=f"写\n{answer}\n")
    assert result.exit_code == 0, result.output
    assert "needs approval" in result.output, result.output
    assert (tmp_path / "笔记.md").exists() is writes, result.output
    # Plain chat keeps the decision, the run and its call in ~/.toolweave/query_log.db (the
    # temporary HOME), the file a plain `toolweave log` reads.
    assert (Path.home() / ".toolweave" / "query_log.db").is_file()
    audit = runner.invoke(app, ["log", "--approvals", "--json"])
    (decision,) = [json.loads(line) for line in audit.output.splitlines()]
    assert decision["decision"] == ("approved" if writes else "denied")
    assert decision["decided_by"].startswith("chat:") and "你好" in decision["args"]
    outcome = "ran" if writes else "refused"
    calls = runner.invoke(
        app, ["log", "--tool", "files__write_file", "--outcome", outcome, "--json"]
    )
    rows = {row["kind"]: row for row in map(json.loads, calls.output.splitlines())}
    assert (
        rows["call"]["outcome"].startswith(outcome) and rows["call"]["tool"] == "files__write_file"
    )
    if writes:  # the run that called it matches too ("ran"), and is the call's parent
        assert rows["call"]["parent"] == rows["run"]["id"]


def test_run_and_chat_refuse_an_unknown_command_alike_and_help_lists_them(
    tmp_path: Path,
) -> None:
    commands = tmp_path / "commands"
    commands.mkdir()
    (commands / "总结.md").write_text("---\ndescription: 总结要点\n---\n总结：$ARGUMENTS")
    (commands / "review.md").write_text("---\ndescription: Review a file\n---\nReview $ARGUMENTS")
    with FakeOpenAI([Reply("不该调用")]) as server:
        model = f"openai-compat:{server.base_url}#fake"
        ran = runner.invoke(app, ["run", "/nosuch x", "-m", model, "--commands", str(commands)])
        args = ["chat", "-m", model, "--session-file", str(tmp_path / "s.db")]
        lines = "/help\n/nosuch x\n/不存在\n/etc/hosts?\n"
        chat = runner.invoke(app, [*args, "--commands", str(commands)], input=lines)
    assert ran.exit_code == 2 and "unknown command /nosuch" in ran.output
    assert "/help lists them" not in ran.output
    assert "unknown command /nosuch; /help lists them" in chat.output
    assert "unknown command /不存在" in chat.output
    for entry in ("/clear", "/exit", "/help", "/review", "Review a file", "/总结"):
        assert entry in chat.output, chat.output
    assert len(server.requests) == 1  # only "/etc/hosts?" (a path, not a command) reached it


def test_run_joins_the_skills_its_mcp_servers_serve(tmp_path: Path) -> None:
    skills_server = SERVER.replace("weather_server.py", "mcp_skills_server.py")
    config = tmp_path / "mcp.json"
    config.write_text(
        json.dumps({"mcpServers": {"docs": {"command": sys.executable, "args": [skills_server]}}})
    )
    replies = [
        Reply(None, [("s", "skill_read", {"name": "docs__web-research"})]),
        Reply("先查官方文档。"),
    ]
    with FakeOpenAI(replies) as server:
        model = f"openai-compat:{server.base_url}#fake"
        args = [
            "run",
            "LangGraph 有什么新变化？",
            "-m",
            model,
            "--tools",
            "none",
            "--mcp",
            str(config),
        ]
        result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    system = server.requests[0]["messages"][0]["content"]
    assert "- docs__web-research: 用于回答需要联网检索" in system  # type: ignore[operator]
    assert "skill_read" in offered(server.requests[0])
    tool_answer = server.requests[1]["messages"][-1]["content"]
    assert "# Skill: docs__web-research (from MCP server 'docs', verified)" in tool_answer  # type: ignore[operator]
