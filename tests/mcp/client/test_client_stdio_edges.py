"""stdio edge cases against a hand-written raw server: pagination, cancellation, dead servers,
reconnect, noisy and huge output, schema violations, stubborn shutdown."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import sys

import pytest

from tests.mcp.client.mcp_peers import RAW_SERVER
from toolweave.mcp import MCPClient, MCPConnectionClosed, MCPError, MCPTimeout


async def test_pagination_follows_cursors(raw: MCPClient) -> None:
    tools = await raw.list_tools()
    assert len(tools) == 9  # five pages of two
    assert tools[-1].name == "bad.structured"
    resources = await raw.list_resources()
    assert [r.uri for r in resources] == [f"raw://r/{i}" for i in range(5)]


async def test_timeout_sends_cancelled_and_session_survives(raw: MCPClient) -> None:
    with pytest.raises(MCPTimeout) as info:
        await raw.call_tool("hang", {}, timeout=0.1)
    assert info.value.tool == "hang"
    cancelled = json.loads((await raw.call_tool("cancelled", {})).text)
    assert len(cancelled) == 1  # the server got notifications/cancelled for that request


async def test_caller_cancellation_is_forwarded(raw: MCPClient) -> None:
    task = asyncio.ensure_future(raw.call_tool("hang", {}))
    await asyncio.sleep(0)  # let the request go out
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    cancelled: list[int] = []
    while not cancelled:  # the notification is sent in the background; poll the server
        cancelled = json.loads((await raw.call_tool("cancelled", {})).text)
    assert len(cancelled) == 1


async def test_server_killed_mid_session_fails_pending_fast_then_reconnect(
    raw: MCPClient,
) -> None:
    pid = raw.server_pid
    assert pid is not None
    # Listed first: a call of a tool not yet listed lists the tools before it sends, and under
    # load that round trip could end after the ping's answer (the call then found no server).
    await raw.list_tools()
    pending = [asyncio.ensure_future(raw.call_tool("hang", {}, timeout=30)) for _ in range(5)]
    await raw.ping()  # the hang requests are on the wire before the ping's answer
    os.kill(pid, signal.SIGKILL)
    for call in pending:  # failed by the exit itself: an MCPTimeout (30 s) would not match
        with pytest.raises(MCPConnectionClosed, match="exited"):
            await call
    assert not raw.connected
    with pytest.raises(MCPConnectionClosed):
        await raw.call_tool("echo", {"text": "x"})
    await raw.reconnect()
    assert raw.server_pid not in (None, pid)
    assert (await raw.call_tool("echo", {"text": "back"})).text == "back"


async def test_server_exiting_during_a_call_reports_exit_code(raw: MCPClient) -> None:
    with pytest.raises(MCPConnectionClosed, match="code 3"):
        await raw.call_tool("die", {})


async def _exited(pid: int) -> None:
    """Return once process `pid` (not our child) has exited: its pidfd becomes readable."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    loop = asyncio.get_running_loop()
    gone = loop.create_future()
    loop.add_reader(fd, gone.set_result, None)
    try:
        await gone
    finally:
        loop.remove_reader(fd)
        os.close(fd)


async def test_exit_is_detected_while_an_orphan_holds_stdout(raw: MCPClient) -> None:
    """The server exits but its child keeps stdout open: the exit itself fails the call, and
    the orphan (in the server's process group) is killed rather than leaked."""
    # The exit itself fails the call: waiting for the orphan's EOF would end in MCPTimeout.
    with pytest.raises(MCPConnectionClosed, match="code 4"):
        await raw.call_tool("orphan", {}, timeout=60)
    tail = list(getattr(raw.transport, "stderr_tail", []))
    orphan = int(next(line for line in tail if line.startswith("orphan pid")).split()[-1])
    # Killed with the group, not leaked; the bound only keeps a leak from hanging the suite.
    await asyncio.wait_for(_exited(orphan), 60)
    await raw.reconnect()
    assert (await raw.call_tool("echo", {"text": "again"})).text == "again"


async def test_noise_is_skipped_with_a_warning(
    raw: MCPClient, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="toolweave.mcp.stdio"):
        result = await raw.call_tool("noise", {})
    assert result.text == "after noise"
    assert any("non-JSON" in r.message for r in caplog.records)


