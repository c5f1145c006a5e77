"""Ingest throughput of the knowledge base: pages per second for a 500-page corpus, and how much of
the time is spent embedding.

The corpus is built from the committed retrieval corpus (benchmarks/data/rag_corpus): 50
Markdown files of 10 pages, each page about 2,500 characters of its English and Chinese
paragraphs, written to a temporary folder and ingested with `ingest_paths` (conversion,
chunking, embedding, one SQLite transaction per file). The embedding share is the time the
embedder itself ran (measured around each batch) over the whole ingest; everything else is
the pipeline's overhead (reading, chunking, jieba segmentation for FTS5, SQLite writes).

It runs once per embedder: the default WordLlama (static embeddings, very fast) and, when the
`minilm` extra is installed, all-MiniLM-L6-v2 (a transformer). The goal (embedding >= 90% of
ingest time) is about the rest of the pipeline being cheap next to a real embedding model.

Run: .venv/bin/python benchmarks/kb_ingest.py [--embedders auto,minilm] [--pages 500]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import tempfile
import time
from pathlib import Path

from toolweave.kb import KnowledgeBase
from toolweave.kb.ingest import ingest_paths
from toolweave.storage import EmbedderUnavailable

CORPUS = Path(__file__).resolve().parent / "data" / "rag_corpus" / "docs"
PAGE_CHARS = 2500
PAGES_PER_FILE = 10


def paragraphs() -> list[str]:
    found = []
    for path in sorted(CORPUS.glob("*.md")):
        for block in path.read_text(encoding="utf-8").split("\n\n"):
            if block.strip() and not block.startswith("#"):
                found.append(block.strip())
    return found


def write_corpus(folder: Path, pages: int) -> None:
    source = itertools.cycle(paragraphs())
    for f in range(0, pages, PAGES_PER_FILE):
        lines = [f"# Handbook volume {f // PAGES_PER_FILE + 1}"]
        for page in range(f, min(f + PAGES_PER_FILE, pages)):
            lines.append(f"\n## Page {page + 1}\n")
            size = 0
            while size < PAGE_CHARS:
                block = next(source)
                lines.append(f"{block} (p{page + 1})\n")
                size += len(block)
        (folder / f"volume-{f // PAGES_PER_FILE + 1:03d}.md").write_text(
            "\n".join(lines), encoding="utf-8"
        )


async def measure(embedder: str, folder: Path, pages: int) -> tuple[float, float, int]:
    with tempfile.TemporaryDirectory() as tmp:
        kb = KnowledgeBase(Path(tmp) / "kb.db", embedder)
        kb.embedder.embed(["warm up the model", "预热模型"])  # loading is not ingest time
        began = time.perf_counter()
        await ingest_paths(kb, [folder])
        total = time.perf_counter() - began
        chunks = (await kb.stats())["chunks"]
        embedding = kb.embedding_seconds
        await kb.close()
    return total, embedding, chunks


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedders", default="auto,minilm")
    parser.add_argument("--pages", type=int, default=500)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        write_corpus(folder, args.pages)
        size = sum(len(p.read_text(encoding="utf-8")) for p in folder.glob("*.md"))
        print(f"{args.pages} pages in {len(list(folder.glob('*.md')))} files, {size} characters")
        header = ("pages/s", "chunks", "total s", "embed s", "embed %")
        print(f"\n{'embedder':10}" + "".join(f" {h:>8}" for h in header))
        for embedder in args.embedders.split(","):
            try:
                total, embedding, chunks = asyncio.run(measure(embedder, folder, args.pages))
            except EmbedderUnavailable as exc:
                print(f"{embedder:10} skipped: {exc}")
                continue
            share = 100 * embedding / total
            verdict = "met" if share >= 90 else "NOT met"
            print(
                f"{embedder:10} {args.pages / total:8.1f} {chunks:8d} {total:8.2f} "
                f"{embedding:8.2f} {share:7.1f}%  goal >= 90%: {verdict}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
