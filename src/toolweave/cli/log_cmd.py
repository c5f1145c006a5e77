"""`toolweave log`: print the newest query-log rows of the tool host (or an agent's log file),
filtered by tool, client, time and outcome; `--approvals` prints the approval decisions."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer

MAX_ROWS = 1000


def _read_rows(
    path: Path | None, config: Path | None, limit: int, approvals: bool, filters: dict[str, Any]
) -> list[Any] | None:
    """The newest rows (or approval decisions) of the log at `path` or of `config`'s host that
    match `filters`; None when it has none yet."""
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
        if approvals:
            tool, client, since = (filters.get(k) for k in ("tool", "client", "since"))
            return log.approvals_sync(limit=limit, tool=tool, requester=client, since=since)
        return log.search_sync(limit=limit, **filters)
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
    tool: Annotated[
        str | None, typer.Option("--tool", help="Only calls of this tool (or runs that called it).")
    ] = None,
    client: Annotated[
        str | None,
        typer.Option("--client", help="Only this caller (a [serve.tokens] client, an address)."),
    ] = None,
    since: Annotated[
        str | None,
        typer.Option("--since", help="Only since then: an ISO 8601 time or a span (2h, 7d)."),
    ] = None,
    outcome: Annotated[
        str | None,
        typer.Option(
            "--outcome", help="ran, failed, stopped, refused, or refused:<stage> (e.g. approval)."
        ),
    ] = None,
    approvals: Annotated[
        bool,
        typer.Option("--approvals", help="Show the approval decisions: who decided what, when."),
    ] = False,
) -> None:
    """Show recent queries: served tool calls and agent runs, newest first: who asked, the
    outcome (ran, failed, refused by which stage); or, with --approvals, every approval
    decision."""
    from rich.markup import escape
    from rich.table import Table

    from toolweave.cli.console import make_console
    from toolweave.cli.errors import about_file

    fix = "pass --path with a query-log file (or --config with its toolweave.toml)"
    try:
        with about_file(path or "the query log", "a toolweave query log", fix):
            filters = {"tool": tool, "client": client, "since": since, "outcome": outcome}
            rows = _read_rows(path, config, limit, approvals, filters)
        if rows is None:
            return
    except (ValueError, ImportError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    if as_json:
        for row in rows:
            typer.echo(json.dumps(dataclasses.asdict(row), ensure_ascii=False))
        return
    if approvals:
        table = Table("decided (UTC)", "decision", "decided by", "tool", "arguments", "requester")
        for item in rows:
            args = item.args if len(item.args) <= 60 else item.args[:57] + "..."
            cells = (_when(item.decided), item.decision, item.decided_by, item.tool, args)
            table.add_row(*(escape(c) for c in (*cells, item.requester or item.session_id)))
        make_console().print(table)
        return
    table = Table(
        "started (UTC)", "outcome", "client", "session", "input", "tools", "tokens", "seconds"
    )
    for row in rows:
        text = row.input if len(row.input) <= 60 else row.input[:57] + "..."
        tools = ", ".join(row.tools) + (f" (+{row.tool_calls - 20})" if row.tool_calls > 20 else "")
        # Inputs and names come from clients and models: never Rich markup.
        outcome_text = row.outcome or row.status
        row_cells = (_when(row.started), outcome_text, row.client, row.session_id, text, tools)
        table.add_row(*(escape(c) for c in row_cells), str(row.tokens), f"{row.duration:.2f}")
    make_console().print(table)


def _when(stamp: float) -> str:
    return datetime.fromtimestamp(stamp, UTC).strftime("%Y-%m-%d %H:%M:%S")
