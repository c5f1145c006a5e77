"""`toolweave run` and `toolweave chat`: drive an agent from the terminal.

Configuration problems (no model, a missing API key, a malformed model string) end in one
line that says what to set, never a traceback. The chat history lives in a SQLite session file,
so a conversation continues where it stopped. A tool call that needs approval is asked inline
in the chat: y (this call), n, or a (always, for this session).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from toolweave.cli.agent_tools import DATA_DIR, AgentTools, chat_log_file, open_agent_tools
from toolweave.cli.chat_commands import (
    ChatExtras,
    audited_terminal,
    command_help,
    start_clock,
    unknown_command,
)
from toolweave.cli.chat_input import ChatInput, terminal_approver
from toolweave.errors import ConfigError

if TYPE_CHECKING:
    from rich.console import Console

    from toolweave.agent import Agent, AgentEvent, RunResult, Session
    from toolweave.governance import Approver
    from toolweave.llm import Model
    from toolweave.scheduler import Scheduler

MODEL_ENV = "TOOLWEAVE_MODEL"
SESSIONS_ENV = "TOOLWEAVE_SESSIONS"
DEFAULT_SESSIONS = f"{DATA_DIR}/sessions.db"
QUERY_LOG_ENV = "TOOLWEAVE_QUERY_LOG"

_MODEL = typer.Option(
    None, "--model", "-m", envvar=MODEL_ENV, help="Model string, e.g. openai:gpt-4o."
)
_INSTRUCTIONS = typer.Option(None, "--instructions", "-i", help="System instructions.")
_TOOLS = typer.Option(
    None,
    "--tools",
    help="Built-in tools: 'demo' (weather, math) or 'none' (default: demo; none with --config).",
)
_MCP = typer.Option(
    None,
    "--mcp",
    help="MCP servers to use: an mcp.json (Claude Desktop 'mcpServers' or VS Code 'servers').",
)
_EAGER = typer.Option(
    False, "--eager", help="Offer every MCP tool from the start (default: mcp_discover/mcp_load)."
)
_CONFIG = typer.Option(
    None, "--config", "-c", help="toolweave.toml: its providers, [mcpServers] and [serve.policy]."
)
_MAX_TURNS = typer.Option(10, "--max-turns", min=1, help="Model calls allowed per run.")
_SESSION_FILE = typer.Option(
    Path(DEFAULT_SESSIONS), "--session-file", envvar=SESSIONS_ENV, help="SQLite chat history."
)
_TRACE = typer.Option(
    None, "--trace", help="Append the run's spans to this JSONL file (the otel extra)."
)
_SESSION_ID = typer.Option("chat", "--session", "-s", help="Conversation name in that file.")
_QUERY_LOG = typer.Option(
    None, "--query-log", envvar=QUERY_LOG_ENV, help="Without --config: SQLite log of runs, "
    "tool calls and approvals (default ~/.toolweave/query_log.db, what `toolweave log` reads).",
)  # fmt: skip
_CLOCK = typer.Option(None, "--clock", help="Scheduled tasks in this file: clock tools, /clock.")
_COMMANDS = typer.Option(
    None, "--commands", help="Slash commands: a JSON/YAML file or a .claude/commands directory."
)


def _fail(message: str, code: int = 2) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code)


def _build_agent(
    model: str | Model,
    instructions: str | None,
    tools: AgentTools,
    max_turns: int,
    approver: Approver | None = None,
    commands: Path | None = None,
    trace: Path | None = None,
) -> Agent:
    from toolweave.agent import Agent
    from toolweave.agent.orchestration import Commands, Orchestration, RunLimits
    from toolweave.agent.tracing import Tracing
    from toolweave.governance import Governance
    from toolweave.llm import ModelConfigError

    host = tools.governance
    approver = audited_terminal(approver, tools.audit)
    governance = Governance(
        rules=host.rules if host is not None else None,
        hooks=host.hooks if host is not None else None,
        approver=approver,
        admin_approver=approver if host is not None else None,
        approval_hint=host.approval_hint if host is not None else None,
    )
    try:
        return Agent(
            model,
            tools.tools,
            instructions=instructions,
            max_turns=max_turns,
            governance=governance,
            orchestration=Orchestration(
                commands=Commands.load(commands) if commands is not None else None,
                limits=RunLimits(query_log=tools.query_log),
            ),
            tracing=Tracing.to_jsonl(trace) if trace is not None else None,
            skills=tools.skills,
        )
    except (ModelConfigError, ConfigError) as exc:
        raise _fail(str(exc)) from None


def _resolve_model(model: str | None) -> str | Model:
    """`--model` (or `TOOLWEAVE_MODEL`), else the `LLM_*` settings (the environment's, or those
    of a trusted `./.env`); a missing or malformed model fails here, before any MCP server is
    spawned."""
    from toolweave.llm import ModelConfigError
    from toolweave.llm.env_model import model_from_env
    from toolweave.llm.presets import model_config_problem

    if model:
        problem = model_config_problem(model)
        if problem:
            raise _fail(problem)
        return model
    try:
        found = model_from_env()
    except ModelConfigError as exc:
        raise _fail(str(exc)) from None
    if found is None:
        raise _fail(
            f"no model given: pass --model or set {MODEL_ENV} (e.g. openai:gpt-4o), or set "
            "LLM_MODEL_ID (with LLM_BASE_URL and LLM_API_KEY for an OpenAI-compatible server) "
            "in the environment or ./.env"
        )
    return found


def _run_error(exc: BaseException) -> str:
    """One line for a failed run, naming the CLI flag where one is the fix."""
    from toolweave.agent.errors import MaxTurnsExceeded

    if isinstance(exc, MaxTurnsExceeded):
        return (
            f"the agent used all {exc.max_turns} model calls (--max-turns {exc.max_turns}) "
            "without a final answer; raise --max-turns"
        )
    return _one_line(exc)


def escape(text: str) -> str:
    """Text from models and tools, made safe to embed in Rich markup (rich loads lazily)."""
    from rich.markup import escape as rich_escape

    return rich_escape(text)


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"


def run_command(
    prompt: str = typer.Argument(..., help="What to ask."),
    model: str | None = _MODEL,
    instructions: str | None = _INSTRUCTIONS,
    tools: str | None = _TOOLS,
    mcp: Path | None = _MCP,
    eager: bool = _EAGER,
    config: Path | None = _CONFIG,
    max_turns: int = _MAX_TURNS,
    as_json: bool = typer.Option(False, "--json", help="Print output, usage and tool calls."),
    commands: Path | None = _COMMANDS,
    trace: Path | None = _TRACE,
) -> None:
    """Run one prompt to a final answer and print it (a /command is expanded first)."""
    chosen = _resolve_model(model)
    try:
        result = asyncio.run(
            _run(
                prompt, chosen, instructions, tools, mcp, eager, config, max_turns, commands, trace
            )
        )
    except typer.Exit:
        raise
    except ConfigError as exc:
        raise _fail(str(exc)) from None
    except Exception as exc:
        raise _fail(_run_error(exc), code=1) from None
    if not as_json:
        typer.echo(result.output)
        return
    usage = result.usage
    summary = {
        "output": result.output,
        "turns": result.turns,
        "usage": {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens},
        "tool_calls": [{"name": i.name, "ok": i.ok} for i in result.invocations],
    }
    typer.echo(json.dumps(summary, ensure_ascii=False, indent=2))


async def _run(
    prompt: str,
    model: str | Model,
    instructions: str | None,
    tools: str | None,
    mcp: Path | None,
    eager: bool,
    config: Path | None,
    max_turns: int,
    commands: Path | None,
    trace: Path | None = None,
) -> RunResult[str]:
    async with open_agent_tools(tools, mcp, config, eager=eager) as assembled:
        for note in assembled.notes:
            typer.echo(f"warning: {note}", err=True)
        agent = _build_agent(
            model, instructions, assembled, max_turns, commands=commands, trace=trace
        )
        unknown = unknown_command(agent, prompt)
        if unknown is not None:
            raise ConfigError(
                f"unknown command {unknown}: not a --commands slash command; drop the leading "
                "/ to send the text as it is"
            )
        try:
            return await agent.run(prompt)
        finally:
            aclose = getattr(agent.model, "aclose", None)
            if aclose is not None:
                await aclose()


def chat_command(
    model: str | None = _MODEL,
    instructions: str | None = _INSTRUCTIONS,
    tools: str | None = _TOOLS,
    mcp: Path | None = _MCP,
    eager: bool = _EAGER,
    config: Path | None = _CONFIG,
    max_turns: int = _MAX_TURNS,
    session_file: Path = _SESSION_FILE,
    session_id: str = _SESSION_ID,
    no_stream: bool = typer.Option(
        False, "--no-stream", help="Wait for each whole answer instead of streaming it."
    ),
    commands: Path | None = _COMMANDS,
    clock: Path | None = _CLOCK,
    query_log: Path | None = _QUERY_LOG,
) -> None:
    """Chat with an agent: streamed answers, tool calls as they run, /clear, /plan on|off,
    /clock, /stop, /cmd, /exit and the --commands slash commands."""
    from toolweave.agent import Session, SQLiteSessionStore
    from toolweave.cli.console import make_console

    chosen = _resolve_model(model)
    path = session_file.expanduser()
    if path != Path(DEFAULT_SESSIONS).expanduser() and not path.parent.exists():
        raise _fail(
            f"the directory {str(path.parent)!r} of --session-file does not exist; create it "
            "or choose another path"
        )
    console = make_console(highlight=False)
    with asyncio.Runner() as runner, contextlib.ExitStack() as cleanup:
        try:
            assembled = runner.run(
                _enter(
                    cleanup,
                    runner,
                    open_agent_tools(
                        tools, mcp, config, eager=eager, chat_log=chat_log_file(query_log)
                    ),
                )
            )
        except ConfigError as exc:
            raise _fail(str(exc)) from None
        for note in assembled.notes:
            console.print(f"[yellow]warning:[/] {escape(note)}")
        reader = lambda: console.input("[bold green]you>[/] ")  # noqa: E731
        typed = ChatInput(reader, lambda: console.input(""), console)  # /stop stops a turn
        approver = terminal_approver(console, typed.ask)
        agent = _build_agent(chosen, instructions, assembled, max_turns, approver, commands)
        try:
            store = SQLiteSessionStore(path)
            session = Session(session_id, store=store)
        except (OSError, sqlite3.Error, ValueError) as exc:
            raise _fail(
                f"cannot open the session file {str(session_file)!r} ({exc}); pass "
                f"--session-file or set {SESSIONS_ENV} to a writable path"
            ) from None
        cleanup.callback(lambda: runner.run(store.close()))
        schedule = start_clock(runner, cleanup, agent, clock, console) if clock else None
        folder = commands if commands is not None and commands.is_dir() else None
        chat_loop(agent, session, console, typed, runner=runner, stream=not no_stream,
                  clock=schedule, command_folder=folder)  # fmt: skip


async def _enter(
    cleanup: contextlib.ExitStack,
    runner: asyncio.Runner,
    manager: contextlib.AbstractAsyncContextManager[AgentTools],
) -> AgentTools:
    """Enter an async context on `runner`'s loop; its exit runs there when `cleanup` closes."""
    value = await manager.__aenter__()
    cleanup.callback(lambda: runner.run(manager.__aexit__(None, None, None)))
    return value


