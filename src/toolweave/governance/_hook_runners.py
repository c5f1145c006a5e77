"""Running one hook, a shell command (payload on stdin) or an HTTP POST, as Claude Code does.

Exit 0 passes (stdout that is JSON is the hook's answer; other stdout is plain text), exit 2
blocks with stderr as the reason, any other exit or a timeout is a non-blocking error. An HTTP
hook answers with its body (JSON, as stdout), a non-2xx status or a failed request being a
non-blocking error. A hook marked `failClosed` turns every such error (and non-JSON output) into
a block, since a gate that silently stops working is the failure users cannot see.

Each hook has one deadline (`timeout`) for the whole exchange, not one per read, so a command or
a server that drips a byte a second cannot hold the gate open; and it may answer at most
`MAX_OUTPUT_BYTES` (stdout and stderr each, or the HTTP body after decoding): past that the hook
has failed (its process group is killed, the request dropped), which `failClosed` turns into a
block. Nothing past the bound is ever held in memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from dataclasses import dataclass
from typing import Any

from toolweave.tools.sandbox import sandbox_safe_path

BLOCK_EXIT_CODE = 2
MAX_OUTPUT_BYTES = 1_000_000
"""Bytes a hook may print on stdout or stderr, or answer over HTTP; past this it has failed."""
_READ_CHUNK = 64 * 1024


@dataclass(frozen=True)
class HookSpec:
    """One configured hook: `type` "command" (run `command`) or "http" (POST to `url`)."""

    type: str
    command: str | None = None
    url: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    timeout: float = 10.0
    fail_closed: bool = False

    def describe(self) -> str:
        return f"POST {self.url}" if self.command is None else self.command


@dataclass(frozen=True)
class RawResult:
    """What one hook produced: `blocked` with `reason`, its parsed JSON answer (`output`), plain
    `text` stdout, or a non-blocking `error`."""

    blocked: bool = False
    reason: str = ""
    output: dict[str, Any] | None = None
    text: str = ""
    error: str | None = None


async def run_hook(spec: HookSpec, payload: dict[str, Any], cwd: str) -> RawResult:
    result = await (_run_command if spec.type == "command" else _run_http)(spec, payload, cwd)
    if spec.fail_closed and not result.blocked:
        if result.error is not None:
            return RawResult(
                blocked=True,
                reason=f"hook {spec.describe()!r} failed and is marked failClosed: {result.error}",
            )
        if result.output is None and result.text.strip():
            return RawResult(
                blocked=True,
                reason=f"hook {spec.describe()!r} is marked failClosed and printed non-JSON "
                f"output: {result.text.strip()[:200]!r}",
            )
    return result


async def _run_command(spec: HookSpec, payload: dict[str, Any], cwd: str) -> RawResult:
    assert spec.command is not None
    env = {**os.environ, "CLAUDE_PROJECT_DIR": cwd, "TOOLWEAVE_PROJECT_DIR": cwd}
    env["PATH"] = sandbox_safe_path(env.get("PATH", os.defpath))  # no sandbox-planted `git`
    # `python3 -m black` in the project would import a sandbox-written `black.py` from the
    # working folder first: Python 3.11+ leaves the working folder off sys.path with this.
    env["PYTHONSAFEPATH"] = "1"
    try:
        process = await asyncio.create_subprocess_shell(
            spec.command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=cwd,
            env=env,
            start_new_session=True,  # its own process group, so a timeout kills its children too
        )
    except OSError as exc:
        return RawResult(error=f"cannot start hook {spec.command!r}: {exc}")
    data = json.dumps(payload, ensure_ascii=False).encode()
    try:
        async with asyncio.timeout(spec.timeout):
            stdout, stderr, _ = await asyncio.gather(
                _read_bounded(process, process.stdout),
                _read_bounded(process, process.stderr),
                _feed(process, data),
            )
            await process.wait()
    except TimeoutError:
        _kill_group(process)
        await process.wait()
        return RawResult(error=f"hook {spec.command!r} timed out after {spec.timeout:g}s")
    except asyncio.CancelledError:
        _kill_group(process)
        raise
    if stdout is None or stderr is None:
        await process.wait()
        which = "stdout" if stdout is None else "stderr"
        return RawResult(
            error=f"hook {spec.command!r} printed more than {MAX_OUTPUT_BYTES} bytes on "
            f"{which} (MAX_OUTPUT_BYTES) and was stopped"
        )
    out = stdout.decode("utf-8", "replace")
    err = stderr.decode("utf-8", "replace").strip()
    code = process.returncode
    if code == BLOCK_EXIT_CODE:
        return RawResult(blocked=True, reason=err or f"blocked by hook {spec.command!r}")
    if code != 0:
        return RawResult(error=f"hook {spec.command!r} exited with {code}: {err[:500]}")
    return _answer(out)


async def _feed(process: asyncio.subprocess.Process, data: bytes) -> None:
    """Write the payload to stdin and close it; a hook that exits without reading is fine."""
    assert process.stdin is not None
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        process.stdin.write(data)
        await process.stdin.drain()
        process.stdin.close()


async def _read_bounded(
    process: asyncio.subprocess.Process, stream: asyncio.StreamReader | None
) -> bytes | None:
    """The stream's bytes up to EOF, or None (the process group killed, the rest discarded)
    past the bound."""
    assert stream is not None
    chunks: list[bytes] = []
    size = 0
    while chunk := await stream.read(_READ_CHUNK):
        size += len(chunk)
        if size > MAX_OUTPUT_BYTES:
            _kill_group(process)
            while await stream.read(_READ_CHUNK):  # discard to EOF so the pipe closes
                pass
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def _kill_group(process: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


async def _run_http(spec: HookSpec, payload: dict[str, Any], cwd: str) -> RawResult:
    import httpx  # lazy: most hook configurations never make a request

    from toolweave.builtins.http_body import ACCEPT_ENCODING, read_capped
    from toolweave.tools.errors import ExecutionFailed

    assert spec.url is not None
    where = f"hook POST {spec.url}"
    headers = {"Accept-Encoding": ACCEPT_ENCODING, **dict(spec.headers)}
    try:
        async with (
            asyncio.timeout(spec.timeout),
            httpx.AsyncClient(timeout=spec.timeout) as client,
            client.stream("POST", spec.url, json=payload, headers=headers) as response,
        ):
            if not response.is_success:
                return RawResult(error=f"{where} answered HTTP {response.status_code}")
            body, cut = await read_capped(response, MAX_OUTPUT_BYTES, where)
    except (TimeoutError, httpx.TimeoutException):
        return RawResult(error=f"{where} timed out after {spec.timeout:g}s")
    except httpx.HTTPError as exc:
        return RawResult(error=f"{where} failed: {type(exc).__name__}: {exc}")
    except ExecutionFailed as exc:
        return RawResult(error=str(exc))
    if cut:
        return RawResult(
            error=f"{where} answered more than {MAX_OUTPUT_BYTES} bytes (MAX_OUTPUT_BYTES)"
        )
    return _answer(body.decode(response.charset_encoding or "utf-8", "replace"))


def _answer(text: str) -> RawResult:
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            parsed = json.loads(stripped)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            return RawResult(output=parsed, text=text)
    return RawResult(text=text)
