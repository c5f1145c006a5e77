"""Running a skill's bundled scripts: only files of the skill, only when asked.

A script is named relative to the skill (`scripts/fill.py`, or `ooxml/scripts/pack.py` where a
SKILL.md tells the model to run one elsewhere) or relative to its `scripts/` folder
(`fill.py`); it must resolve inside the skill folder. Running one is `skill_run`, which the
governance gates see as a shell command.

A script runs with the skill folder as its working directory, no shell (arguments are passed
as a list, never interpolated), a small environment, no stdin and a timeout, under the same OS
sandbox as the `bash` built-in (`toolweave.tools.sandbox`): the host read-only (the skill
folder too) but for the `writable` directories and a private /tmp, no network unless allowed,
and its own PID namespace, so a background child dies with the script. Output is read with a
byte bound (`max_output_bytes`) and only its end comes back (`max_output_chars`). Nothing here
runs at load time.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path

from toolweave.skills.errors import SkillError
from toolweave.skills.skill import Skill
from toolweave.tools.sandbox import Sandbox

SCRIPTS_DIR = "scripts"
SCRIPT_TIMEOUT = 60.0
"""Seconds a bundled script may run before it is killed."""
MAX_SCRIPT_OUTPUT_CHARS = 20_000
"""Script output past this many characters is cut (the end is kept: errors come last)."""
MAX_SCRIPT_OUTPUT_BYTES = 1024 * 1024
"""Bytes of script output read into memory at most (half the head, half the tail); the rest
is counted and dropped as it arrives."""
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
    max_output_bytes: int = MAX_SCRIPT_OUTPUT_BYTES,
    sandbox: Sandbox | None = None,
) -> str:
    """Run `script` with `args`; its combined output, or `SkillError` on failure or timeout.
    `sandbox` (default: on, nothing writable but a private /tmp) says what the script may
    touch; `SandboxUnavailable` when none can be made."""
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
    cwd = str(skill.dir.resolve())
    base = sandbox or Sandbox()
    box = dataclasses.replace(  # its own folder read-only, even inside a writable one
        base, readable=(*base.readable, cwd), protected=(*base.protected, cwd)
    )
    outcome = await box.run(
        [*command, *args],
        cwd=cwd,
        env=env,
        timeout=timeout,
        max_bytes=max_output_bytes,
        tool="skill_run",
    )
    if outcome.timed_out:
        raise SkillError(f"{script!r} ran past its {timeout:g}s timeout and was stopped")
    text = outcome.output
    if len(text) > max_output_chars:
        text = f"[first {len(text) - max_output_chars} characters cut]\n" + text[-max_output_chars:]
    if outcome.code:
        raise SkillError(f"{script!r} exited with status {outcome.code}:\n{text}")
    return text
