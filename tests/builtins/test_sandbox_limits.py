"""Each sandboxed call is bounded, and the kernel keyring is out of reach (issue 32, items
12-13).

The review's commands held 1.5 GiB of memory, filled the private /tmp with 1 GiB, started
1,500 processes and wrote without a size bound; `keyctl` read the host user's keyring. Each
runs here inside the real sandbox, with small limits, and is refused or contained.
"""

from __future__ import annotations

import asyncio
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from toolweave.builtins import shell_tool
from toolweave.errors import ConfigError
from toolweave.tools import ToolContext
from toolweave.tools.sandbox import Sandbox, SandboxLimits

MiB = 1 << 20
PYTHON = "/usr/bin/python3"  # readable by every user, unlike a checkout's virtualenv under /root
KEYCTL = {"x86_64": 250, "aarch64": 219}
SMALL = SandboxLimits(memory_bytes=256 * MiB, max_processes=20, tmp_bytes=16 * MiB,
                      file_bytes=8 * MiB)  # fmt: skip


async def run(workspace: Path, command: str, limits: SandboxLimits = SMALL) -> str:
    tool = shell_tool(workspace, deny=[], allow=["Bash(*)"], limits=limits)
    result = await tool.execute({"command": command}, ToolContext(tool_call_approved=True))
    return result.text


async def test_memory_is_bounded(tmp_path: Path) -> None:
    said = await run(tmp_path, f"{PYTHON} -c 'b = bytearray(1536 << 20); print(len(b))'")
    assert "MemoryError" in said and "1610612736" not in said, said


async def test_the_private_tmp_is_sized(tmp_path: Path) -> None:
    fill = "for i in 1 2 3 4 5; do head -c 6M /dev/zero > /tmp/f$i; done; cat /tmp/f* | wc -c"
    said = await run(tmp_path, fill)  # each file under the file size limit, all of them over
    assert "No space left on device" in said, said
    assert int(said.split("</tool_output>")[0].split()[-1]) <= 16 * MiB, said


async def test_file_size_is_bounded(tmp_path: Path) -> None:
    said = await run(tmp_path, "head -c 20M /dev/zero > big.bin; echo done")
    assert "File size limit exceeded" in said, said
    assert (tmp_path / "big.bin").stat().st_size <= 8 * MiB


async def test_the_kernel_keyring_is_refused(tmp_path: Path) -> None:
    number = KEYCTL.get(platform.machine())
    if number is None:
        pytest.skip("the seccomp filter knows x86_64 and aarch64 only")
    probe = (
        "import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); "
        f"r = libc.syscall({number}, 0, -4, 0, 0, 0); "  # KEYCTL_GET_KEYRING_ID of @s
        'print("keyctl", r, os.strerror(ctypes.get_errno()))'
    )
    said = await run(tmp_path, f"{PYTHON} -c '{probe}'")
    assert "keyctl -1 Operation not permitted" in said, said


PROCESS_PROBE = """
import asyncio, sys
from toolweave.tools.sandbox import Sandbox, SandboxLimits
async def main():
    box = Sandbox(writable=(sys.argv[1],), limits=SandboxLimits(max_processes=20))
    command = "for i in $(seq 100); do sleep 3 & done; echo started"
    outcome = await box.run(["/bin/bash", "-c", command], cwd=sys.argv[1],
                            env={"PATH": "/usr/bin:/bin"}, timeout=30, max_bytes=4096, tool="t")
    print(outcome.output)
asyncio.run(main())
"""


@pytest.fixture
def shared_workspace() -> Iterator[Path]:
    """A workspace every user may reach (pytest's own folders are private to their user)."""
    found = Path(tempfile.mkdtemp(prefix="toolweave-ws-", dir="/var/tmp"))
    found.chmod(0o777)
    try:
        yield found
    finally:
        shutil.rmtree(found)


async def test_processes_are_bounded(shared_workspace: Path) -> None:
    """A host run as root is exempt from RLIMIT_NPROC (docs/security.md), so the host side runs
    as an ordinary user here when the tests run as root, as it would in production."""
    workspace = shared_workspace
    argv = [sys.executable, "-c", PROCESS_PROBE, str(workspace)]
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": os.pathsep.join(sys.path)}
    if os.getuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None or sys.version_info[:2] != _system_python_version():
            pytest.skip("needs setpriv and a system python of the tests' version to drop root")
        argv = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", PYTHON, *argv[1:]]
    process = await asyncio.create_subprocess_exec(
        *argv, env=env, cwd=workspace, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    said = (await process.communicate())[0].decode()
    assert "fork" in said and "Resource temporarily unavailable" in said, said


def _system_python_version() -> tuple[int, int]:
    probe = "import sys; print(*sys.version_info[:2])"
    found = subprocess.run([PYTHON, "-c", probe], capture_output=True, text=True, check=True)
    major, minor = found.stdout.split()
    return int(major), int(minor)


def test_limits_are_checked() -> None:
    with pytest.raises(ConfigError, match="sandbox limit tmp_bytes must be a positive"):
        SandboxLimits(tmp_bytes=0)
    assert Sandbox().limits == SandboxLimits()  # every limit on by default
