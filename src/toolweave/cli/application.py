"""The root Typer app; each command group lives in its own module and registers here."""

from __future__ import annotations

import typer

from toolweave.cli import agent_cmd
from toolweave.cli.doctor_cmd import doctor
from toolweave.cli.kb_cmd import kb_app
from toolweave.cli.literal_help import LiteralHelpTyper
from toolweave.cli.log_cmd import log_command
from toolweave.cli.mcp_cmd import mcp_app
from toolweave.cli.memory_cmd import memory_app
from toolweave.cli.policy_cmd import policy_app
from toolweave.cli.serve_cmd import serve
from toolweave.cli.skills_cmd import skills_app
from toolweave.cli.tools_cmd import tools_app
from toolweave.cli.trace_cmd import trace_app
from toolweave.cli.trust_cmd import trust_command

app = LiteralHelpTyper(
    name="toolweave",
    help="Typed tools, MCP and an agent loop for LLM agents.",
    no_args_is_help=True,
    add_completion=False,
)


def _version(value: bool) -> None:
    if value:
        from toolweave.version import __version__

        typer.echo(f"toolweave {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Typed tools, MCP and an agent loop for LLM agents."""


app.add_typer(tools_app, name="tools")
app.add_typer(mcp_app, name="mcp")
app.add_typer(memory_app, name="memory")
app.add_typer(policy_app, name="policy")
app.add_typer(skills_app, name="skills")
app.add_typer(kb_app, name="kb")
app.add_typer(trace_app, name="trace")
app.command("serve")(serve)
app.command("log")(log_command)
app.command("doctor")(doctor)
app.command("trust")(trust_command)
agent_cmd.register(app)
