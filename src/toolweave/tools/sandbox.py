"""The OS sandbox under the shell and skill scripts: bubblewrap, and one way to run a process.

Rules decide which commands run; no pattern over command text can see everything a command
does (environment prefixes, wrappers, interpreters, `git -c alias.x='!...'`). So the process
itself runs under bubblewrap (`bwrap`, as Anthropic's sandbox-runtime does on Linux):

- every namespace unshared (`--unshare-all`, plus `--share-net` only when `network` is on);
  user namespaces inside are refused (`--disable-userns`) and every capability is dropped
  (`--cap-drop ALL`: bwrap run by root would otherwise keep them, and with them `mount`);
  a seccomp filter refuses Unix sockets, which a read-only mount does not (`_seccomp`);
- the host filesystem read-only (`--ro-bind / /`), a fresh `/dev` and `/proc`, a private
  `/tmp`, and read-write only the `writable` directories (the workspace), except what the host
  executes or loads from there later, outside the sandbox (`.git`, `.claude`, `.agents`, MCP
  and toolweave configs, hooks and their scripts, skill roots: `_sandbox_mounts`); the host's
  `hidden` paths (its data folder, its config) are covered by empty read-only ones;
- a new PID namespace whose init is bwrap: when the command exits, or is killed on timeout or
  cancellation, the kernel kills everything left in it, so `setsid sleep 25 &` cannot outlive
  the call; `--die-with-parent` stops it if the host dies.

bwrap itself is found once at a fixed, root-owned absolute path (`BWRAP_PATHS`), never through
PATH: a `bwrap` planted in an activated `.venv/bin` inside the workspace is never run.
Whether a sandbox can be made is checked at run time (`Sandbox.check`): bwrap may be missing,
or the kernel or a container may refuse namespaces. Then the caller refuses with the reason and
the fix, unless the operator chose `mode="off"`. `run_process` runs an argv (sandboxed or not)
in its own session, waits for the process itself through a pidfd, kills the whole group when
it ends, and reads its output with a byte bound (head and tail kept, the middle counted).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import os
import signal
import stat
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from toolweave.errors import ConfigError
from toolweave.tools import _seccomp
from toolweave.tools._sandbox_mounts import PROTECTED_IN_WORKSPACE as PROTECTED_IN_WORKSPACE
from toolweave.tools._sandbox_mounts import (
    absent_placeholders,
    inside,
    protection_args,
    real_paths,
)
from toolweave.tools.context import ToolContext
from toolweave.tools.errors import SandboxUnavailable
from toolweave.tools.sandbox_limits import SandboxLimits as SandboxLimits

SandboxMode = Literal["on", "off"]
SANDBOX_MODES: tuple[SandboxMode, ...] = ("on", "off")
DEFAULT_SANDBOX_MODE: SandboxMode = "on"
"""Commands run under bubblewrap unless the operator sets `sandbox = "off"`."""
DEFAULT_NETWORK = False
"""Sandboxed commands get no network (a private, empty network namespace) unless allowed."""
INSTALL_HINT = (
    "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install "
    "bubblewrap) and allow user namespaces (sysctl kernel.unprivileged_userns_clone=1, or run "
    'the host outside a container that forbids them), or set sandbox = "off" in [builtins] to '
    "run commands unsandboxed, each one only after approval"
)
SANDBOX_TMP = "/tmp"
"""The private, empty temporary directory every sandboxed process gets."""
BWRAP_PATHS = ("/usr/bin/bwrap", "/bin/bwrap", "/usr/local/bin/bwrap")
"""Where bwrap is looked for, in order; the first that exists must be owned by root and
writable by no one else, as must every folder above it (PATH is never searched)."""
DEFAULT_LIMITS = SandboxLimits()
"""Every limit at its default (`toolweave.tools.sandbox_limits`)."""
_PROBE_COMMAND = ("/bin/sh", "-c", "exit 0")
_logger = logging.getLogger("toolweave.sandbox")


def _runtime_under_tmp() -> tuple[str, ...]:
    """The running interpreter's folders that live under `/tmp` (a virtualenv in a checkout
    there), shown read-only: the private `/tmp` would hide them, and scripts run with it."""
    found = {
        os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, os.path.dirname(sys.executable))
    }
    inside = [p for p in found if p.startswith(SANDBOX_TMP + "/") and os.path.isdir(p)]
    return tuple(sorted(inside))


@dataclass(frozen=True, slots=True)
class Sandbox:
    """How a sandboxed process sees the host: `writable` directories (real paths) read-write,
    everything else read-only, network only when `network`; `mode="off"` runs unsandboxed.
    `readable` names directories under `/tmp` (which the private one hides) to show read-only;
    `protected` names files and folders the host executes or loads (kept read-only where they
    lie in a writable directory), `hidden` ones the sandbox must not see at all."""

    writable: tuple[str, ...] = ()
    readable: tuple[str, ...] = ()
    protected: tuple[str, ...] = ()
    hidden: tuple[str, ...] = ()
    limits: SandboxLimits = DEFAULT_LIMITS
    network: bool = DEFAULT_NETWORK
    mode: SandboxMode = DEFAULT_SANDBOX_MODE

    def __post_init__(self) -> None:
        if self.mode not in SANDBOX_MODES:
            raise ConfigError(f'sandbox must be "on" or "off", got {self.mode!r}')
        for path in (*self.writable, *self.readable):
            if not os.path.isabs(path) or not os.path.isdir(path):
                raise ConfigError(f"sandbox path {path!r} is not an existing directory")
        for path in (*self.protected, *self.hidden):
            if not os.path.isabs(path):
                raise ConfigError(f"sandbox path {path!r} must be absolute")
        _WRITABLE.update(os.path.realpath(p) for p in self.writable)

    @property
    def enabled(self) -> bool:
        return self.mode == "on"

    def wrap(
        self,
        argv: Sequence[str],
        cwd: str,
        bwrap: str = BWRAP_PATHS[0],
        seccomp_fd: int | None = None,
        tool: str = "the sandbox",
    ) -> list[str]:
        """`argv` as bubblewrap runs it, in `cwd` (which the sandbox sees at the same path),
        under the seccomp program readable from `seccomp_fd` when one is given;
        `SandboxUnavailable` when a protected name in a writable folder is a link."""
        args = [bwrap, "--die-with-parent", "--new-session", "--unshare-all", "--unshare-user"]
        if self.network:
            args.append("--share-net")
        if bwrap not in _OLD_BWRAP:
            args.append("--disable-userns")
        args += ["--cap-drop", "ALL", "--ro-bind", "/", "/"]
        args += ["--dev", "/dev", "--proc", "/proc", *self.limits.tmp_args()]
        for path in (*_runtime_under_tmp(), *self.readable):
            args += ["--ro-bind", path, path]
        protected, hidden = real_paths(self.protected), real_paths(self.hidden)
        args += protection_args(real_paths(self.writable), protected, hidden, tool)
        if seccomp_fd is not None:
            args += ["--seccomp", str(seccomp_fd)]
        args += ["--chdir", cwd, "--setenv", "TMPDIR", SANDBOX_TMP, "--", *argv]
        return args

    async def run(
        self,
        argv: Sequence[str],
        *,
        cwd: str,
        env: Mapping[str, str],
        timeout: float,
        max_bytes: int,
        tool: str,
        ctx: ToolContext | None = None,
    ) -> ProcessOutcome:
        """`run_process` of `argv` inside this sandbox (bare when the mode is "off");
        `SandboxUnavailable` when none can be made."""
        if not self.enabled:
            return await run_process(
                argv, cwd=cwd, env=env, timeout=timeout, max_bytes=max_bytes, ctx=ctx
            )
        bwrap = await self.check(tool)
        writable = real_paths(self.writable)
        made = absent_placeholders(writable)
        _IN_USE.update(writable)
        try:
            with _filter() as fd:
                return await run_process(
                    self.wrap(argv, cwd, bwrap, fd, tool),
                    cwd=cwd,
                    env=env,
                    timeout=timeout,
                    max_bytes=max_bytes,
                    ctx=ctx,
                    pass_fds=() if fd is None else (fd,),
                    preexec_fn=self.limits.apply_in_child(),
                )
        finally:
            _IN_USE.subtract(writable)
            for path in made:  # the empty placeholders, once no sandbox of ours uses them
                if _IN_USE[os.path.dirname(path)] <= 0:
                    with contextlib.suppress(OSError):
                        os.rmdir(path)

    async def check(self, tool: str) -> str:
        """The bwrap binary to use, after proving once per process that it can make this
        sandbox; `SandboxUnavailable` naming the reason and the fix otherwise."""
        found, problem = find_bwrap()
        if found is None:
            raise SandboxUnavailable(f"{tool} refused: {problem}; {INSTALL_HINT}", tool=tool)
        key = (found, self.network)
        if key not in _PROVEN:
            if "--disable-userns" not in await _output([found, "--help"]):
                _OLD_BWRAP.add(found)  # before 0.8: nested namespaces stay possible, capless
            with _filter() as fd:
                bare = Sandbox(readable=self.readable, network=self.network, limits=self.limits)
                argv = bare.wrap(_PROBE_COMMAND, "/", found, fd, tool)  # makes no placeholder
                problem = await _probe(argv, () if fd is None else (fd,))
            if problem:
                raise SandboxUnavailable(
                    f"{tool} refused: bwrap cannot make a sandbox here ({problem}); {INSTALL_HINT}",
                    tool=tool,
                )
            _PROVEN.add(key)
        return found


_IN_USE: collections.Counter[str] = collections.Counter()
"""Writable folders by the number of sandboxed calls running in them now: a placeholder is
removed only after the last (removing a mount point detaches it in the other namespaces)."""
_WRITABLE: set[str] = set()
"""Every folder a sandbox made in this process may write (`sandbox_safe_path` avoids them)."""


def sandbox_safe_path(value: str) -> str:
    """`value` (a PATH) without the entries a sandboxed command could have written: those in a
    folder any sandbox of this process may write, and relative ones (`.`, empty). Hooks and
    stdio MCP servers start with it, so a `git` or `python3` planted there is never run."""
    kept: list[str] = []
    for entry in value.split(os.pathsep):
        if not os.path.isabs(entry):
            continue
        real = os.path.realpath(entry)
        if any(inside(real, folder) for folder in _WRITABLE):
            _logger.warning("PATH entry %s is writable from the sandbox; left out", entry)
            continue
        kept.append(entry)
    return os.pathsep.join(kept)


_PROVEN: set[tuple[str, bool]] = set()
_OLD_BWRAP: set[str] = set()
_FOUND: dict[tuple[str, ...], tuple[str | None, str]] = {}


def find_bwrap() -> tuple[str | None, str]:
    """(the bwrap to run, '') or (None, why not): the first of `BWRAP_PATHS` that exists, once
    it and every folder above it are owned by root and writable by no one else. Found once per
    process (per candidate list)."""
    if BWRAP_PATHS not in _FOUND:
        _FOUND[BWRAP_PATHS] = _find_bwrap(BWRAP_PATHS)
    return _FOUND[BWRAP_PATHS]


def _find_bwrap(candidates: tuple[str, ...]) -> tuple[str | None, str]:
    for path in candidates:
        if not os.path.isfile(path):
            continue
        real = os.path.realpath(path)
        for step in (real, *_parents(real)):
            info = os.stat(step)
            if info.st_uid != 0 or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
                return None, (
                    f"no sandbox can be made because {step} (on the way to bwrap at {path}) is "
                    "not owned by root or is writable by others, so it could be replaced"
                )
        return real, ""
    where = ", ".join(candidates)
    return None, f"no sandbox can be made because bwrap (bubblewrap) is not installed at {where}"


def _parents(path: str) -> Iterator[str]:
    while (parent := os.path.dirname(path)) != path:
        yield parent
        path = parent


async def _output(argv: list[str]) -> str:
    process = await asyncio.create_subprocess_exec(
        *argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
    )
    out, _ = await process.communicate()
    return out.decode("utf-8", "replace")


@contextlib.contextmanager
def _filter() -> Iterator[int | None]:
    """A descriptor holding the seccomp program for one bwrap start (None: no program here)."""
    data = _seccomp.program()
    if data is None:
        yield None
        return
    fd = _seccomp.program_fd(data)
    try:
        yield fd
    finally:
        os.close(fd)


async def _probe(argv: list[str], pass_fds: tuple[int, ...]) -> str:
    """'' when `argv` runs and exits 0, else what went wrong (bwrap's own message)."""
    try:
        process = await asyncio.create_subprocess_exec(
            *argv,
            pass_fds=pass_fds,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
        )
    except OSError as exc:
        return str(exc)
    _, stderr = await process.communicate()
    if process.returncode == 0:
        return ""
    message = stderr.decode("utf-8", "replace").strip().splitlines()
    return message[-1] if message else f"exit status {process.returncode}"


async def sandbox_problem(network: bool = DEFAULT_NETWORK) -> str:
    """'' when a sandbox can be made on this machine, else why not (for `toolweave doctor`)."""
    try:
        await Sandbox(network=network).check("the sandbox")
    except SandboxUnavailable as exc:
        return str(exc)
    return ""


@dataclass(frozen=True, slots=True)
class ProcessOutcome:
    """How a process ended: exit code (None when killed), output kept, bytes it wrote."""

    code: int | None
    output: str
    size: int
    timed_out: bool


async def run_process(
    argv: Sequence[str],
    *,
    cwd: str,
    env: Mapping[str, str],
    timeout: float,
    max_bytes: int,
    ctx: ToolContext | None = None,
    pass_fds: tuple[int, ...] = (),
    preexec_fn: Callable[[], None] | None = None,
) -> ProcessOutcome:
    """Run `argv` in its own session; at most `max_bytes` of stdout+stderr are kept (half from
    the head, half from the tail). The group is killed when the process exits, times out or
    `ctx` is cancelled."""
    process = await asyncio.create_subprocess_exec(
        *argv,
        pass_fds=pass_fds,
        cwd=cwd,
        env=dict(env),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        start_new_session=True,
        preexec_fn=preexec_fn,
    )
    assert process.stdout is not None
    reader = asyncio.ensure_future(_capture(process.stdout, max(1, max_bytes // 2)))
    waiter = asyncio.ensure_future(_exited(process))
    waits: set[asyncio.Future[None]] = {waiter}
    if ctx is not None:
        waits.add(asyncio.ensure_future(ctx.wait_cancelled()))
    try:
        done, _ = await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    except BaseException:
        reader.cancel()
        raise
    finally:
        for pending in waits:
            pending.cancel()
        _kill_group(process.pid)  # a sandbox's PID namespace dies with its init, in the group
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.shield(process.wait())
    output, size = await reader
    timed_out = not done
    cancelled = ctx is not None and ctx.cancelled
    code = None if timed_out or cancelled else process.returncode
    return ProcessOutcome(code, output, size, timed_out)


async def _exited(process: asyncio.subprocess.Process) -> None:
    """Return when the process itself exits. `process.wait()` also waits for the pipes to close,
    which a background job (`sleep 100 &`) would delay; a pidfd signals the exit alone."""
    pidfd_open = getattr(os, "pidfd_open", None)
    if pidfd_open is None:  # not Linux: the pipes close once the group is killed
        await process.wait()
        return
    loop = asyncio.get_running_loop()
    fd = pidfd_open(process.pid)
    exited: asyncio.Future[None] = loop.create_future()

    def readable() -> None:
        if not exited.done():
            exited.set_result(None)

    loop.add_reader(fd, readable)
    try:
        await exited
    finally:
        loop.remove_reader(fd)
        os.close(fd)


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


async def _capture(stream: asyncio.StreamReader, limit: int) -> tuple[str, int]:
    """All of `stream`, keeping at most `limit` bytes of its head and of its tail, and how many
    bytes it had in all."""
    head = bytearray()
    tail = bytearray()
    dropped = total = 0
    while chunk := await stream.read(65536):
        total += len(chunk)
        room = limit - len(head)
        if room > 0:
            head += chunk[:room]
            chunk = chunk[room:]
        tail += chunk
        if len(tail) > limit:
            dropped += len(tail) - limit
            del tail[: len(tail) - limit]
    text = head.decode("utf-8", "replace")
    if dropped:
        text += f"\n[... {dropped} bytes of output dropped ...]\n"
    return text + tail.decode("utf-8", "replace"), total
