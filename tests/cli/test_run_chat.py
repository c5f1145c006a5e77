"""`toolweave run` and `toolweave chat` against the loopback OpenAI-compatible server."""

from __future__ import annotations

import asyncio
import io
import signal
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from tests.agent.fake_openai import FakeOpenAI, Reply
from toolweave.agent import Agent, Session, SQLiteSessionStore
from toolweave.agent.orchestration import Orchestration
from toolweave.cli import app
from toolweave.cli.agent_cmd import chat_loop
from toolweave.llm import Message, ScriptedModel, ToolCallPart
from toolweave.tools import ToolContext, tool
from toolweave.tools.demo import get_weather

runner = CliRunner()


async def _stored(db: Path, session_id: str) -> list[Message]:
    async with SQLiteSessionStore(db) as store:
        return await store.load(session_id)


def weather_replies() -> list[Reply]:
    return [
        Reply(None, [("call_1", "get_weather", {"city": "Beijing"})]),
        Reply("Sunny and 12°C: bring a light jacket."),
    ]


def test_run_prints_the_answer() -> None:
    with FakeOpenAI(weather_replies()) as server:
        model = f"openai-compat:{server.base_url}#fake"
        result = runner.invoke(app, ["run", "Weather in Beijing?", "--model", model])
    assert result.exit_code == 0, result.output
    assert result.output.strip() == "Sunny and 12°C: bring a light jacket."
    assert [t["function"]["name"] for t in server.requests[0]["tools"]] == [
        "calculate",
        "celsius_to_fahrenheit",
        "get_weather",
        "read_result",
    ]


