"""`toolweave trace show FILE`: a JSON Lines trace rendered as one tree per run.

The file is what `Tracing.to_jsonl(path)` (or `toolweave run --trace FILE`) writes; reading it
needs no OpenTelemetry. Each line of the tree shows the span, its duration and the attributes
that matter when reading a run: the model and its tokens, a tool's outcome, a turn's reason.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from toolweave.cli.literal_help import LiteralHelpTyper

if TYPE_CHECKING:
    from rich.tree import Tree

    from toolweave.agent.tracing import TraceSpan

trace_app = LiteralHelpTyper(help="Read traces written by Tracing.to_jsonl.", no_args_is_help=True)


@trace_app.command("show")
def show(file: Annotated[Path, typer.Argument(help="A JSONL trace file.")]) -> None:
    """Render every run in FILE as a tree of turns, model calls and tool calls."""
    from toolweave.agent.tracing import read_spans
    from toolweave.cli.console import make_console
    from toolweave.cli.errors import about_file
    from toolweave.errors import ConfigError

    fix = "pass the JSONL file `toolweave run --trace FILE` wrote"
    try:
        with about_file(file, "a trace file", fix):
            roots = read_spans(file)
    except ConfigError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    console = make_console()
    if not roots:
        console.print(f"{file}: no spans")
        return
    for root in roots:
        console.print(_tree(root))


def _tree(span: TraceSpan, parent: Tree | None = None) -> Tree:
    from rich.tree import Tree

    node = Tree(_label(span)) if parent is None else parent.add(_label(span))
    for child in span.children:
        _tree(child, node)
    return node


def _label(span: TraceSpan) -> str:
    from rich.markup import escape

    attrs = span.attributes
    details = [f"{span.duration_ms:.1f} ms"]
    if "gen_ai.usage.input_tokens" in attrs:
        tokens_in = attrs["gen_ai.usage.input_tokens"]
        details.append(f"in {tokens_in} / out {attrs.get('gen_ai.usage.output_tokens', 0)}")
    for key in ("toolweave.turn.reason", "toolweave.tool.outcome"):
        if key in attrs:
            details.append(str(attrs[key]))
    label = f"[bold]{escape(span.name)}[/bold]  [dim]{escape(' · '.join(details))}[/dim]"
    if span.status == "ERROR":
        label += f"  [red]error: {escape(span.status_description or '')}[/red]"
    return label
