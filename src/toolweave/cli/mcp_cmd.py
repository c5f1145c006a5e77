"""`toolweave mcp`: MCP utilities; `mcp new` scaffolds a server project.

toolweave is not on a package index, so `mcp new` writes the project's dependency on the
toolweave it runs from (its checkout, or the wheel it was installed from) unless
`--toolweave-source` names another wheel, checkout, or `index`.
"""

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
    toolweave_source: Annotated[
        str | None,
        typer.Option(
            "--toolweave-source",
            metavar="WHEEL|PATH|index",
            help="Where the project gets toolweave: a toolweave-*.whl (copied into its wheels/, "
            "so its CI installs it), a toolweave checkout, or 'index' (toolweave>=VERSION from "
            "a package index). Default: the checkout or wheel this toolweave runs from, else "
            "'index'.",
        ),
    ] = None,
) -> None:
    """Create an MCP server project: package, example tool, test, README and CI."""
    from toolweave.cli.errors import about_file, fail
    from toolweave.mcp.server.scaffold import INDEX_SOURCE, WHEELS, running_source, scaffold

    source = toolweave_source or running_source() or INDEX_SOURCE
    target = directory if directory is not None else Path(name)
    fix = "pass --dir with a folder you can write, whose parent exists"
    try:
        with about_file(target, "a folder for the project", fix):
            created = scaffold(name, directory, source)
    except (ValueError, FileExistsError) as exc:
        raise fail(str(exc)) from None
    origin = Path(source)
    if source == INDEX_SOURCE:
        where = "a package index"
    elif origin.is_file():
        where = f"{origin}, copied into {WHEELS}/ (commit it: CI installs from it)"
    else:
        where = f"the checkout {origin} (this machine only)"
    typer.echo(
        f"Created {created}/ (toolweave from {where}). Next:\n"
        f"  cd {created}\n  pip install -e '.[dev]'\n  pytest"
    )
