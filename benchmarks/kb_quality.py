"""Retrieval quality of the knowledge base: hit@5 and MRR for keyword, vector and hybrid search.

The corpus is the project's own, committed in benchmarks/data/rag_corpus: 41 Markdown documents
(20 English, 21 Chinese: databases, networking, cooking, geography, culture...) and 122
questions, each labelled with its document and the exact answer span. 86 are "direct" (they
reword the answer but keep its key terms: "How often should I water a cactus in winter?") and
36 "paraphrase" (written to avoid the answer's words, as a user who does not know the text
asks: "What should I do with the water collected under the flower pot?"). A question
counts as a hit at rank r when the r-th passage comes from the labelled document and its span
covers the answer. Everything runs offline on the embedded defaults (SQLite, jieba FTS5,
WordLlama vectors, weighted score fusion); pass `--embedder hash` to compare the
dependency-free fallback.

Goal (issue 14): hybrid hit@5 >= 0.95 and better than either mode alone.

Run: .venv/bin/python benchmarks/kb_quality.py
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from collections import Counter
from pathlib import Path

from toolweave.kb import KnowledgeBase

CORPUS = Path(__file__).resolve().parent / "data" / "rag_corpus"
MODES = ("keyword", "vector", "hybrid")
K = 5


async def evaluate(embedder: str) -> dict[str, dict[str, float]]:
    questions = json.loads((CORPUS / "questions.json").read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory() as tmp:
        kb = KnowledgeBase(Path(tmp) / "kb.db", embedder)
        doc_ids: dict[str, str] = {}
        texts: dict[str, str] = {}
        for path in sorted((CORPUS / "docs").glob("*.md")):
            doc_ids[path.name] = (await kb.add_file(path)).doc_id
            texts[path.name] = path.read_text(encoding="utf-8")
        kinds = Counter(q["kind"] for q in questions)
        stats = await kb.stats()
        print(
            f"{stats['documents']} documents, {stats['chunks']} chunks, {len(questions)} questions"
        )
        results: dict[str, dict[str, float]] = {}
        for mode in MODES:
            hits: dict[str, int] = {}
            reciprocal = 0.0
            began = time.perf_counter()
            misses: list[str] = []
            for q in questions:
                start = texts[q["doc"]].index(q["answer"])
                end = start + len(q["answer"])
                found = await kb.search(q["question"], k=K, mode=mode)
                rank = next(
                    (
                        r
                        for r, h in enumerate(found, start=1)
                        if h.doc_id == doc_ids[q["doc"]] and h.start <= start and end <= h.end
                    ),
                    None,
                )
                if rank is not None:
                    hits[q["kind"]] = hits.get(q["kind"], 0) + 1
                    reciprocal += 1.0 / rank
                else:
                    misses.append(q["question"])
            elapsed = time.perf_counter() - began
            results[mode] = {
                "hit@5": sum(hits.values()) / len(questions),
                "mrr": reciprocal / len(questions),
                "ms_per_query": 1000 * elapsed / len(questions),
                **{f"hit@5 {kind}": hits.get(kind, 0) / kinds[kind] for kind in kinds},
            }
            if misses:
                print(f"  {mode} misses: " + " | ".join(misses))
        await kb.close()
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedder", default="auto", help="embedder spec (default: auto)")
    args = parser.parse_args()
    results = asyncio.run(evaluate(args.embedder))
    print(
        f"\n{'mode':8} {'hit@5':>6} {'MRR':>6} {'direct':>7} {'paraphr.':>8} {'ms/query':>9}"
        f"   (embedder {args.embedder}; hit@5 of all, direct and paraphrased questions)"
    )
    for mode in MODES:
        r = results[mode]
        print(
            f"{mode:8} {r['hit@5']:6.3f} {r['mrr']:6.3f} {r['hit@5 direct']:7.3f} "
            f"{r['hit@5 paraphrase']:8.3f} {r['ms_per_query']:9.2f}"
        )
    hybrid = results["hybrid"]["hit@5"]
    best_single = max(results["keyword"]["hit@5"], results["vector"]["hit@5"])
    met = hybrid >= 0.95 and hybrid > best_single
    print(
        f"\ngoal hybrid hit@5 >= 0.95 and > max(keyword, vector) = {best_single:.3f}: "
        f"{'met' if met else 'NOT met'}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
