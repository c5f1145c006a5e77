"""`toolweave memory`: add, search, inspect, forget and bulk-import memories from a terminal.

Every command opens the same store `toolweave serve` uses by default
(`~/.toolweave/memory.db`), or another with `--db`, or Postgres + Qdrant with `--dsn` and
`--qdrant-url`. `import` reads JSON Lines (one object of `add` arguments per line) or plain text
(one memory per line), writes one transaction per batch and shows a Rich progress bar.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

if TYPE_CHECKING:
    from toolweave.memory import MemoryManager

T = TypeVar("T")
DEFAULT_DB = "~/.toolweave/memory.db"
DEFAULT_IMPORT_BATCH = 500

memory_app = typer.Typer(help="Long-term memory: add, search, stats, forget, import.")

_db = typer.Option(DEFAULT_DB, "--db", help="SQLite file of the store.")
_user = typer.Option("default", "--user", "-u", help="Whose memories.")
_embedder = typer.Option("auto", "--embedder", help="auto, minilm, hash, openai-compat:<url>#<m>")
_dsn = typer.Option(None, "--dsn", help="Postgres DSN (scale-out backend; needs --qdrant-url).")
_qdrant = typer.Option(None, "--qdrant-url", help="Qdrant URL for the scale-out backend.")
_json = typer.Option(False, "--json", help="Print JSON.")


def _run(
    db: str,
    user: str,
    embedder: str,
    dsn: str | None,
    qdrant_url: str | None,
    work: Callable[[MemoryManager], Awaitable[T]],
) -> T:
    from toolweave.memory import MemoryManager

    path = Path(db).expanduser()

    async def main() -> T:
        manager = MemoryManager(
            path, user_id=user, embedder=embedder, dsn=dsn, qdrant_url=qdrant_url
        )
        try:
            return await work(manager)
        finally:
            await manager.close()

    try:
        return asyncio.run(main())
    except ValueError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None


def _parse_meta(pairs: list[str]) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise typer.BadParameter(f"--meta {pair!r}: write key=value", param_hint="--meta")
        meta[key] = value
    return meta


@memory_app.command("add")
def add(
    content: str = typer.Argument(..., help="The memory's text."),
    memory_type: str = typer.Option("episodic", "--type", "-t", help="Memory type."),
    importance: float = typer.Option(0.5, "--importance", "-i", help="0 to 1."),
    meta: Annotated[
        list[str] | None, typer.Option("--meta", help="key=value metadata (repeatable).")
    ] = None,
    db: str = _db,
    user: str = _user,
    embedder: str = _embedder,
    dsn: str | None = _dsn,
    qdrant_url: str | None = _qdrant,
) -> None:
    """Add one memory and print its id (working memory lasts only this process; use another
    type here)."""
    metadata = _parse_meta(meta or [])
    id_ = _run(
        db,
        user,
        embedder,
        dsn,
        qdrant_url,
        lambda m: m.add(content, memory_type, importance, metadata),
    )
    typer.echo(id_)


@memory_app.command("search")
def search(
    query: str = typer.Argument(..., help="What to recall."),
    limit: int = typer.Option(5, "--limit", "-n"),
    memory_type: Annotated[
        list[str] | None, typer.Option("--type", "-t", help="Restrict to types.")
    ] = None,
    explain: bool = typer.Option(False, "--explain", help="Show why each memory was recalled."),
    as_json: bool = _json,
    db: str = _db,
    user: str = _user,
    embedder: str = _embedder,
    dsn: str | None = _dsn,
    qdrant_url: str | None = _qdrant,
) -> None:
    """Search memories (keywords and meaning, ranked by the type formulas)."""
    hits = _run(
        db,
        user,
        embedder,
        dsn,
        qdrant_url,
        lambda m: m.search(query, limit, memory_type or None, explain=explain),
    )
    if as_json:
        rows = [{**h.item.to_dict(), "score": h.score, "explanation": h.explanation} for h in hits]
        typer.echo(json.dumps(rows, ensure_ascii=False, indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"{len(hits)} memories for {query!r}")
    for column in ("score", "type", "importance", "content", "id"):
        table.add_column(column)
    for h in hits:
        table.add_row(
            f"{h.score:.3f}",
            h.item.memory_type,
            f"{h.item.importance:.2f}",
            h.item.content,
            h.item.id,
        )
    console = Console()
    console.print(table)
    if explain:
        for h in hits:
            console.print(h.item.id, json.dumps(h.explanation, ensure_ascii=False))


@memory_app.command("stats")
def stats(
    as_json: bool = _json,
    db: str = _db,
    user: str = _user,
    embedder: str = _embedder,
    dsn: str | None = _dsn,
    qdrant_url: str | None = _qdrant,
) -> None:
    """Counts per memory type, the store and the embedder."""
    result = _run(db, user, embedder, dsn, qdrant_url, lambda m: m.stats())
    if as_json:
        typer.echo(json.dumps(result, ensure_ascii=False, indent=2))
        return
    for kind, counts in result["types"].items():
        typer.echo(f"{kind:<11} {counts['count']}")
    typer.echo(f"total       {result['total']}  ({result['store']}, {result['embedder']})")


@memory_app.command("forget")
def forget(
    strategy: str = typer.Option("importance_based", "--strategy", "-s"),
    threshold: float = typer.Option(0.1, "--threshold"),
    max_age_days: float = typer.Option(30, "--max-age-days"),
    db: str = _db,
    user: str = _user,
    embedder: str = _embedder,
    dsn: str | None = _dsn,
    qdrant_url: str | None = _qdrant,
) -> None:
    """Delete memories by importance, age or capacity; prints how many."""
    count = _run(
        db, user, embedder, dsn, qdrant_url, lambda m: m.forget(strategy, threshold, max_age_days)
    )
    typer.echo(f"forgot {count} memories ({strategy})")


def _read_items(path: Path, memory_type: str) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            if path.suffix in (".jsonl", ".ndjson"):
                try:
                    item = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise typer.BadParameter(f"{path}:{number}: not JSON: {exc}") from None
                if not isinstance(item, dict):
                    raise typer.BadParameter(f"{path}:{number}: each line must be a JSON object")
                item.setdefault("memory_type", memory_type)
                yield item
            else:
                yield {"content": line.strip(), "memory_type": memory_type}


@memory_app.command("import")
def import_(
    path: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help=".jsonl or text file.")],
    memory_type: str = typer.Option("episodic", "--type", "-t", help="Type of lines without one."),
    batch_size: int = typer.Option(DEFAULT_IMPORT_BATCH, "--batch-size", min=1),
    db: str = _db,
    user: str = _user,
    embedder: str = _embedder,
    dsn: str | None = _dsn,
    qdrant_url: str | None = _qdrant,
) -> None:
    """Bulk-add memories, one transaction per batch, with a progress bar."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TimeRemainingColumn,
    )

    items = list(_read_items(path, memory_type))

    async def work(manager: MemoryManager) -> int:
        added: set[str] = set()
        columns = (
            *Progress.get_default_columns()[:-1],
            MofNCompleteColumn(),
            TimeRemainingColumn(),
        )
        with Progress(*columns[:1], BarColumn(), *columns[2:]) as progress:
            task = progress.add_task(f"importing {path.name}", total=len(items))
            for start in range(0, len(items), batch_size):
                batch = items[start : start + batch_size]
                added.update(await manager.add_many(batch))
                progress.advance(task, len(batch))
        return len(added)

    count = _run(db, user, embedder, dsn, qdrant_url, work)
    typer.echo(f"imported {len(items)} lines as {count} memories")
