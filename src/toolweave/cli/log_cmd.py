"""`toolweave log`: print the newest query-log rows of the tool host (or an agent's log file)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer

MAX_ROWS = 1000


def _read_rows(path: Path | None, config: Path | None, limit: int) -> list[Any] | None:
    """The newest rows of the log at `path` or of `config`'s host; None when it has none yet."""
    from toolweave.accounting.query_log import QueryLog
    from toolweave.host.accounting import QUERY_LOG_FILE, query_log_for
    from toolweave.host.config import load_host_config

    if path is not None:
        if not path.is_file():
            raise ValueError(f"no query log at {path}")
        log = QueryLog(path)
    else:
        host_config = load_host_config(config)
        if not host_config.store_dsn:
            file = host_config.data_dir / QUERY_LOG_FILE
            if not file.is_file():
                typer.echo(f"no query log yet at {file} (nothing served with query_log on)")
                return None
        log = query_log_for(host_config)
    try:
        return list(log.recent_sync(limit))
    finally:
        log.close_sync()


def log_command(
    limit: Annotated[
        int, typer.Option("--limit", "-n", min=1, max=MAX_ROWS, help="How many rows to show.")
    ] = 20,
    config: Annotated[
        Path | None,
        typer.Option("--config", "-c", help="toolweave.toml whose query log to read."),
    ] = None,
    path: Annotated[
        Path | None, typer.Option("--path", help="A query-log SQLite file (e.g. an agent's).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per line.")] = False,
) -> None:
    """Show recent queries: served tool calls and agent runs, newest first."""
    from rich.markup import escape
    from rich.table import Table

    from toolweave.cli.console import make_console
    from toolweave.cli.errors import about_file

    fix = "pass --path with a query-log file (or --config with its toolweave.toml)"
    try:
        with about_file(path or "the query log", "a toolweave query log", fix):
            rows = _read_rows(path, config, limit)
        if rows is None:
            return
    except (ValueError, ImportError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    if as_json:
        for row in rows:
            typer.echo(
                json.dumps(
                    {
                        "id": row.id,
                        "started": row.started,
                        "kind": row.kind,
                        "input": row.input,
                        "session_id": row.session_id,
                        "status": row.status,
                        "tool_calls": row.tool_calls,
                        "tools": row.tools,
                        "tokens": row.tokens,
                        "duration": row.duration,
                        "error": row.error,
                    },
                    ensure_ascii=False,
                )
            )
        return
    table = Table("started (UTC)", "status", "session", "input", "tools", "tokens", "seconds")
    for row in rows:
        started = datetime.fromtimestamp(row.started, UTC).strftime("%Y-%m-%d %H:%M:%S")
        text = row.input if len(row.input) <= 60 else row.input[:57] + "..."
        tools = ", ".join(row.tools) + (f" (+{row.tool_calls - 20})" if row.tool_calls > 20 else "")
        # Inputs and names come from clients and models: never Rich markup.
        cells = (started, row.status, row.session_id, text, tools, str(row.tokens))
        table.add_row(*(escape(c) for c in cells), f"{row.duration:.2f}")
    make_console().print(table)
