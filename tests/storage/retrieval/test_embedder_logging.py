"""Loading the default embedder leaves the application's root logger alone: WordLlama calls
`logging.basicConfig(level=INFO)` on import, in a fresh interpreter that would add a handler
and lower the level."""

from __future__ import annotations

import subprocess
import sys

CODE = """
import logging
from toolweave.storage.retrieval import load_embedder

root = logging.getLogger()
before = (list(root.handlers), root.level)
load_embedder("auto").embed(["你好 hello"])
print(before == (list(root.handlers), root.level), root.level, len(root.handlers))
"""


def test_loading_wordllama_keeps_the_root_logger() -> None:
    out = subprocess.run(
        [sys.executable, "-c", CODE], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.split() == ["True", str(30), "0"], out.stdout + out.stderr
