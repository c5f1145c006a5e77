"""The stdio transport: one server subprocess, newline-delimited JSON on its stdin/stdout.

The process is driven by an asyncio `SubprocessProtocol`, so stdout bytes are parsed and handed
to the JSON-RPC peer inside the event loop's read callback: no reader task and no StreamReader
between the pipe and the waiting caller, which is what keeps round trips close to a bare loop.
Lines are assembled from chunks and joined once, so a multi-megabyte line costs linear time.
A message that cannot be delivered (a line over `max_line_bytes`, or JSON nested deeper than
the decode limit) fails the call it answers at once: its id is read from the line's first or
last bytes (where every SDK writes it). Non-JSON lines (a server printing to stdout) are
skipped; the first few are logged and the rest counted. stderr never mixes with the protocol:
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
import logging
import os
import re
import signal
from collections.abc import Callable
from typing import Any, cast

from toolweave.mcp.shared.errors import INTERNAL_ERROR, JSONRPCError, MCPConnectionClosed, MCPError
from toolweave.mcp.shared.jsonrpc import decode, encode
from toolweave.tools.sandbox import sandbox_safe_path

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
    merged = {**base, **(env or {})}
    if "PATH" in merged:  # no `npx` or `python3` planted in a sandbox's writable folder
        merged["PATH"] = sandbox_safe_path(merged["PATH"])
    return merged


#: Longest accepted stdout line; a longer message fails the call it answers.
DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024


def check_message_bytes(value: int | None) -> int:
    """An HTTP transport's `max_message_bytes`: `value` if it is a positive number of bytes,
    the default (`DEFAULT_MAX_LINE_BYTES`) if None, else ValueError naming the setting."""
    if value is None:
        return DEFAULT_MAX_LINE_BYTES
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"max_message_bytes must be a number of bytes, not {value!r}")
    if value < 1:
        raise ValueError(f"max_message_bytes must be positive, not {value}")
    return value


#: How long shutdown waits after closing stdin, and again after SIGTERM.
DEFAULT_SHUTDOWN_TIMEOUT = 2.0
#: How long to wait for the exit code once stdout has closed (and for stdout to close once
#: the process has exited).
_EXIT_GRACE = 0.5
_STDERR_TAIL = 20
#: stderr text without a newline is logged once it reaches this size, so it cannot grow forever.
_STDERR_MAX_LINE = 64 * 1024
#: Non-JSON stdout lines logged one by one; later ones are only counted.
_GARBAGE_WARNINGS = 5
#: Bytes kept from each end of an undeliverable line to find the id of the call it answers.
_ID_WINDOW = 512
_ID_VALUE = rb'(-?\d+|"(?:[^"\\]|\\.)*")'
_ID_AT_START = re.compile(rb'^\s*\{(?:\s*"jsonrpc"\s*:\s*"2\.0"\s*,)?\s*"id"\s*:\s*' + _ID_VALUE)
_ID_AT_END = re.compile(rb',\s*"id"\s*:\s*' + _ID_VALUE + rb"\s*\}\s*$")


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
        self.head = b""  # the start of an overflowing line, to find its id
        self.garbage = 0  # non-JSON stdout lines seen
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
                        self.head = (self.partial[0] if self.partial else rest)[:_ID_WINDOW]
                    self.overflow = True
                    # From now on only the line's tail is kept (where some SDKs write the id).
                    kept = self.partial[-1][-_ID_WINDOW:] if self.partial else b""
                    self.partial = [(kept + rest)[-_ID_WINDOW:]]
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
            if self.overflow or len(line) > self.max_line:
                head = self.head if self.overflow else line[:_ID_WINDOW]
                reason = (
                    f"the answer is longer than max_line_bytes ({self.max_line} bytes); raise "
                    "max_line_bytes to accept it"
                )
                if not self._undeliverable(head, line[-_ID_WINDOW:], reason):
                    logger.warning("%s: dropping a stdout message: %s", self.owner.name, reason)
            else:
                self._deliver(line)
            self.overflow = False
            self.size = 0

    def _deliver(self, line: bytes) -> None:
        try:
            message = decode(line)
        except JSONRPCError as exc:  # nested too deeply, a broken answer, or mere noise
            if line.strip() and not self._undeliverable(
                line[:_ID_WINDOW], line[-_ID_WINDOW:], exc.message
            ):
                self._garbage(line)
            return
        try:
            self.on_message(message)
        except Exception:
            logger.exception("%s: failed to handle a message", self.owner.name)

    def _undeliverable(self, head: bytes, tail: bytes, reason: str) -> bool:
        """Fail the call a dropped message answers now, rather than at its timeout.

        False when no id can be read from the line's ends (then it answers no call)."""
        found = _ID_AT_START.match(head) or _ID_AT_END.search(tail)
        if found is None:
            return False
        error = {"code": INTERNAL_ERROR, "message": f"MCP server {self.owner.name!r}: {reason}"}
        self.on_message({"jsonrpc": "2.0", "id": decode(found.group(1)), "error": error})
        return True

    def _garbage(self, line: bytes) -> None:
        self.garbage += 1
        if self.garbage <= _GARBAGE_WARNINGS:
            more = (
                "; further ones are counted, not logged"
                if self.garbage == _GARBAGE_WARNINGS
                else ""
            )
            logger.warning(
                "%s: skipping a non-JSON stdout line%s: %.200r", self.owner.name, more, line
            )

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
        if self.garbage > _GARBAGE_WARNINGS:
            logger.warning(
                "%s: skipped %d non-JSON stdout lines in all", self.owner.name, self.garbage
            )
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
