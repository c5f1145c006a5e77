"""`toolweave kb`: ingest documents into the knowledge base, search it, inspect and prune it.

The commands open the same store `toolweave serve` uses (`[kb]` and `[serve].data_dir` of
toolweave.toml), so what is ingested here is what the `kb` provider serves. `ingest` shows a
Rich progress bar per stage (files, embeddings of the current file) and prints each file's
conversion report; an interrupted ingest resumes on the next run (unchanged files are skipped).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from rich.markup import escape
from rich.table import Table

from toolweave.cli.console import make_console
from toolweave.cli.errors import about_file, fail
from toolweave.cli.literal_help import LiteralHelpTyper
from toolweave.errors import ToolweaveError

if TYPE_CHECKING:
    from toolweave.kb import KnowledgeBase

T = TypeVar("T")

kb_app = LiteralHelpTyper(
    help="Ingest, search and manage the knowledge base.", no_args_is_help=True
)

ConfigOption = Annotated[
    Path | None,
    typer.Option("--config", "-c", help="toolweave.toml to use (default: ./toolweave.toml)."),
]
NamespaceOption = Annotated[
    str | None,
    typer.Option("--namespace", "-n", help="Collection to use (default: [kb].namespace)."),
]


def _open(config: Path | None, namespace: str | None) -> KnowledgeBase:
    from toolweave.host import load_host_config
    from toolweave.host.providers.kb import kb_settings, open_knowledge_base

    try:
        host = load_host_config(config)
        settings = kb_settings(host)
        if namespace is not None:
            settings = settings.model_copy(update={"namespace": namespace})
        return open_knowledge_base(host, settings)
    except ToolweaveError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None


def _fail(exc: Exception) -> typer.Exit:
    """A mistake in what was passed (a path, a mode, a namespace, a file): exit 2, as every
    usage error of the command line does."""
    return fail(str(exc))


def _with_kb(
    config: Path | None, namespace: str | None, work: Callable[[KnowledgeBase], Awaitable[T]]
) -> T:
    """Open the knowledge base, run `work` on it, close it; its errors exit 2 with the message."""
    fix = "pass --config with the toolweave.toml whose [serve].data_dir holds kb.db"
    with about_file("the knowledge base", "a toolweave knowledge base", fix):
        kb = _open(config, namespace)

    async def run() -> T:
        try:
            return await work(kb)
        finally:
            await kb.close()

    where = getattr(kb, "path", None) or "the knowledge base"
    try:
        with about_file(where, "a toolweave knowledge base", fix):
            return asyncio.run(run())
    except ToolweaveError as exc:
        raise _fail(exc) from None


@kb_app.command("ingest")
def ingest(
    paths: Annotated[list[Path], typer.Argument(help="Files and folders to add.")],
    namespace: NamespaceOption = None,
    config: ConfigOption = None,
) -> None:
    """Add documents (PDF, Word, PowerPoint, Excel, HTML, Markdown, text) to the knowledge base."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from toolweave.kb import DocumentError
    from toolweave.kb.ingest import collect_files, ingest_paths

    console = make_console(stderr=True)
    try:
        files = collect_files(paths)
    except DocumentError as exc:
        raise _fail(exc) from None
    chunks = 0

    async def run(kb: KnowledgeBase) -> Any:
        nonlocal chunks
        with Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            console=console,
        ) as progress:
            file_bar = progress.add_task("files", total=len(files))
            chunk_bar = progress.add_task("chunks written", total=None)
            embed_bar = progress.add_task("embeddings (this file)", total=None)

            def on_embed(done: int, total: int) -> None:
                progress.update(embed_bar, completed=done, total=total)

            def on_file(path: Path, outcome: Any) -> None:
                nonlocal chunks
                progress.advance(file_bar)
                if isinstance(outcome, DocumentError):
                    progress.console.print(f"[red]skipped[/] {escape(outcome.message)}")
                    return
                written = outcome.chunks if outcome.status in ("added", "replaced") else 0
                chunks += written
                progress.update(chunk_bar, completed=chunks)
                line = f"{outcome.status:9} {escape(outcome.report.summary())}"
                progress.console.print(line + f", {outcome.chunks} chunks")
                for warning in outcome.report.warnings:
                    progress.console.print(f"          [yellow]warning:[/] {escape(warning)}")

            # the paths, not `files`: folders are then read beneath their root, never via a link
            return await ingest_paths(kb, paths, on_file=on_file, on_embed=on_embed)

    summary = _with_kb(config, namespace, run)
    new = sum(1 for r in summary.added if r.status in ("added", "replaced"))
    console.print(
        f"{len(files)} files: {new} added or replaced, {len(summary.added) - new} unchanged or "
        f"duplicate, {len(summary.failed)} skipped; {chunks} chunks written"
    )
    if summary.failed:
        raise typer.Exit(1)


