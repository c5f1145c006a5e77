"""`toolweave mcp`: MCP utilities; `mcp new` scaffolds a server project."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from toolweave.cli.literal_help import LiteralHelpTyper

mcp_app = LiteralHelpTyper(help="MCP server toolkit utilities.", no_args_is_help=True)


@mcp_app.command("new")
def new(
    name: Annotated[str, typer.Argument(help="Project name, e.g. weather-tools.")],
    directory: Annotated[
        Path | None, typer.Option("--dir", help="Where to create it (default: ./NAME).")
    ] = None,
) -> None:
    """Create an MCP server project: package, example tool, test, README and CI."""
    from toolweave.cli.errors import about_file
    from toolweave.mcp.server.scaffold import scaffold

    target = directory if directory is not None else Path(name)
    fix = "pass --dir with a folder you can write, whose parent exists"
    try:
        with about_file(target, "a folder for the project", fix):
            created = scaffold(name, directory)
    except (ValueError, FileExistsError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    typer.echo(f"Created {created}/. Next:\n  cd {created}\n  pip install -e '.[dev]'\n  pytest")
