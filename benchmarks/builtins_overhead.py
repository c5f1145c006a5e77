"""What the built-ins' safety costs: each guarded tool against the same work done unguarded,
in one run.

- `read_file` (the jail: openat2 beneath the root's descriptor, a non-blocking open and fstat,
  UTF-8 cut handling, output boundary) vs
  `asyncio.to_thread(Path.read_text)` on the same 4 KiB file;
- `sql_query` on SQLite (mode=ro, authorizer, progress-handler deadline, table formatting) vs
  the same SELECT through a plain `SQLiteDatabase.run` (same worker-thread plumbing);
- `bash` called approved (the bubblewrap sandbox with its seccomp filter, own process group,
  pidfd exit wait, kill of the group, bounded capture; the rule decision is governance's and
  not in this number) vs `asyncio.create_subprocess_exec("bash", "-c", ...)`;
- the sandbox alone: the same `bash` tool with `sandbox="on"` vs `sandbox="off"` (approved, so
  both run the same process handling; the difference is bubblewrap's namespaces, mounts and
  filter).

Rounds alternate which side goes first and each ratio is the median of per-round ratios, so a
neighbour stealing CPU hurts both alike; compare ratios, not absolute numbers.

Run: .venv/bin/python benchmarks/builtins_overhead.py
"""

from __future__ import annotations

import asyncio
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from toolweave.builtins import SQLReader, filesystem_tools, shell_tool
from toolweave.storage import SQLiteDatabase
from toolweave.tools import ToolContext

ROUNDS = 5


async def timed(fn: Callable[[], Awaitable[object]], calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        await fn()
    return (time.perf_counter() - start) / calls


async def compare(
    name: str,
    guarded: Callable[[], Awaitable[object]],
    floor: Callable[[], Awaitable[object]],
    calls: int,
) -> None:
    await guarded(), await floor()  # warm up (imports, first connection)
    ratios, ours, theirs = [], [], []
    for index in range(ROUNDS):
        if index % 2:
            a, b = await timed(guarded, calls), await timed(floor, calls)
        else:
            b, a = await timed(floor, calls), await timed(guarded, calls)
        ours.append(a)
        theirs.append(b)
        ratios.append(a / b)
    print(
        f"{name:<10} guarded {statistics.median(ours) * 1e6:9.1f} µs   unguarded "
        f"{statistics.median(theirs) * 1e6:9.1f} µs   ratio {statistics.median(ratios):5.2f}x"
    )


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "notes.md").write_text("中文 and English text.\n" * 150, encoding="utf-8")
        read_file = {t.name: t for t in filesystem_tools(root)}["read_file"]
        ctx = ToolContext()

        async def guarded_read() -> object:
            return await read_file.execute({"path": "notes.md"}, ctx)

        async def plain_read() -> object:
            return await asyncio.to_thread((root / "notes.md").read_text, "utf-8")

        await compare("read_file", guarded_read, plain_read, 300)

        db_path = root / "shop.db"
        with sqlite3.connect(db_path) as conn:
            conn.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT, price REAL)")
            conn.executemany(
                "INSERT INTO items VALUES (?, ?, ?)",
                [(i, f"item {i}", i * 1.5) for i in range(1000)],
            )
        conn.close()
        query = "SELECT id, name, price FROM items WHERE price > 100 ORDER BY id LIMIT 20"
        reader = SQLReader(f"sqlite:///{db_path}")
        plain = SQLiteDatabase(db_path)

        async def guarded_sql() -> object:
            return await reader.query(query)

        async def plain_sql() -> object:
            return await plain.run(lambda c: c.execute(query).fetchall())

        await compare("sql_query", guarded_sql, plain_sql, 300)
        await reader.close()
        await plain.close()

        command = {"command": "echo 你好 && echo done"}
        approved = ToolContext(tool_call_approved=True)
        bash = shell_tool(root, allow=["echo *"])
        bare = shell_tool(root, allow=["echo *"], sandbox="off")

        async def guarded_shell() -> object:
            return await bash.execute(command, approved)

        async def unsandboxed_shell() -> object:
            return await bare.execute(command, approved)

        async def plain_shell() -> object:
            process = await asyncio.create_subprocess_exec(
                "/bin/bash", "-c", "echo 你好 && echo done", stdout=asyncio.subprocess.PIPE
            )
            return await process.communicate()

        await compare("bash", guarded_shell, plain_shell, 40)
        await compare("sandbox", guarded_shell, unsandboxed_shell, 40)


if __name__ == "__main__":
    asyncio.run(main())
