"""`toolweave serve`: run the tool host over stdio or Streamable HTTP."""

from __future__ import annotations

import asyncio
import json
import shlex
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from toolweave.host import ToolHost

MAX_PORT = 65535
CONFIGURED_CONSOLE_TOKEN = "<your [serve].console_token>"
"""What the banner shows for a console token the config set (it is never printed)."""

HOW_TO_CONNECT = """\
toolweave serve: MCP endpoint {url}
This server again: {command}

Serving (data in {data_dir}):
{served}
A call that asks is put to the person through the client (MCP elicitation); a client that cannot
ask gets a refusal naming the [serve.rules] line that allows it.

Add it to Claude Code:
  claude mcp add --transport http toolweave {url}{auth_flag}

Add it to Claude Desktop (claude_desktop_config.json, "mcpServers"), either spawning it:
{desktop}
or bridging to this running HTTP server:
  "toolweave": {{"command": "npx", "args": ["-y", "mcp-remote", "{url}"{remote_auth}]}}
{console}
Ctrl+C stops the server.
"""


def _split_address(value: str) -> tuple[str, int]:
    """HOST:PORT; a bad value is a ValueError, printed as one `error:` line (exit 2)."""
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"--http expects HOST:PORT such as 127.0.0.1:8765, not {value!r}")
    if int(port) > MAX_PORT:
        raise ValueError(f"--http port must be 0-{MAX_PORT} (0 picks a free port), not {int(port)}")
    return host.strip("[]") or "127.0.0.1", int(port)


def _executable() -> str:
    """The `toolweave` script beside this interpreter, absolute: hosts spawn it from elsewhere."""
    script = Path(sys.executable).with_name("toolweave")
    executable = str(script) if script.exists() else shutil.which("toolweave") or sys.argv[0]
    return str(Path(executable).absolute())


def _print_banner(host: ToolHost) -> None:
    shown = host.console.token if host.console.generated else CONFIGURED_CONSOLE_TOKEN
    typer.echo(_banner(host, shown))


def _home(text: str) -> str:
    """Paths under the home folder as `~/...`, as a person writes them."""
    home = str(Path.home())
    return text.replace(home + "/", "~/").replace(f"{home} ", "~ ") if home != "/" else text


def _banner(host: ToolHost, console_token: str = "<console token>") -> str:
    """How to connect, with the exact commands that reproduce this server (its config file and
    the port it actually bound), what it serves and where the data lives, and where its web
    console is, with its own token (a fresh one is shown here, once; a configured one is not).
    The MCP token is never shown: the commands read it from the environment."""
    from toolweave.host.config import TOKEN_ENV
    from toolweave.host.providers.base import describe

    config = host.config
    executable = _executable()
    config_args = ["--config", str(config.source.absolute())] if config.source else []
    address = f"[{config.host}]" if ":" in config.host else config.host
    command = shlex.join(
        [executable, "serve", "--http", f"{address}:{host.port or config.port}", *config_args]
    )
    if config.token:
        command = f"{TOKEN_ENV}=<token> {command}"
    desktop = json.dumps(
        {"toolweave": {"command": executable, "args": ["serve", "--stdio", *config_args]}},
        indent=2,
    )
    auth_flag = ' --header "Authorization: Bearer <token>"' if config.token else ""
    remote_auth = ', "--header", "Authorization: Bearer <token>"' if config.token else ""
    console = ""
    if host.console_url is not None:
        console = (
            "\nWeb console (tools, approvals, query log, usage; its own token, never an MCP "
            f"client's): {host.console_url}#token={console_token}\n"
        )
    served = [f"  {p.name:9} {describe(p)}" for p in host.providers]
    served += [f"  {note}" for note in host.notes]
    return HOW_TO_CONNECT.format(
        url=host.url,
        command=command,
        data_dir=_home(str(config.data_dir)),
        served=_home("\n".join(served) or "  nothing: [serve].providers is empty"),
        desktop=desktop,
        auth_flag=auth_flag,
        remote_auth=remote_auth,
        console=console,
    )


def serve(
    stdio: bool = typer.Option(False, "--stdio", help="Serve one client over stdin/stdout."),
    http: str | None = typer.Option(
        None, "--http", metavar="HOST:PORT", help="Serve Streamable HTTP, e.g. 127.0.0.1:8765."
    ),
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            "-c",
            help="toolweave.toml to use (default: ./toolweave.toml once `toolweave trust` "
            "recorded it, else ~/.toolweave/toolweave.toml).",
        ),
    ] = None,
    token: str | None = typer.Option(
        None,
        "--token",
        help="Bearer token HTTP clients must send (required beyond loopback); better set "
        "TOOLWEAVE_SERVE_TOKEN, which `ps` does not show.",
    ),
    demo: bool = typer.Option(
        False, "--demo", help="Also serve the offline demo tools (weather, a calculator)."
    ),
) -> None:
    """Serve memory, the knowledge base, notes, skills and the safe built-ins (and any proxied
    MCP servers) as one MCP server; --demo adds the demo tools."""
    from toolweave.host import ToolHost
    from toolweave.host.config import DEMO_PROVIDER, load_served_config

    if stdio and http:
        raise typer.BadParameter("choose one of --stdio or --http")
    try:
        host_config, note = load_served_config(config)
        if note is not None:
            typer.echo(f"note: {note}", err=True)
        update: dict[str, object] = {}
        if http is not None:
            update["transport"] = "http"
            update["host"], update["port"] = _split_address(http)
        elif stdio:
            update["transport"] = "stdio"
        if token:
            update["token"] = token
        if demo and DEMO_PROVIDER not in host_config.providers:
            update["providers"] = (*host_config.providers, DEMO_PROVIDER)
        host_config = host_config.model_copy(update=update)
        host = ToolHost(host_config)
    except (ValueError, TypeError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    if host_config.transport == "stdio":
        asyncio.run(host.serve_stdio())
        return
    try:
        asyncio.run(host.serve_http(on_ready=lambda _port: _print_banner(host)))
    except KeyboardInterrupt:
        pass
    except OSError as exc:  # the port is taken or the address is not ours
        typer.echo(
            f"error: cannot listen on {host_config.host}:{host_config.port}: {exc}", err=True
        )
        raise typer.Exit(1) from None
