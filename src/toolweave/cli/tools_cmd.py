"""`toolweave tools`: inspect the tools a registry exposes.

`--json` prints exactly the definitions a model is sent (sorted by name, stable bytes), so the
output doubles as a check that a tool's schema is what its author meant.
"""

from __future__ import annotations

import json
from typing import Any

import typer
from rich.markup import escape
from rich.table import Table

from toolweave.cli.console import make_console
from toolweave.cli.literal_help import LiteralHelpTyper

tools_app = LiteralHelpTyper(help="Inspect tools.", no_args_is_help=True)


def _parameter_summary(parameters: dict[str, Any]) -> str:
    """`name*` for required parameters, `name` for optional ones, in signature order."""
    required = set(parameters.get("required", ()))
    return ", ".join(f"{p}*" if p in required else p for p in parameters.get("properties", {}))


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
    table = Table(title=f"{len(registry)} tools", caption="* required parameter")
    table.add_column("name", style="bold cyan", no_wrap=True)
    table.add_column("permissions")
    table.add_column("read-only")
    table.add_column("parameters")
    table.add_column("description")
    for t in registry.tools():
        perms = ", ".join(sorted(p.value for p in t.permissions)) or "-"
        first_line = t.description.splitlines()[0] if t.description else ""
        read_only = "yes" if t.annotations.read_only else "no"
        cells = (t.name, perms, read_only, _parameter_summary(t.parameters), first_line)
        table.add_row(*(escape(cell) for cell in cells))  # tool text is never Rich markup
    make_console().print(table)