def test_the_llm_variables_of_a_dotenv_file_choose_the_model(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The seed's LLM_MODEL_ID / LLM_API_KEY / LLM_BASE_URL / LLM_TIMEOUT, from ./.env."""
    monkeypatch.chdir(tmp_path)
    for name in ("TOOLWEAVE_MODEL", "LLM_MODEL_ID", "LLM_BASE_URL", "LLM_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    with FakeOpenAI([Reply("你好")]) as server:
        (tmp_path / ".env").write_text(
            "# the model\n"
            "LLM_MODEL_ID=qwen3:8b\n"
            f'export LLM_BASE_URL="{server.base_url}"\n'
            "LLM_API_KEY='sk-local'  \n"
            "LLM_TIMEOUT=30 # seconds\n",
            encoding="utf-8",
        )
        result = runner.invoke(app, ["run", "hi", "--tools", "none"])
    assert result.exit_code == 0, result.output
    assert result.output.strip() == "你好"
    assert server.requests[0]["model"] == "qwen3:8b"


def test_llm_settings_come_from_one_place_never_mixed(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A .env base URL never receives the environment's API key (a cloned folder's .env)."""
    from toolweave.llm import OpenAIChatModel
    from toolweave.llm.env_model import model_from_env

    (tmp_path / ".env").write_text("LLM_MODEL_ID=m\nLLM_BASE_URL=http://127.0.0.1:9/v1\n")
    model = model_from_env({"LLM_API_KEY": "sk-user"}, tmp_path / ".env")
    assert isinstance(model, OpenAIChatModel) and model.api_key in (None, "")
    from_env = model_from_env(
        {"LLM_MODEL_ID": "anthropic:claude-sonnet-4-5", "LLM_API_KEY": "k", "LLM_TIMEOUT": "5"},
        tmp_path / ".env",
    )
    assert from_env is not None and from_env.model_name == "claude-sonnet-4-5"
    assert model_from_env({}, tmp_path / "missing.env") is None


def test_a_dotenv_compat_url_never_receives_the_environments_compat_key(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A .env naming an `openai-compat:<url>#<model>` string carries its own URL: the user's
    OPENAI_COMPAT_API_KEY must not be sent there (the key comes from LLM_API_KEY only)."""
    from toolweave.llm import OpenAIChatModel
    from toolweave.llm.env_model import model_from_env

    monkeypatch.setenv("OPENAI_COMPAT_API_KEY", "sk-user")
    dotenv = tmp_path / ".env"
    dotenv.write_text("LLM_MODEL_ID=openai-compat:http://127.0.0.1:9/v1#m\n")
    model = model_from_env({}, dotenv)
    assert isinstance(model, OpenAIChatModel) and model.api_key in (None, "")
    dotenv.write_text("LLM_MODEL_ID=openai-compat:http://127.0.0.1:9/v1#m\nLLM_API_KEY=sk-own\n")
    model = model_from_env({}, dotenv)
    assert isinstance(model, OpenAIChatModel) and model.api_key == "sk-own"


def test_run_json_and_no_tools() -> None:
    with FakeOpenAI([Reply("hello")]) as server:
        model = f"openai-compat:{server.base_url}#fake"
        result = runner.invoke(app, ["run", "hi", "-m", model, "--tools", "none", "--json"])
    assert result.exit_code == 0, result.output
    assert '"output": "hello"' in result.output and '"turns": 1' in result.output
    assert "tools" not in server.requests[0]


def test_configuration_errors_are_one_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("TOOLWEAVE_MODEL", "OPENAI_API_KEY", "LLM_MODEL_ID"):
        monkeypatch.delenv(name, raising=False)
    missing_model = runner.invoke(app, ["run", "hi"])
    assert missing_model.exit_code == 2
    assert missing_model.output.strip().splitlines() == [
        "error: no model given: pass --model or set TOOLWEAVE_MODEL (e.g. openai:gpt-4o), or "
        "set LLM_MODEL_ID (with LLM_BASE_URL and LLM_API_KEY for an OpenAI-compatible server) "
        "in the environment or ./.env"
    ]
    monkeypatch.setenv("LLM_MODEL_ID", "fake")
    monkeypatch.setenv("LLM_TIMEOUT", "soon")
    bad_timeout = runner.invoke(app, ["run", "hi"])
    assert bad_timeout.exit_code == 2
    assert bad_timeout.output.strip().splitlines() == [
        "error: LLM_TIMEOUT='soon' must be a positive number of seconds, e.g. LLM_TIMEOUT=60"
    ]
    monkeypatch.delenv("LLM_MODEL_ID")
    monkeypatch.delenv("LLM_TIMEOUT")
    missing_key = runner.invoke(app, ["run", "hi", "--model", "openai:gpt-4o"])
    assert missing_key.exit_code == 2
    (line,) = missing_key.output.strip().splitlines()
    assert line.startswith("error:") and "OPENAI_API_KEY" in line
    bad = runner.invoke(app, ["chat", "--model", "nonsense"])
    assert bad.exit_code == 2 and "provider:model" in bad.output


def test_a_failing_model_is_one_line_too() -> None:
    with FakeOpenAI([]) as server:
        model = f"openai-compat:{server.base_url}#fake"
        result = runner.invoke(app, ["run", "hi", "--model", model])
    assert result.exit_code == 1
    (line,) = result.output.strip().splitlines()
    assert line.startswith("error: ModelError") and "script exhausted" in line


def test_chat_streams_keeps_history_in_a_file_and_clears(tmp_path: Path) -> None:
    db = tmp_path / "chat.db"
    replies = [*weather_replies(), Reply("You asked about Beijing.")]
    with FakeOpenAI(replies) as server:
        model = f"openai-compat:{server.base_url}#fake"
        args = ["chat", "--model", model, "--session-file", str(db), "--session", "trip"]
        first = runner.invoke(app, args, input="Weather in Beijing?\n/exit\n")
        again = runner.invoke(app, args, input="What did I ask?\n/clear\n")
    assert first.exit_code == 0, first.output
    assert "→ get_weather(city='Beijing')" in first.output and "✓ get_weather" in first.output
    assert "Sunny and 12°C: bring a light jacket." in first.output
    assert again.exit_code == 0, again.output
    assert "(4 messages)" in again.output and "You asked about Beijing." in again.output
    assert "history cleared" in again.output
    last_request = server.requests[-1]["messages"]
    assert [m["role"] for m in last_request] == ["user", "assistant", "tool", "assistant", "user"]
    assert asyncio.run(_stored(db, "trip")) == []


def test_chat_loop_shows_tool_errors_user_messages_and_run_failures() -> None:
    @tool
    async def report(ctx: ToolContext) -> str:
        """Sends a note."""
        await ctx.send_text("working on it")
        await ctx.send_file(data=b"x", filename="notes.txt")
        return "ok"

    model = ScriptedModel(
        [
            Message.assistant(
                "", [ToolCallPart("1", "report", {}), ToolCallPart("2", "get_weather", {})]
            ),
            Message.assistant("done"),
            RuntimeError("provider down"),
        ]
    )
    out = io.StringIO()
    console = Console(file=out, width=120, highlight=False)
    lines = iter(["hello", "/bogus", "", "again"])
    agent = Agent(model, [report, get_weather])

    def read_line() -> str:
        try:
            return next(lines)
        except StopIteration:
            raise EOFError from None

    chat_loop(agent, Session(), console, read_line)
    text = out.getvalue()
    assert "ℹ working on it" in text and "ℹ file: notes.txt" in text
    assert "✗ get_weather" in text and "city" in text
    assert "unknown command /bogus" in text
    assert "error: RuntimeError: provider down" in text


def test_ctrl_c_during_a_run_cancels_only_that_run() -> None:
    @tool
    async def long_job(ctx: ToolContext) -> str:
        """Runs until the user presses Ctrl-C."""
        signal.raise_signal(signal.SIGINT)
        await ctx.wait_cancelled()
        return "stopped"

    model = ScriptedModel(
        [Message.assistant("", [ToolCallPart("1", "long_job", {})]), Message.assistant("hello")]
    )
    out = io.StringIO()
    lines = iter(["start the job", "are you there?"])
    session = Session()

    def read_line() -> str:
        try:
            return next(lines)
        except StopIteration:
            raise EOFError from None

    chat_loop(Agent(model, [long_job]), session, Console(file=out, width=120), read_line)
    assert "(interrupted)" in out.getvalue() and "hello" in out.getvalue()
    assert [m.role for m in session.messages] == ["user", "assistant", "tool", "user", "assistant"]
    # The tool noticed the cancellation and stopped cleanly, so its own result is kept.
    assert "stopped" in session.messages[2].tool_results[0].text


def test_text_from_models_and_tools_is_never_read_as_rich_markup() -> None:
    @tool
    async def echo(ctx: ToolContext, note: str) -> str:
        """Sends the note to the user."""
        await ctx.send_text(f"note: {note} [bold]")
        raise ValueError(f"bad note {note}")

    model = ScriptedModel(
        [
            Message.assistant("", [ToolCallPart("1", "echo", {"note": "[/bold]"})]),
            Message.assistant("done [/]"),
            RuntimeError("failed: [/red] [type=missing]"),
        ]
    )
    out = io.StringIO()
    lines = iter(["first", "second"])

    def read_line() -> str:
        try:
            return next(lines)
        except StopIteration:
            raise EOFError from None

    chat_loop(Agent(model, [echo]), Session(), Console(file=out, width=200), read_line)
    text = out.getvalue()
    assert "→ echo(note='[/bold]')" in text
    assert "ℹ note: [/bold] [bold]" in text
    assert "✗ echo" in text and "bad note [/bold]" in text
    assert "done [/]" in text
    assert "error: RuntimeError: failed: [/red] [type=missing]" in text


def test_an_unusable_session_file_is_a_one_line_error(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    with FakeOpenAI([]) as server:
        model = f"openai-compat:{server.base_url}#fake"
        result = runner.invoke(
            app, ["chat", "--model", model, "--session-file", str(blocker / "chat.db")]
        )
    assert result.exit_code == 2
    (line,) = result.output.strip().splitlines()
    assert line.startswith("error: cannot open the session file") and "TOOLWEAVE_SESSIONS" in line


def test_chat_help_lists_custom_commands_as_claude_code_does(tmp_path: Path) -> None:
    from toolweave.agent.orchestration import Commands

    folder = tmp_path / "commands"
    (folder / "dev").mkdir(parents=True)
    (folder / "dev" / "code-review.md").write_text(
        "---\ndescription: Review code\nargument-hint: [file]\n---\nReview $ARGUMENTS",
        encoding="utf-8",
    )
    (folder / "总结.md").write_text("总结 $ARGUMENTS", encoding="utf-8")
    out = io.StringIO()
    console = Console(file=out, width=120, highlight=False)
    lines = iter(["/help"])
    agent = Agent(
        ScriptedModel([]), [], orchestration=Orchestration(commands=Commands.from_directory(folder))
    )

    def read_line() -> str:
        try:
            return next(lines)
        except StopIteration:
            raise EOFError from None

    chat_loop(agent, Session(), console, read_line)
    text = out.getvalue()
    assert "/code-review [file] Review code (project:dev)" in text
    assert "/总结" in text and "/clear" in text and "/exit" in text