@kb_app.command("search")
def search(
    query: Annotated[str, typer.Argument(help="What to look for.")],
    k: Annotated[int, typer.Option("-k", help="How many passages.")] = 5,
    mode: Annotated[str, typer.Option(help="hybrid, keyword or vector.")] = "hybrid",
    as_json: Annotated[bool, typer.Option("--json", help="Print the hits as JSON.")] = False,
    namespace: NamespaceOption = None,
    config: ConfigOption = None,
) -> None:
    """Search the knowledge base and print the best passages with where they come from."""
    hits = _with_kb(
        config,
        namespace,
        lambda kb: kb.search(query, k=k, mode=mode),  # type: ignore[arg-type]
    )
    if hits.warning:
        typer.echo(f"warning: {hits.warning}", err=True)
    if as_json:
        rows = [h.as_json() for h in hits]
        typer.echo(json.dumps(rows, ensure_ascii=False, indent=2))
        return
    console = make_console()
    if not hits:
        console.print("no matches")
    for i, hit in enumerate(hits, start=1):
        console.print(f"[bold]{i}. {escape(hit.citation)}[/]  [dim]{hit.doc_id} {hit.score:.4f}[/]")
        console.print(escape(hit.text), highlight=False)
        console.print()


@kb_app.command("stats")
def stats(namespace: NamespaceOption = None, config: ConfigOption = None) -> None:
    """Documents and chunks in the knowledge base, and each document."""

    async def run(kb: KnowledgeBase) -> Any:
        return await kb.stats(), await kb.documents()

    numbers, documents = _with_kb(config, namespace, run)
    if numbers["opened_with"] != numbers["embedder"]:
        typer.echo(
            f"warning: [kb].embedder makes {numbers['opened_with']} vectors, but this store's "
            f"were made with {numbers['embedder']}: set [kb].embedder to match",
            err=True,
        )
    table = Table(
        title=escape(
            f"namespace {numbers['namespace']}: {numbers['documents']} documents, "
            f"{numbers['chunks']} chunks ({numbers['embedder']})"
        )
    )
    for column in ("doc_id", "title", "chunks", "source"):
        table.add_column(column)
    for doc in documents:  # titles and paths come from the documents: never Rich markup
        cells = (doc.doc_id, doc.title, str(doc.chunks), doc.source or "(text)")
        table.add_row(*(escape(cell) for cell in cells))
    make_console().print(table)


@kb_app.command("remove")
def remove(
    doc_ids: Annotated[list[str], typer.Argument(help="Document ids (see `toolweave kb stats`).")],
    namespace: NamespaceOption = None,
    config: ConfigOption = None,
) -> None:
    """Remove documents and their chunks."""

    async def run(kb: KnowledgeBase) -> list[bool]:
        return [await kb.remove(doc_id) for doc_id in doc_ids]

    removed = _with_kb(config, namespace, run)
    for doc_id, done in zip(doc_ids, removed, strict=True):
        typer.echo(f"{'removed' if done else 'not found'} {doc_id}")
    if not all(removed):
        raise typer.Exit(1)
