"""A hook command that runs a Python module (`python3 -m black`) starts in the project folder,
which the sandbox can write: Python would import a planted `black.py` from there before the real
one and run it outside the sandbox with the host's environment (found in review). Hooks run with
PYTHONSAFEPATH, so the working folder is not on sys.path."""

from __future__ import annotations

import sys
from pathlib import Path

from toolweave.governance._hook_runners import HookSpec, run_hook


async def test_a_module_planted_in_the_project_is_not_what_a_hook_runs(tmp_path: Path) -> None:
    marker = tmp_path / "planted-ran"
    # What a sandboxed command could write into the workspace: a module shadowing the stdlib's.
    (tmp_path / "json.py").write_text(
        f"open({str(marker)!r}, 'w').write('pwned')\nraise SystemExit(0)\n", encoding="utf-8"
    )
    hook = HookSpec("command", command=f"{sys.executable} -m json.tool")
    result = await run_hook(hook, {"hook_event_name": "PreToolUse"}, str(tmp_path))
    assert not marker.exists()
    assert result.error is None and '"hook_event_name": "PreToolUse"' in result.text
