"""The stdio transport: one server subprocess, newline-delimited JSON on its stdin/stdout.

The process is driven by an asyncio `SubprocessProtocol`, so stdout bytes are parsed and handed
to the JSON-RPC peer inside the event loop's read callback: no reader task and no StreamReader
between the pipe and the waiting caller, which is what keeps round trips close to a bare loop.
Lines are assembled from chunks and joined once, so a multi-megabyte line costs linear time;
lines over `max_line_bytes` are dropped with a warning. stderr never mixes with the protocol:
it goes to Python logging and a short tail kept for error messages. When stdout ends the peer is
closed at once, so pending calls fail immediately with the exit code and the stderr tail; the same
happens when the process exits while a grandchild (an `npx` or shell wrapper's child) still
holds stdout open. The server runs in its own process group, and shutdown signals the whole
group, so wrappers cannot leave orphaned servers behind.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import logging
import os
import signal
from collections.abc import Callable
from typing import Any, cast

from toolweave.mcp.shared.errors import MCPConnectionClosed, MCPError
from toolweave.mcp.shared.jsonrpc import encode

logger = logging.getLogger("toolweave.mcp.stdio")

#: What a server inherits from the host's environment unless it opts in with `inherit_env`:
#: the official MCP SDK's list, so an `*_API_KEY` set for the host never reaches a downstream tool.
INHERITED_ENV_VARS = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")
#: Locale variables inherited too (`LANG`, `LANGUAGE`, every `LC_*`), so text stays decoded.
_LOCALE_VARS = ("LANG", "LANGUAGE")


def server_environment(env: dict[str, str] | None, *, inherit_env: bool = False) -> dict[str, str]:
    """The environment a stdio server starts with: a minimal safe subset of ours plus `env`.

    `inherit_env=True` passes the host's whole environment (the opt-out, for servers that need
    more than the safe subset and are trusted with every secret the host holds).
    """
    if inherit_env:
        base = dict(os.environ)
    else:
        base = {
            key: value
            for key, value in os.environ.items()
            if key in INHERITED_ENV_VARS or key in _LOCALE_VARS or key.startswith("LC_")
        }
    return {**base, **(env or {})}


#: Longest accepted stdout line; longer messages are dropped with a warning.
DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024
#: How long shutdown waits after closing stdin, and again after SIGTERM.
DEFAULT_SHUTDOWN_TIMEOUT = 2.0
#: How long to wait for the exit code once stdout has closed (and for stdout to close once
#: the process has exited).
_EXIT_GRACE = 0.5
_STDERR_TAIL = 20
#: stderr text without a newline is logged once it reaches this size, so it cannot grow forever.
_STDERR_MAX_LINE = 64 * 1024


class _Protocol(asyncio.SubprocessProtocol):
    """Splits stdout into messages and stderr into log lines; reports the end of stdout."""

    def __init__(self, owner: StdioTransport) -> None:
        self.owner = owner
        self.on_message = owner._on_message
        self.on_close = owner._on_close
        self.max_line = owner.max_line_bytes
        self.partial: list[bytes] = []
        self.size = 0
        self.overflow = False
        self.err_partial = b""
        self.closing = False
        self.pid = 0  # set once the process runs
        self.stdout_closed = asyncio.Event()
        self.exited: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.can_write = asyncio.Event()
        self.can_write.set()

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        if fd == 1:
            self._stdout(data)
        else:
            self._stderr(data)

    def _stdout(self, chunk: bytes) -> None:
        start = 0
        while True:
            newline = chunk.find(b"\n", start)
            if newline < 0:
                rest = chunk[start:]
                self.size += len(rest)
                if self.size > self.max_line:
                    if not self.overflow:
                        logger.warning(
                            "%s: dropping a stdout line longer than %d bytes (raise "
                            "max_line_bytes to accept it)",
                            self.owner.name,
                            self.max_line,
                        )
                    self.overflow = True
                    self.partial.clear()
                elif rest:
                    self.partial.append(rest)
                return
            if self.partial:
                self.partial.append(chunk[start:newline])
                line = b"".join(self.partial)
                self.partial.clear()
            else:
                line = chunk[start:newline]
            start = newline + 1
            dropped = self.overflow or len(line) > self.max_line
            self.overflow = False
            self.size = 0
            if not dropped:
                self._deliver(line)

    def _deliver(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            if line.strip():
                logger.warning("%s: skipping a non-JSON stdout line: %.200r", self.owner.name, line)
            return
        try:
            self.on_message(message)
        except Exception:
            logger.exception("%s: failed to handle a message", self.owner.name)

    def _stderr(self, data: bytes) -> None:
        *lines, self.err_partial = (self.err_partial + data).split(b"\n")
        if len(self.err_partial) > _STDERR_MAX_LINE:
            lines.append(self.err_partial)
            self.err_partial = b""
        for raw in lines:
            text = raw.decode(errors="replace").rstrip()
            if text:
                self.owner.stderr_tail.append(text)
                self.owner._stderr_log.info("%s", text)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if fd == 0:
            self.can_write.set()  # a writer waiting on a full pipe must not wait forever
        elif fd == 1:
            self.stdout_closed.set()
            self._schedule_close()

    def process_exited(self) -> None:
        if not self.exited.done():
            self.exited.set_result(None)
        self._schedule_close()

    def _schedule_close(self) -> None:
        if self.closing:
            return
        self.closing = True
        self.can_write.set()
        task = asyncio.ensure_future(self._report_close())
        self.owner._tasks.add(task)
        task.add_done_callback(self.owner._tasks.discard)

    def pause_writing(self) -> None:
        self.can_write.clear()

    def resume_writing(self) -> None:
        self.can_write.set()

    async def _report_close(self) -> None:
        # stdout ends just before the process exits; give it a moment to report its code. If
        # the process went first, give stdout a moment to deliver its last answers (a
        # grandchild may hold it open for good, so never wait longer than that).
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(self.exited), _EXIT_GRACE)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self.stdout_closed.wait(), _EXIT_GRACE)
        if self.exited.done() and not self.stdout_closed.is_set():
            # The server is gone but something it started holds our stdout: an orphan of its
            # process group (still alive, so the group id is still ours).
            _signal_group(self.pid, signal.SIGKILL)
        code = self.owner.returncode
        message = f"MCP server {self.owner.name!r} exited"
        message += f" with code {code}" if code is not None else " (closed its stdout)"
        if self.owner.stderr_tail:
            message += "; last stderr: " + " | ".join(list(self.owner.stderr_tail)[-5:])
        self.on_close(MCPConnectionClosed(message))


class StdioTransport:
    """Runs the server process and moves messages; knows nothing of MCP semantics."""

    def __init__(
        self,
        command: str,
        args: list[str],
        *,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        inherit_env: bool = False,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        shutdown_timeout: float = DEFAULT_SHUTDOWN_TIMEOUT,
        name: str | None = None,
    ) -> None:
        self.command = command
        self.args = list(args)
        self.env = env
        self.cwd = cwd
        self.inherit_env = inherit_env
        self.max_line_bytes = max_line_bytes
        self.shutdown_timeout = shutdown_timeout
        self.name = name or os.path.basename(command)
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=_STDERR_TAIL)
        self._transport: asyncio.SubprocessTransport | None = None
        self._protocol: _Protocol | None = None
        self._stdin: asyncio.WriteTransport | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._last_returncode: int | None = None
        self._stderr_log = logging.getLogger(f"toolweave.mcp.server.{self.name}")
        self._on_message: Callable[[Any], None] = lambda message: None
        self._on_close: Callable[[MCPError], None] = lambda exc: None

    @property
    def pid(self) -> int | None:
        return self._transport.get_pid() if self._transport is not None else None

    @property
    def returncode(self) -> int | None:
        """The exit code of the running (or the last) server process; None while it runs."""
        if self._transport is not None:
            return self._transport.get_returncode()
        return self._last_returncode

    async def start(
        self, on_message: Callable[[Any], None], on_close: Callable[[MCPError], None]
    ) -> None:
        self._on_message = on_message
        self._on_close = on_close
        env = server_environment(self.env, inherit_env=self.inherit_env)
        self.stderr_tail.clear()
        loop = asyncio.get_running_loop()
        try:
            transport, protocol = await loop.subprocess_exec(
                lambda: _Protocol(self),
                self.command,
                *self.args,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=env,
                cwd=self.cwd,
                start_new_session=True,
            )
        except OSError as exc:
            raise MCPConnectionClosed(
                f"could not start MCP server {self.command!r}: {exc}; check `command` and that "
                f"it is installed and on PATH"
            ) from exc
        self._transport = transport
        self._protocol = protocol
        protocol.pid = transport.get_pid()
        self._stdin = cast(asyncio.WriteTransport, transport.get_pipe_transport(0))

    async def send(self, message: dict[str, Any]) -> None:
        stdin = self._stdin
        if stdin is None or stdin.is_closing():
            raise MCPConnectionClosed(f"MCP server {self.name!r} is not running")
        stdin.write(encode(message) + b"\n")
        protocol = self._protocol
        if protocol is not None and not protocol.can_write.is_set():
            await protocol.can_write.wait()  # the pipe is full: wait for the server to read

    async def close(self) -> None:
        """Close stdin, then SIGTERM, then SIGKILL, waiting `shutdown_timeout` between steps."""
        transport, protocol = self._transport, self._protocol
        if transport is None or protocol is None:
            return
        if self._stdin is not None and not self._stdin.is_closing():
            self._stdin.close()
        self._stdin = None
        pid = transport.get_pid()
        running = transport.get_returncode() is None
        for sig in (None, signal.SIGTERM, signal.SIGKILL):
            if transport.get_returncode() is not None:
                break
            if sig is not None:
                _signal_group(pid, sig)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.shield(protocol.exited), self.shutdown_timeout)
        if running or not protocol.stdout_closed.is_set():
            # Sweep what the server left in its group; the group id is surely still ours while
            # the leader was alive a moment ago or a member still holds our stdout.
            _signal_group(pid, signal.SIGKILL)
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError, Exception):
                await asyncio.wait_for(task, self.shutdown_timeout)
        transport.close()
        self._transport = None
        self._protocol = None
        self._last_returncode = transport.get_returncode()


def _signal_group(pid: int, sig: int) -> None:
    """Signal the server's process group (it leads its own session, so pgid == pid)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)