def chat_loop(
    agent: Agent,
    session: Session,
    console: Console,
    read_line: Callable[[], str] | ChatInput,
    *,
    runner: asyncio.Runner | None = None,
    stream: bool = True,
    clock: Scheduler | None = None,
    command_folder: Path | None = None,
) -> None:
    """The REPL: one line in, one run out (streamed unless `stream=False`), until /exit or end
    of input. Lines are read on a thread (`ChatInput`), so `clock`'s tasks (started on
    `runner`'s loop) fire while the person types and a `/stop` typed during a turn stops it;
    `command_folder` is where an admin's `/cmd` writes.

    Every run shares one event loop (model clients keep their connections, closed when the chat
    ends; pass `runner` to share the loop that opened the agent's MCP connections); `/stop` or
    Ctrl-C during a run cancels just that run, leaving the session consistent, and Ctrl-C at the
    prompt leaves.
    """
    with contextlib.ExitStack() as own:
        active = runner if runner is not None else own.enter_context(asyncio.Runner())
        try:
            active.run(session.load())
            console.print(
                f"[bold]toolweave chat[/] · {escape(agent.model.model_name)} · session "
                f"{escape(repr(session.id))} ({len(session.messages)} messages) · /clear, /plan, "
                "/exit"
            )
            extras = ChatExtras(session, clock, command_folder)
            typed = read_line if isinstance(read_line, ChatInput) else ChatInput(read_line)
            _repl(active, agent, session, console, typed, stream, extras)
            active.run(_end_session(agent, session))
        finally:
            aclose = getattr(agent.model, "aclose", None)
            if aclose is not None:
                active.run(aclose())


