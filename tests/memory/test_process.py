"""Across processes and runs: a restart between writing and reading, the CLI, and a kill -9 during a
bulk add leaving a consistent database (every batch all there or not at all)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

from toolweave.memory import MemoryManager

TOOLWEAVE = Path(sys.executable).with_name("toolweave")
BATCH = 200


def run_python(code: str, *args: str) -> str:
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return out.stdout


def test_a_new_process_reads_what_another_wrote(tmp_path: Path) -> None:
    db = str(tmp_path / "memory.db")
    written = run_python(
        """
        import asyncio, json, sys
        from toolweave.memory import MemoryManager

        async def main():
            async with MemoryManager(sys.argv[1]) as m:
                ids = [
                    await m.add("我们决定下周二发布2.0版本", "episodic", 0.8),
                    await m.add("The staging database lives on host db-2", "semantic", 0.7),
                    await m.add("白板照片：发布计划", "perceptual", file_path="plan.jpg"),
                ]
                print(json.dumps(ids))

        asyncio.run(main())
        """,
        db,
    )
    ids = json.loads(written)
    read = run_python(
        """
        import asyncio, json, sys
        from toolweave.memory import MemoryManager

        async def main():
            async with MemoryManager(sys.argv[1]) as m:
                print(json.dumps({
                    "release": [h.item.id for h in await m.search("发布", limit=2)],
                    "staging": (await m.search("staging database host", limit=1))[0].item.id,
                    "photo": (await m.get(sys.argv[2])).metadata["modality"],
                    "total": (await m.stats())["total"],
                }))

        asyncio.run(main())
        """,
        db,
        ids[2],
    )
    result = json.loads(read)
    assert set(result["release"]) == {ids[0], ids[2]}
    assert result["staging"] == ids[1]
    assert result["photo"] == "image" and result["total"] == 3


def test_cli_add_search_stats_forget_import(tmp_path: Path) -> None:
    """Each command opens and closes the store on its own, as separate runs do; in-process
    (CliRunner), since six interpreters loading the embedder cost 15 s on 2 cores."""
    from typer.testing import CliRunner

    from toolweave.cli import app

    db = str(tmp_path / "cli.db")

    def invoke(*args: str) -> tuple[int, str, str]:
        result = CliRunner().invoke(app, ["memory", "--db", db, *args])
        return result.exit_code, result.stdout, result.stderr

    def cli(*args: str) -> str:
        code, out, err = invoke(*args)
        assert code == 0, err
        return out

    source = tmp_path / "notes.jsonl"
    source.write_text(
        "\n".join(
            json.dumps(line, ensure_ascii=False)
            for line in [
                {"content": "用户喜欢简洁的回答", "memory_type": "semantic", "importance": 0.9},
                {"content": "Deployed version 1.4 on Monday", "importance": 0.05},
                {"content": "用户喜欢简洁的回答", "memory_type": "semantic"},
            ]
        )
    )
    assert "imported 3 lines as 2 memories" in cli("import", str(source))
    id_ = cli("add", "第一次使用toolweave", "--type", "episodic", "--meta", "source=cli").strip()
    found = json.loads(cli("search", "toolweave", "--json"))
    assert found[0]["id"] == id_ and found[0]["metadata"] == {"source": "cli"}
    stats = json.loads(cli("stats", "--json"))
    assert stats["types"]["semantic"]["count"] == 1 and stats["total"] == 3
    assert "forgot 1 memories" in cli(
        "forget", "--strategy", "importance_based", "--threshold", "0.1"
    )
    code, _, err = invoke("add", "x", "--type", "dream")
    assert code == 2 and "memory_type must be one of" in err


def test_kill_9_during_a_bulk_add_leaves_whole_batches(tmp_path: Path) -> None:
    db = tmp_path / "bulk.db"
    writer = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(
                f"""
                import asyncio, sys
                from toolweave.memory import MemoryManager

                async def main():
                    m = MemoryManager(sys.argv[1], embedder="hash")
                    batch = 0
                    while True:
                        items = [
                            {{"content": f"批次{{batch}} 记录{{i}} token{{batch}}x{{i}}",
                              "memory_type": "episodic"}}
                            for i in range({BATCH})
                        ]
                        await m.add_many(items)
                        batch += 1
                        print(batch, flush=True)

                asyncio.run(main())
                """
            ),
            str(db),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert writer.stdout is not None
    for line in writer.stdout:  # wait for three committed batches; the fourth is in flight
        if int(line) >= 3:
            break
    os.kill(writer.pid, signal.SIGKILL)
    writer.wait(timeout=60)
    assert writer.returncode == -signal.SIGKILL

    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        rows = conn.execute("SELECT count(*) FROM memories").fetchone()[0]
        words = conn.execute("SELECT count(*) FROM memories_words").fetchone()[0]
        trigrams = conn.execute("SELECT count(*) FROM memories_tri").fetchone()[0]
        orphans = conn.execute(
            "SELECT count(*) FROM memories_words WHERE rowid NOT IN (SELECT rowid FROM memories)"
        ).fetchone()[0]
    assert rows >= 3 * BATCH and rows % BATCH == 0
    assert words == trigrams == rows and orphans == 0

    async def check() -> None:
        async with MemoryManager(db, embedder="hash") as m:
            last = rows // BATCH - 1
            hits = await m.search(f"token{last}x7", limit=1, memory_types=["episodic"])
            assert hits[0].item.content == f"批次{last} 记录7 token{last}x7"
            assert (await m.stats())["types"]["episodic"]["count"] == rows
            await m.add("写入仍然可用", "episodic")

    asyncio.run(check())
