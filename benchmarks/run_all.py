"""Run every benchmark in this folder, one after another, and print their reports.

Each benchmark measures toolweave and its peer in the same run and prints the ratio, so the
numbers compare like with like on whatever machine runs them. `make bench` calls this.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    scripts = sorted(p for p in HERE.glob("*.py") if p.name != Path(__file__).name)
    only = set(sys.argv[1:])
    failed = []
    for script in scripts:
        if only and script.stem not in only:
            continue
        print(f"\n=== {script.stem} ===", flush=True)
        start = time.perf_counter()
        code = subprocess.call([sys.executable, str(script)], cwd=HERE.parent)
        print(f"--- {script.stem}: exit {code} in {time.perf_counter() - start:.1f}s", flush=True)
        if code != 0:
            failed.append(script.stem)
    if failed:
        print(f"\nfailed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