def _repl(
    runner: asyncio.Runner,
    agent: Agent,
    session: Session,
    console: Console,
    chat_input: ChatInput,
    stream: bool,
    extras: ChatExtras,
) -> None:
    while True:
        try:
            line = runner.run(chat_input.line()).strip()
        except (EOFError, KeyboardInterrupt):
            console.print()
            return
        if not line:
            continue
        if line in ("/exit", "/quit"):
            return
        if line == "/clear":
            runner.run(session.clear())
            console.print("[dim]history cleared[/]")
        elif (reply := runner.run(extras.handle(line))) is not None:
            console.print(escape(reply), highlight=False)
        elif line == "/help":
            for entry in command_help(agent):
                console.print(escape(entry), highlight=False)
        elif (unknown := unknown_command(agent, line)) is not None:
            console.print(f"[yellow]unknown command {escape(unknown)}; /help lists them[/]")
        else:
            answer = _stream if stream else _whole
            try:
                if runner.run(chat_input.run_turn(answer(agent, session, console, line))):
                    console.print("[yellow](stopped: /stop)[/]")
            except KeyboardInterrupt:
                console.print("\n[yellow](interrupted)[/]")
            except Exception as exc:
                console.print(f"[red]error:[/] {escape(_run_error(exc))}")


async def _end_session(agent: Agent, session: Session) -> None:
    """SessionEnd hooks, when the person leaves the chat."""
    from toolweave.governance import GateContext

    await agent.governance.fire("SessionEnd", GateContext.of(session), reason="prompt_input_exit")


