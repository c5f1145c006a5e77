"""`toolweave doctor`: print what `toolweave.host.doctor.diagnose` found, and exit non-zero on
any failure so scripts and CI can gate on it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer

_MARKS = {"ok": "[green]✓[/green]", "warn": "[yellow]![/yellow]", "fail": "[red]✗[/red]"}


def doctor(
    config: Annotated[
        Path | None,
        typer.Option("--config", "-c", help="toolweave.toml to check (default: ./toolweave.toml)."),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option("--model", "-m", envvar="TOOLWEAVE_MODEL", help="Model endpoint to reach."),
    ] = None,
    timeout: Annotated[
        float, typer.Option("--timeout", min=0.1, help="Seconds each server or endpoint may take.")
    ] = 20.0,
) -> None:
    """Check Python, extras, toolweave.toml, the embedder, MCP servers and the model endpoint."""
    from rich.markup import escape

    from toolweave.cli.console import make_console
    from toolweave.host.doctor import diagnose

    findings = asyncio.run(diagnose(config, model=model, timeout=timeout))
    console = make_console(highlight=False)
    for finding in findings:
        console.print(
            f"{_MARKS[finding.status]} [bold]{escape(finding.check)}[/bold]: "
            f"{escape(finding.detail)}"
        )
        if finding.status != "ok" and finding.fix:
            console.print(f"    fix: {escape(finding.fix)}")
    failures = sum(f.status == "fail" for f in findings)
    warnings = sum(f.status == "warn" for f in findings)
    console.print(f"{failures} failure(s), {warnings} warning(s)")
    if failures:
        raise typer.Exit(1)
