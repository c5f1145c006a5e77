"""Running one hook, a shell command (payload on stdin) or an HTTP POST, as Claude Code does.

Exit 0 passes (stdout that is JSON is the hook's answer; other stdout is plain text), exit 2
blocks with stderr as the reason, any other exit or a timeout is a non-blocking error. An HTTP
hook answers with its body (JSON, as stdout), a non-2xx status or a failed request being a
non-blocking error. A hook marked `failClosed` turns every such error (and non-JSON output) into
a block, since a gate that silently stops working is the failure users cannot see.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from dataclasses import dataclass
from typing import Any

BLOCK_EXIT_CODE = 2
MAX_OUTPUT_BYTES = 1_000_000
"""Hook stdout/stderr beyond this is cut, so a runaway hook cannot exhaust memory."""


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
        stdout, stderr = await asyncio.wait_for(process.communicate(data), spec.timeout)
    except TimeoutError:
        _kill_group(process)
        await process.wait()
        return RawResult(error=f"hook {spec.command!r} timed out after {spec.timeout:g}s")
    except asyncio.CancelledError:
        _kill_group(process)
        raise
    out = stdout[:MAX_OUTPUT_BYTES].decode("utf-8", "replace")
    err = stderr[:MAX_OUTPUT_BYTES].decode("utf-8", "replace").strip()
    code = process.returncode
    if code == BLOCK_EXIT_CODE:
        return RawResult(blocked=True, reason=err or f"blocked by hook {spec.command!r}")
    if code != 0:
        return RawResult(error=f"hook {spec.command!r} exited with {code}: {err[:500]}")
    return _answer(out)


def _kill_group(process: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


async def _run_http(spec: HookSpec, payload: dict[str, Any], cwd: str) -> RawResult:
    import httpx  # lazy: most hook configurations never make a request

    assert spec.url is not None
    try:
        async with httpx.AsyncClient(timeout=spec.timeout) as client:
            response = await client.post(spec.url, json=payload, headers=dict(spec.headers))
    except httpx.TimeoutException:
        return RawResult(error=f"hook POST {spec.url} timed out after {spec.timeout:g}s")
    except httpx.HTTPError as exc:
        return RawResult(error=f"hook POST {spec.url} failed: {type(exc).__name__}: {exc}")
    if not response.is_success:
        return RawResult(error=f"hook POST {spec.url} answered HTTP {response.status_code}")
    return _answer(response.text[:MAX_OUTPUT_BYTES])


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
