"""`toolweave tools`: inspect the tools a registry exposes."""

from __future__ import annotations

import json

import typer
from rich.console import Console
from rich.table import Table

tools_app = typer.Typer(help="Inspect tools.", no_args_is_help=True)


@tools_app.command("list")
def list_tools(
    as_json: bool = typer.Option(False, "--json", help="Print the tool definitions as JSON."),
) -> None:
    """List the built-in demo tools with their permissions and parameters."""
    from toolweave.tools.demo import demo_registry

    registry = demo_registry()
    if as_json:
        defs = [
            {"name": d.name, "description": d.description, "parameters": d.parameters}
            for d in registry.definitions()
        ]
        typer.echo(json.dumps(defs, indent=2, ensure_ascii=False))
        return
    table = Table(title=f"{len(registry)} tools")
    table.add_column("name", style="bold cyan")
    table.add_column("permissions")
    table.add_column("parameters")
    table.add_column("description")
    for t in registry.tools():
        params = ", ".join(t.parameters.get("properties", {}))
        perms = ", ".join(sorted(p.value for p in t.permissions)) or "-"
        table.add_row(t.name, perms, params, t.description.splitlines()[0] if t.description else "")
    Console().print(table)
