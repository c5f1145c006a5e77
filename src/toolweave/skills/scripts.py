"""Running a skill's bundled scripts: only files of the skill, only when asked.

A script is named relative to the skill (`scripts/fill.py`, or `ooxml/scripts/pack.py` where a
SKILL.md tells the model to run one elsewhere) or relative to its `scripts/` folder
(`fill.py`); it must resolve inside the skill folder. Running one is `skill_run`, which the
governance gates see as a shell command.

A script runs with the skill folder as its working directory, no shell (arguments are passed
as a list, never interpolated), a small environment, no stdin and a timeout; only its output
comes back (truncated to a budget). Nothing here runs at load time.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from toolweave.skills.errors import SkillError
from toolweave.skills.skill import Skill

SCRIPTS_DIR = "scripts"
SCRIPT_TIMEOUT = 60.0
"""Seconds a bundled script may run before it is killed."""
MAX_SCRIPT_OUTPUT_CHARS = 20_000
"""Script output past this many characters is cut (the end is kept: errors come last)."""
SCRIPT_ENV_KEYS = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT", "TERM")
"""The only environment variables a script inherits (no API keys leak into skill code)."""
_INTERPRETERS = {".py": (sys.executable,), ".sh": ("sh",), ".bash": ("bash",), ".js": ("node",)}


def script_path(skill: Skill, script: str) -> Path:
    """The script file, which must live inside the skill's own folder."""
    folder = skill.dir.resolve()
    nested = script.startswith(f"{SCRIPTS_DIR}/") or ".." in Path(script).parts
    candidates = [script] if nested else [script, f"{SCRIPTS_DIR}/{script}"]
    for rel in candidates:
        path = (folder / rel).resolve()
        if path.is_relative_to(folder) and path.is_file():
            return path
    if not (folder / script).resolve().is_relative_to(folder):
        raise SkillError(
            f"{script!r} resolves outside the skill folder of {skill.name!r}; only its own "
            "scripts can run"
        )
    return skill.resolve(candidates[-1])  # the error names the skill's files


async def run_script(
    skill: Skill,
    script: str,
    args: list[str],
    *,
    timeout: float = SCRIPT_TIMEOUT,
    max_output_chars: int = MAX_SCRIPT_OUTPUT_CHARS,
) -> str:
    """Run `script` with `args`; its combined output, or `SkillError` on failure or timeout."""
    path = script_path(skill, script)
    command = (
        (*_INTERPRETERS[path.suffix], str(path)) if path.suffix in _INTERPRETERS else (str(path),)
    )
    if len(command) == 1 and not os.access(path, os.X_OK):
        raise SkillError(
            f"{script!r} is not executable and has no known interpreter suffix "
            f"({', '.join(_INTERPRETERS)}); mark it executable"
        )
    env = {k: os.environ[k] for k in SCRIPT_ENV_KEYS if k in os.environ}
    process = await asyncio.create_subprocess_exec(
        *command,
        *args,
        cwd=skill.dir,
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    try:
        output, _ = await asyncio.wait_for(process.communicate(), timeout)
    except TimeoutError:
        process.kill()
        await process.wait()
        raise SkillError(f"{script!r} ran past its {timeout:g}s timeout and was stopped") from None
    except asyncio.CancelledError:
        process.kill()
        await process.wait()
        raise
    text = output.decode("utf-8", errors="replace")
    if len(text) > max_output_chars:
        text = f"[first {len(text) - max_output_chars} characters cut]\n" + text[-max_output_chars:]
    if process.returncode:
        raise SkillError(f"{script!r} exited with status {process.returncode}:\n{text}")
    return text
