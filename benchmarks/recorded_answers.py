"""How many real recorded provider answers the adapters read right, per provider.

Every cassette under the given directories (default: tests/llm/recorded, the committed
selection) is replayed through `tests/llm/recordings.py`: each interaction whose endpoint an
adapter speaks goes to that adapter through `httpx.MockTransport` and is judged against the
recording itself (text, local tool calls, provider-run tool parts, errors in the provider's words
and retryable only when they should be). Identical answers recorded by several tests count once.

    .venv/bin/python benchmarks/recorded_answers.py [DIR ...] [--failures N]

To measure over pydantic-ai's whole recording set, point it at a checkout's `tests/` directory.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.llm.recordings import RECORDED, interactions, replay


async def measure(roots: list[Path], failures: int) -> int:
    seen: set[str] = set()
    tally: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    missed: list[str] = []
    unreadable = 0
    for root in roots:
        for path in sorted(root.rglob("*.yaml")):
            try:
                items = list(interactions(path))
            except (ValueError, AttributeError, TypeError):
                unreadable += 1  # not a cassette (or not one in this format)
                continue
            for item in items:
                if item.digest in seen:
                    continue
                seen.add(item.digest)
                outcome = await replay(item)
                key = item.provider + (" (streamed)" if item.stream else "")
                tally[key][0] += outcome.held
                tally[key][1] += 1
                if not outcome.held:
                    missed.append(f"{key}: {path.name}: {outcome.why}")
    held = sum(h for h, _ in tally.values())
    total = sum(t for _, t in tally.values())
    print(f"{'provider':32} held/total")
    for key, (h, t) in sorted(tally.items()):
        print(f"{key:32} {h}/{t}")
    print(f"{'all':32} {held}/{total}  ({unreadable} files skipped: not cassettes)")
    for line in missed[:failures]:
        print("  missed", line)
    return 0 if held == total else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("roots", nargs="*", type=Path, default=[RECORDED])
    parser.add_argument("--failures", type=int, default=20, help="misses to list")
    args = parser.parse_args()
    return asyncio.run(measure(args.roots, args.failures))


if __name__ == "__main__":
    raise SystemExit(main())
