"""Watching a process a sandboxed command started, from the host.

Inside the sandbox's PID namespace `$!` is not a host pid, so a test gives the process a unique
marker in its command line, has it announce itself through a FIFO, then finds it in the host's
/proc and holds a pidfd on it: the pidfd becomes readable when the process ends, which is how a
test tells "killed with the call" from "still running" without sleeping.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import select
import signal
from pathlib import Path

_SLEEPER = frozenset({"setsid", "sh", "sleep"})


def marker() -> str:
    """A `sleep` duration no other process on the machine uses: the marker."""
    return f"{600 + secrets.randbelow(300)}.{secrets.randbelow(10**6):06d}"


def announcing_sleeper(
    duration: str, fifo: Path, *, quiet: bool = False, new_session: bool = True
) -> str:
    """Shell text starting a background job (in a new session unless not `new_session`) that
    announces itself on `fifo`, then sleeps for `duration`."""
    redirect = " >/dev/null 2>&1" if quiet else ""
    setsid = "setsid " if new_session else ""
    return f"{setsid}sh -c 'echo ready > {fifo}; exec sleep {duration}'{redirect} &"


def _marked(duration: str) -> list[int]:
    """The host pids of sleeper processes whose command line carries `duration`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            argv = (entry / "cmdline").read_bytes().decode("utf-8", "replace").split("\0")
            if os.path.basename(argv[0]) in _SLEEPER and duration in " ".join(argv):
                found.append(int(entry.name))
    return found


def pidfd_of(duration: str) -> int:
    """A pidfd on the one host process (setsid, then sh, then sleep: one pid) whose command
    line carries `duration`; the shells around it carry it too, but run other programs."""
    found = _marked(duration)
    assert len(found) == 1, f"expected one process marked {duration}, found {found}"
    return os.pidfd_open(found[0])


def pidfd_unless_ended(duration: str) -> int | None:
    """`pidfd_of`, or None when the process that announced itself has already ended: a short
    timeout can kill it between its announcement and this look (its marker is unique, so no
    process carrying it means it no longer runs)."""
    found = _marked(duration)
    assert len(found) <= 1, f"expected one process marked {duration}, found {found}"
    return os.pidfd_open(found[0]) if found else None


def gone(fd: int | None) -> bool:
    """True once the process behind `fd` has ended (SIGKILL is delivered asynchronously, so
    the pidfd is awaited; None: it had ended before a pidfd was taken); a survivor is killed so
    it does not outlive the test."""
    if fd is None:
        return True
    try:
        readable, _, _ = select.select([fd], [], [], 30)
        if not readable:
            signal.pidfd_send_signal(fd, signal.SIGKILL)
        return bool(readable)
    finally:
        os.close(fd)