async def test_garbage_warnings_are_rate_limited(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="toolweave.mcp.stdio"):
        async with MCPClient.stdio(sys.executable, [RAW_SERVER]) as client:
            result = await client.call_tool("noise", {"lines": 500})
            logged = [r.message for r in caplog.records if "non-JSON" in r.message]
    assert result.text == "after noise"
    assert len(logged) == 5 and "counted, not logged" in logged[-1]
    assert any("skipped 500 non-JSON stdout lines" in r.message for r in caplog.records)


async def test_too_deeply_nested_answers_fail_the_call_at_once(raw: MCPClient) -> None:
    for id_last in (False, True):
        with pytest.raises(MCPError, match="nested deeper than 128") as failed:
            await raw.call_tool("big", {"depth": 500, "id_last": id_last}, timeout=60)
        assert not isinstance(failed.value, MCPTimeout)
    assert (await raw.call_tool("big", {"depth": 50})).structured is not None
    assert (await raw.call_tool("echo", {"text": "still fine"})).text == "still fine"


async def test_huge_lines_and_the_line_cap() -> None:
    async with MCPClient.stdio(sys.executable, [RAW_SERVER], max_line_bytes=1 << 20) as client:
        ok = await client.call_tool("big", {"size": 900_000})
        assert len(ok.text) == 900_000
        # The 2 MB answer is dropped and fails its call at once (not at the 60 s timeout),
        # whether the id comes first (Python SDKs) or last (the TypeScript SDK).
        for id_last in (False, True):
            with pytest.raises(MCPError, match="longer than max_line_bytes") as failed:
                await client.call_tool("big", {"size": 2_000_000, "id_last": id_last}, timeout=60)
            assert not isinstance(failed.value, MCPTimeout)
        assert (await client.call_tool("echo", {"text": "fine"})).text == "fine"
    async with MCPClient.stdio(sys.executable, [RAW_SERVER]) as client:
        large = await client.call_tool("big", {"size": 8_000_000})  # default cap: 64 MiB
        assert len(large.text) == 8_000_000


async def test_structured_content_is_checked_against_the_output_schema(raw: MCPClient) -> None:
    with pytest.raises(MCPError, match=r"does not match its output schema: \$\.count"):
        await raw.call_tool("bad.structured", {})


async def test_stderr_goes_to_logging_not_protocol(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="toolweave.mcp.server.raw"):
        async with MCPClient.stdio(sys.executable, [RAW_SERVER], name="raw") as client:
            await client.ping()
            transport = client.transport
    assert "raw server ready" in list(getattr(transport, "stderr_tail", []))


async def test_stubborn_server_is_killed_on_close() -> None:
    from toolweave.mcp.client._stdio import StdioTransport

    transport = StdioTransport(sys.executable, [RAW_SERVER, "--stubborn"], shutdown_timeout=0.2)
    client = MCPClient(transport, name="stubborn")
    await client.connect()
    await client.ping()
    await client.close()
    assert transport.returncode == -signal.SIGKILL


async def test_bad_command_is_a_clear_error() -> None:
    client = MCPClient.stdio("/nonexistent/mcp-server")
    with pytest.raises(MCPConnectionClosed, match="could not start MCP server"):
        await client.connect()


async def test_a_writer_blocked_on_a_full_pipe_is_released_when_the_server_dies() -> None:
    from toolweave.mcp.client._stdio import StdioTransport

    deaf = StdioTransport(sys.executable, ["-c", "import signal; signal.pause()"])
    closed: list[MCPError] = []
    reported = asyncio.Event()

    def on_close(exc: MCPError) -> None:
        closed.append(exc)
        reported.set()

    await deaf.start(lambda message: None, on_close)
    try:
        big = {"jsonrpc": "2.0", "method": "x", "params": {"blob": "y" * (4 << 20)}}
        send = asyncio.ensure_future(deaf.send(big))
        await asyncio.sleep(0)
        assert not send.done()  # the server reads nothing: the pipe is full
        assert deaf.pid is not None
        os.kill(deaf.pid, signal.SIGKILL)
        await asyncio.wait_for(send, 5)  # released, not stuck forever
        await reported.wait()
        assert "exited" in closed[0].message
    finally:
        await deaf.close()
