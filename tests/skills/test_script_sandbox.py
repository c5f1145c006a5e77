"""`skill_run` under the OS sandbox, with real bubblewrap: a script's background child dies with
it, its output is read with a byte bound, and it cannot write outside a private /tmp and the
writable directories it was given."""

from __future__ import annotations

import asyncio
import os
import tracemalloc
from pathlib import Path

import pytest

from tests.builtins.processes import announcing_sleeper, gone, marker, pidfd_of
from tests.skills.factory import write_skill
from toolweave.skills import SkillError, SkillLibrary
from toolweave.skills.scripts import run_script
from toolweave.tools.sandbox import Sandbox

OUTPUT_BYTES = 400_000_000


def library_with(root: Path, scripts: dict[str, str]) -> SkillLibrary:
    write_skill(root, "worker", "name: worker\ndescription: runs scripts", files=scripts)
    return SkillLibrary([root])


async def test_400_mb_of_output_never_reaches_memory(tmp_path: Path) -> None:
    script = f"head -c {OUTPUT_BYTES} /dev/zero | tr '\\0' x; echo; echo 结束\n"
    skill = library_with(tmp_path, {"scripts/flood.sh": script}).get("worker")
    tracemalloc.start()
    try:
        text = await run_script(
            skill, "flood.sh", [], max_output_bytes=64 * 1024, max_output_chars=100_000
        )
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 * 1024 * 1024, f"peak {peak} bytes traced while reading the output"
    assert text.endswith("结束\n") and f"[... {OUTPUT_BYTES + 8 - 65536} bytes of output" in text


async def test_a_background_child_dies_with_the_script(tmp_path: Path) -> None:
    duration, fifo, go = marker(), tmp_path / "ready.fifo", tmp_path / "go.fifo"
    os.mkfifo(fifo)
    os.mkfifo(go)
    sleeper = announcing_sleeper(duration, fifo, quiet=True)
    body = f"{sleeper}\nread _ < {go}\necho 完成\n"
    skill = library_with(tmp_path / "skills", {"scripts/spawn.sh": body}).get("worker")

    def watch_then_go() -> int:
        assert fifo.read_text().strip() == "ready"
        fd = pidfd_of(duration)
        go.write_text("go\n")
        return fd

    watcher = asyncio.create_task(asyncio.to_thread(watch_then_go))
    box = Sandbox(writable=(str(tmp_path),))  # the FIFOs live there
    assert await run_script(skill, "spawn.sh", [], sandbox=box) == "完成\n"
    assert gone(await watcher)


async def test_a_timeout_kills_the_child_holding_the_output(tmp_path: Path) -> None:
    duration, fifo = marker(), tmp_path / "ready.fifo"
    os.mkfifo(fifo)
    body = f"{announcing_sleeper(duration, fifo)}\nwait\n"
    skill = library_with(tmp_path / "skills", {"scripts/hold.sh": body}).get("worker")

    def watch() -> int:
        assert fifo.read_text().strip() == "ready"
        return pidfd_of(duration)

    watcher = asyncio.create_task(asyncio.to_thread(watch))
    box = Sandbox(writable=(str(tmp_path),))
    call = run_script(skill, "hold.sh", [], timeout=3, sandbox=box)
    with pytest.raises(SkillError, match="ran past its 3s timeout"):
        await asyncio.wait_for(call, 60)  # unsandboxed, the child holds the pipe for minutes
    assert gone(await watcher)


async def test_scripts_write_only_where_allowed(tmp_path: Path, host_dir: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    script = (
        f"touch {out}/可写 && echo ok > /tmp/scratch && cat /tmp/scratch\n"
        'touch "$(dirname "$0")/../planted" 2>/dev/null || echo skill-read-only\n'
        f"touch {host_dir}/escaped 2>/dev/null || echo outside-refused\n"
    )
    skill = library_with(tmp_path / "skills", {"scripts/w.sh": script}).get("worker")
    text = await run_script(skill, "w.sh", [], sandbox=Sandbox(writable=(str(out),)))
    assert text.split() == ["ok", "skill-read-only", "outside-refused"]
    assert sorted(p.name for p in out.iterdir()) == ["可写"]
    assert not (host_dir / "escaped").exists() and not (skill.dir / "planted").exists()


async def test_a_script_cannot_rewrite_skills_in_a_writable_folder(tmp_path: Path) -> None:
    """Issue 32, item 1: with `script_writable` holding the skill roots, a script rewrote its
    own SKILL.md (and its scripts), which the host then loads and runs. The skill's folder and
    the roots the host names stay read-only; the rest of the folder is writable."""
    root = tmp_path / "skills"
    script = "echo evil > SKILL.md; echo evil > scripts/w.sh; echo ok > ../made.txt; true\n"
    skill = library_with(root, {"scripts/w.sh": script}).get("worker")  # runs in its folder
    before = (skill.dir / "SKILL.md").read_text()
    box = Sandbox(writable=(str(tmp_path),), protected=(str(root / "other"),))
    await run_script(skill, "w.sh", [], sandbox=box)
    assert (skill.dir / "SKILL.md").read_text() == before
    assert (skill.dir / "scripts" / "w.sh").read_text() == script
    assert (root / "made.txt").read_text() == "ok\n"  # beside the skill: still writable
