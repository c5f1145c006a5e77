"""Import cost of toolweave, measured the way a user pays it: fresh interpreter processes.

`import toolweave` must stay at or under 120 ms (median of 5 processes) because every CLI call
and every MCP stdio server start pays it. The interpreter's own start-up is measured with the
same method and reported beside it, so a slow machine is visible as such. `from toolweave
import tool` (which loads pydantic and the tool core) is printed for information; openai-agents'
`from agents import function_tool` is measured in the same run as the peer.

Run: .venv/bin/python benchmarks/import_time.py   (exits 1 if the budget is exceeded)
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

BUDGET_MS = 120.0
RUNS = 5


def median_ms(code: str, runs: int = RUNS) -> float:
    """Median wall time of `python -c code` over fresh processes, in milliseconds."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> int:
    subprocess.run([sys.executable, "-c", "import toolweave, agents"], check=True)  # warm caches
    bare = median_ms("pass")
    package = median_ms("import toolweave")
    tool = median_ms("from toolweave import tool")
    peer = median_ms("from agents import function_tool")
    print(f"python -c pass                       {bare:7.1f} ms (interpreter start-up)")
    print(f"import toolweave                     {package:7.1f} ms  budget {BUDGET_MS:g} ms")
    print(f"from toolweave import tool           {tool:7.1f} ms")
    print(f"from agents import function_tool     {peer:7.1f} ms (openai-agents, the peer)")
    print(f"`from toolweave import tool` is {peer / tool:.1f}x faster than the peer's import")
    ok = package <= BUDGET_MS
    print(f"import budget: {'OK' if ok else 'EXCEEDED'} ({package:.1f} <= {BUDGET_MS:g} ms)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