async def _stream(agent: Agent, session: Session, console: Console, line: str) -> None:
    async for event in agent.run_stream(line, session):
        _render(console, event)


async def _whole(agent: Agent, session: Session, console: Console, line: str) -> None:
    """--no-stream: one model answer at a time, printed whole, with the tool calls it made."""
    result = await agent.run(line, session)
    for invocation in result.invocations:  # the same two lines as a streamed call shows
        args = invocation.args if isinstance(invocation.args, dict) else {}
        console.print(f"[dim]  → {escape(f'{invocation.name}({_args(args)})')}[/]")
        mark = "[green]✓[/]" if invocation.ok else "[red]✗[/]"
        console.print(f"  {mark} [dim]{escape(f'{invocation.name} {invocation.duration:.2f}s')}[/]")
    console.print(result.output, markup=False, soft_wrap=True)


def _render(console: Console, event: AgentEvent) -> None:
    from toolweave.agent import (
        ModelTextDelta,
        ToolCallBlocked,
        ToolExecutionCompleted,
        ToolExecutionStarted,
        TurnCompleted,
        UserOutputSent,
    )

    if isinstance(event, ModelTextDelta):
        console.print(event.text, end="", markup=False, soft_wrap=True)
    # Names, arguments, errors and tool text come from the model and tools: never Rich markup.
    elif isinstance(event, ToolExecutionStarted):
        call = escape(f"{event.call.name}({_args(event.call.arguments)})")
        console.print(f"[dim]  → {call}[/]")
    elif isinstance(event, ToolExecutionCompleted):
        mark = "[red]✗[/]" if event.is_error else "[green]✓[/]"
        first = event.result.text.strip().splitlines()
        detail = f": {first[0][:100]}" if event.is_error and first else ""
        line = escape(f"{event.call.name} {event.duration:.2f}s{detail}")
        console.print(f"  {mark} [dim]{line}[/]")
    elif isinstance(event, ToolCallBlocked):
        line = escape(f"{event.call.name} blocked ({event.stage}): {event.reason[:160]}")
        console.print(f"  [red]⊘[/] [dim]{line}[/]")
    elif isinstance(event, UserOutputSent):
        out = event.output
        shown = out.text if out.kind == "text" else f"{out.kind}: {out.filename or out.mime_type}"
        console.print(f"[cyan]  ℹ {escape(shown or '')}[/]")
    elif isinstance(event, TurnCompleted) and event.reason != "tool_calls":
        console.print()


def _args(arguments: dict[str, Any]) -> str:
    text = ", ".join(f"{k}={v!r}" for k, v in arguments.items())
    return text if len(text) <= 80 else text[:77] + "..."


def register(app: typer.Typer) -> None:
    app.command("run")(run_command)
    app.command("chat")(chat_command)
