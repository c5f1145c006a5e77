"""The resource limits of one sandboxed call: memory, processes, the private /tmp, file size.

Without them one call could take the host down: the review's commands held 1.5 GiB of memory,
filled the private `/tmp` (RAM) with 1 GiB and started 1,500 processes. Each limit is a field
of `SandboxLimits` with a default, and is enforced by the kernel:

- `memory_bytes`: `RLIMIT_DATA` of every process (its heap and private writable mappings);
- `max_processes`: `RLIMIT_NPROC` (the kernel exempts root, so not for a host run as root);
- `tmp_bytes`: the size of the private `/tmp` tmpfs (`bwrap --size`, bubblewrap 0.8+);
- `file_bytes`: `RLIMIT_FSIZE` (a larger write fails with EFBIG).

The rlimits are set in the child before it runs bwrap, so they hold for everything the command
starts. `RLIMIT_NPROC` counts every process and thread of the host's user in the kernel's outer
namespace too, so the limit is set to the user's running tasks plus `max_processes`.
"""

from __future__ import annotations

import os
import resource
from collections.abc import Callable
from dataclasses import dataclass, fields

from toolweave.errors import ConfigError

DEFAULT_MEMORY_BYTES = 1 << 30
"""Bytes of heap and private memory one sandboxed process may map (1 GiB)."""
DEFAULT_MAX_PROCESSES = 256
"""Processes one sandboxed call may run at once (on a host not run as root)."""
DEFAULT_TMP_BYTES = 256 << 20
"""Size of the private `/tmp` (held in memory) of one call (256 MiB)."""
DEFAULT_FILE_BYTES = 1 << 30
"""Largest file a sandboxed process may write (1 GiB)."""


@dataclass(frozen=True, slots=True)
class SandboxLimits:
    """What one sandboxed call may use (see the module docstring for how each is enforced)."""

    memory_bytes: int = DEFAULT_MEMORY_BYTES
    max_processes: int = DEFAULT_MAX_PROCESSES
    tmp_bytes: int = DEFAULT_TMP_BYTES
    file_bytes: int = DEFAULT_FILE_BYTES

    def __post_init__(self) -> None:
        for field in fields(self):
            value = getattr(self, field.name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ConfigError(
                    f"sandbox limit {field.name} must be a positive whole number, got {value!r}"
                )

    def tmp_args(self) -> list[str]:
        """bwrap's arguments for a private `/tmp` of `tmp_bytes`."""
        return ["--size", str(self.tmp_bytes), "--tmpfs", "/tmp"]

    def apply_in_child(self) -> Callable[[], None]:
        """What the child runs before bwrap: its rlimits, inherited by all it starts."""
        processes = self.max_processes + (_running_processes() if os.getuid() else 0)
        settings = (
            (resource.RLIMIT_DATA, self.memory_bytes),
            (resource.RLIMIT_FSIZE, self.file_bytes),
            (resource.RLIMIT_NPROC, processes),
        )

        def apply() -> None:
            for which, value in settings:
                resource.setrlimit(which, (value, value))

        return apply


def _running_processes() -> int:
    """How many tasks (threads count) the current user runs now: the outer count
    RLIMIT_NPROC checks. A task folder's link count is its threads plus two."""
    uid = os.getuid()
    count = 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    count += os.stat(f"/proc/{entry.name}/task").st_nlink - 2
            except OSError:
                continue  # gone meanwhile
    return count
