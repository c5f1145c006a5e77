"""`toolweave memory`: add, search, inspect, forget and bulk-import memories from a terminal.

Every command opens the same store `toolweave serve` uses by default
(`~/.toolweave/memory.db`), or another with `toolweave memory --db PATH ...`, or Postgres +
Qdrant with `--dsn` and `--qdrant-url` (store options come before the command). `import`
reads JSON Lines (one object of `add` arguments per line) or plain text (one memory per line),
writes one transaction per batch and shows a Rich progress bar.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from toolweave.cli.literal_help import LiteralHelpTyper
from toolweave.memory.types import FORGET_STRATEGIES, MEMORY_TYPES
from toolweave.storage.retrieval.embed_guard import (
    DEFAULT_EMBED_ATTEMPTS,
    DEFAULT_EMBED_BACKOFF,
    DEFAULT_EMBED_RECHECK,
    MAX_EMBED_ATTEMPTS,
)

if TYPE_CHECKING:
    from toolweave.memory import MemoryManager

T = TypeVar("T")
DEFAULT_DB = "~/.toolweave/memory.db"
_ITEM_ERROR = re.compile(r"^items\[(\d+)\]:?(.*)$", re.DOTALL)
DEFAULT_IMPORT_BATCH = 500
EMBEDDER_FIX = "drop --embedder (auto is WordLlama) or pass the one the store was made with"

memory_app = LiteralHelpTyper(no_args_is_help=True)

_json = typer.Option(False, "--json", help="Print JSON.")


@memory_app.callback()
def store(
    ctx: typer.Context,
    db: str = typer.Option(DEFAULT_DB, "--db", help="SQLite file of the store."),
    user: str = typer.Option("default", "--user", "-u", help="Whose memories."),
    embedder: str = typer.Option(
        "auto",
        "--embedder",
        help="auto (WordLlama), wordllama, minilm, e5, use (multilingual), hash[:dim] or"
        " openai-compat:<url>#<model>.",
    ),
    dsn: str | None = typer.Option(None, "--dsn", help="Postgres DSN (needs --qdrant-url)."),
    qdrant_url: str | None = typer.Option(None, "--qdrant-url", help="Qdrant URL (with --dsn)."),
    embed_attempts: int = typer.Option(
        DEFAULT_EMBED_ATTEMPTS,
        "--embed-attempts",
        min=1,
        max=MAX_EMBED_ATTEMPTS,
        metavar="<int>",
        help="Tries of one embedding call before search falls back to keywords.",
    ),
    embed_backoff: float = typer.Option(
        DEFAULT_EMBED_BACKOFF,
        "--embed-backoff",
        min=0.0,
        metavar="<float>",
        help="Seconds before the second try, doubled before each further one.",
    ),
    embed_recheck: float = typer.Option(
        DEFAULT_EMBED_RECHECK,
        "--embed-recheck",
        min=0.0,
        metavar="<float>",
        help="Seconds of keyword-only search before a failed embedder is tried again.",
    ),
) -> None:
    """Long-term memory: add, search, stats, forget, import. Store options go before the
    command: toolweave memory --db notes.db search "..."."""
    ctx.obj = {
        "path": Path(db).expanduser(),
        "user_id": user,
        "embedder": embedder,
        "dsn": dsn,
        "qdrant_url": qdrant_url,
        "embed_retry": (embed_attempts, embed_backoff, embed_recheck),
    }


def _run(ctx: typer.Context, work: Callable[[MemoryManager], Awaitable[T]]) -> T:
    from toolweave.cli.errors import about_file, existing_parent, fail
    from toolweave.memory import MemoryManager
    from toolweave.storage.errors import DimensionMismatch
    from toolweave.storage.retrieval import EmbedRetry, IndexSettings

    options = ctx.obj
    path: Path = options["path"]
    if options["dsn"] is None and path != Path(DEFAULT_DB).expanduser():
        existing_parent(path, "--db")

    async def main() -> T:
        index = IndexSettings(
            dsn=options["dsn"],
            qdrant_url=options["qdrant_url"],
            embed_retry=EmbedRetry(*options["embed_retry"]),
        )
        manager = MemoryManager(path, options["user_id"], options["embedder"], index=index)
        try:
            return await work(manager)
        finally:
            await manager.close()

    fix = "pass --db with a memory store's file (toolweave memory --db PATH ...)"
    try:
        with about_file(path, "a toolweave memory store", fix):
            return asyncio.run(main())
    except DimensionMismatch as exc:
        raise fail(f"{exc} From toolweave memory: {EMBEDDER_FIX}.") from None
    except ValueError as exc:
        raise fail(str(exc)) from None


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
    ctx: typer.Context,
    content: str = typer.Argument(..., help="The memory's text."),
    memory_type: str = typer.Option(
        "episodic", "--type", "-t", help=f"One of: {', '.join(MEMORY_TYPES)}."
    ),
    importance: float | None = typer.Option(
        None, "--importance", "-i", help="0 to 1 (default 0.5)."
    ),
    meta: Annotated[
        list[str] | None, typer.Option("--meta", help="key=value metadata (repeatable).")
    ] = None,
) -> None:
    """Add one memory and print its id (default type episodic: working memory would end with
    this process). Text already stored prints the existing id, says so, and takes the
    --importance and --meta given."""
    metadata = _parse_meta(meta or [])

    async def add_or_update(manager: MemoryManager) -> tuple[str, bool]:
        before = (await manager.stats())["total"]
        if importance is None:
            id_ = await manager.add(content, memory_type, metadata=metadata)
        else:
            id_ = await manager.add(content, memory_type, importance, metadata)
        existed = (await manager.stats())["total"] == before  # identical text is stored once
        if existed and (importance is not None or metadata):
            await manager.update(id_, importance=importance, metadata=metadata or None)
        return id_, existed

    id_, existed = _run(ctx, add_or_update)
    typer.echo(id_)
    if existed:
        changed = (("importance", importance is not None), ("metadata", bool(metadata)))
        given = " and ".join(name for name, on in changed if on)
        note = f"; its {given} updated" if given else ""
        typer.echo(f"already stored: the existing memory's id{note}", err=True)


@memory_app.command("search")
def search(
    ctx: typer.Context,
    query: str = typer.Argument(..., help="What to recall."),
    limit: int = typer.Option(5, "--limit", "-n", min=1, help="Most memories to show."),
    memory_type: Annotated[
        list[str] | None, typer.Option("--type", "-t", help="Restrict to types.")
    ] = None,
    explain: bool = typer.Option(False, "--explain", help="Show why each memory was recalled."),
    session: str | None = typer.Option(
        None, "--session", help="Only memories made in this conversation (its session id)."
    ),
    since: str | None = typer.Option(
        None, "--since", help="Only what happened at or after this ISO 8601 time."
    ),
    until: str | None = typer.Option(
        None, "--until", help="Only what happened at or before this ISO 8601 time."
    ),
    as_json: bool = _json,
) -> None:
    """Search memories (keywords and meaning, ranked by the type formulas)."""
    hits = _run(
        ctx,
        lambda m: m.search(
            query,
            limit,
            memory_type or None,
            explain=explain,
            session_id=session,
            since=since,
            until=until,
        ),
    )
    if hits.warning:
        typer.echo(f"warning: {hits.warning}", err=True)
    if as_json:
        rows = [{**h.item.to_dict(), "score": h.score, "explanation": h.explanation} for h in hits]
        typer.echo(json.dumps(rows, ensure_ascii=False, indent=2))
        return
    from rich.markup import escape
    from rich.table import Table

    from toolweave.cli.console import make_console

    table = Table(title=escape(f"{len(hits)} memories for {query!r}"))
    for column in ("score", "type", "importance", "content", "id"):
        table.add_column(column)
    for h in hits:
        table.add_row(
            f"{h.score:.3f}",
            h.item.memory_type,
            f"{h.item.importance:.2f}",
            escape(h.item.content),
            h.item.id,
        )
    console = make_console()
    console.print(table)
    if explain:
        for h in hits:
            console.print(h.item.id, json.dumps(h.explanation, ensure_ascii=False))


@memory_app.command("stats")
def stats(
    ctx: typer.Context,
    as_json: bool = _json,
) -> None:
    """Counts per memory type, the store and the embedder its vectors were made with."""
    result = _run(ctx, lambda m: m.stats())
    if result["opened_with"] != result["embedder"]:
        typer.echo(
            f"warning: --embedder {ctx.obj['embedder']} makes {result['opened_with']} vectors, "
            f"but this store's were made with {result['embedder']}, so search and add would "
            f"refuse it; {EMBEDDER_FIX}",
            err=True,
        )
    if as_json:
        typer.echo(json.dumps(result, ensure_ascii=False, indent=2))
        return
    for kind, counts in result["types"].items():
        typer.echo(f"{kind:<11} {counts['count']}")
    typer.echo(f"total       {result['total']}  ({result['store']}, {result['embedder']})")


@memory_app.command("forget")
def forget(
    ctx: typer.Context,
    strategy: str = typer.Option(
        "importance_based", "--strategy", "-s", help=f"One of: {', '.join(FORGET_STRATEGIES)}."
    ),
    threshold: float = typer.Option(
        0.1, "--threshold", help="importance_based: forget memories below this importance (0-1)."
    ),
    max_age_days: float = typer.Option(
        30, "--max-age-days", help="time_based: forget memories older than this many days."
    ),
) -> None:
    """Delete memories by importance, age or capacity; prints how many."""
    count = _run(ctx, lambda m: m.forget(strategy, threshold, max_age_days))
    typer.echo(f"forgot {count} memories ({strategy})")


def _read_items(path: Path, memory_type: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """Each item to import with its 1-based line number (what every error names)."""
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            if path.suffix in (".jsonl", ".ndjson"):
                try:
                    item = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise ValueError(f"{path}:{number}: not JSON: {exc}") from None
                if not isinstance(item, dict):
                    raise ValueError(f"{path}:{number}: each line must be a JSON object")
                item.setdefault("memory_type", memory_type)
                yield number, item
            else:
                yield number, {"content": line.strip(), "memory_type": memory_type}


@memory_app.command("import")
def import_(
    ctx: typer.Context,
    path: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help=".jsonl or text file.")],
    memory_type: str = typer.Option("episodic", "--type", "-t", help="Type of lines without one."),
    batch_size: int = typer.Option(DEFAULT_IMPORT_BATCH, "--batch-size", min=1),
) -> None:
    """Bulk-add memories, one transaction per batch, with a progress bar."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TimeRemainingColumn,
    )

    from toolweave.cli.errors import fail

    try:
        numbered = list(_read_items(path, memory_type))
    except ValueError as exc:  # one line, as a bad item's: `file:line: what is wrong`
        raise fail(str(exc)) from None
    items = [item for _, item in numbered]

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
                try:
                    added.update(await manager.add_many(batch))
                except ValueError as exc:  # `items[i]: ...` of this batch, as a line number
                    bad = _ITEM_ERROR.match(str(exc))
                    if bad is None:
                        raise
                    line = numbered[start + int(bad.group(1))][0]
                    raise ValueError(f"{path}:{line}:{bad.group(2)}") from None
                progress.advance(task, len(batch))
        return len(added)

    count = _run(ctx, work)
    typer.echo(f"imported {len(items)} lines as {count} memories")
