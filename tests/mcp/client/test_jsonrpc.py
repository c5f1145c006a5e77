"""The JSON-RPC core in isolation: two peers wired back to back through in-memory queues."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from toolweave.mcp import MCPConnectionClosed, MCPTimeout
from toolweave.mcp.shared.errors import INVALID_REQUEST, METHOD_NOT_FOUND, JSONRPCError
from toolweave.mcp.shared.jsonrpc import RequestContext, decode, encode
from toolweave.mcp.shared.peer import JSONRPCPeer
from toolweave.tools.clock import RequestClock


def pair(
    server_handler: Any, client_notifications: list[tuple[str, dict[str, Any]]] | None = None
) -> tuple[JSONRPCPeer, JSONRPCPeer, list[dict[str, Any]]]:
    """A client and a server peer; every message crosses as encoded bytes, like a transport."""
    wire: list[dict[str, Any]] = []
    client: JSONRPCPeer
    server: JSONRPCPeer

    async def to_server(message: dict[str, Any]) -> None:
        wire.append(message)
        server.feed(decode(encode(message)))

    async def to_client(message: dict[str, Any]) -> None:
        wire.append(message)
        client.feed(decode(encode(message)))

    def on_note(method: str, params: dict[str, Any]) -> None:
        if client_notifications is not None:
            client_notifications.append((method, params))

    client = JSONRPCPeer(to_server, on_notification=on_note)
    server = JSONRPCPeer(to_client, server_handler)
    return client, server, wire


async def test_request_response_and_concurrency() -> None:
    async def handler(method: str, params: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        await asyncio.sleep(0)
        return {"echo": params["n"], "method": method}

    client, _, _ = pair(handler)
    results = await asyncio.gather(*(client.request("echo", {"n": i}) for i in range(200)))
    assert [r["echo"] for r in results] == list(range(200))
    assert client.pending == 0
    assert await client.request("ping") == {}


async def test_errors_travel_with_code_and_data() -> None:
    async def handler(method: str, params: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        if method == "bad":
            raise JSONRPCError(-32602, "x is wrong", {"field": "x"})
        raise RuntimeError("boom")

    client, _, _ = pair(handler)
    with pytest.raises(JSONRPCError) as info:
        await client.request("bad")
    assert (info.value.code, info.value.message, info.value.data) == (
        -32602,
        "x is wrong",
        {"field": "x"},
    )
    with pytest.raises(JSONRPCError) as info:
        await client.request("other")
    assert "RuntimeError: boom" in info.value.message
    plain, _, _ = pair(None)
    with pytest.raises(JSONRPCError) as info:
        await plain.request("nothing")
    assert info.value.code == METHOD_NOT_FOUND


async def test_timeout_sends_cancel_and_remote_handler_is_cancelled() -> None:
    started = asyncio.Event()
    cancelled = asyncio.Event()

    async def handler(method: str, params: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        if method == "fast":
            return {"ok": True}
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return {}

    client, _, wire = pair(handler)
    with pytest.raises(MCPTimeout) as info:
        await client.request("slow", timeout=0.05)
    assert info.value.timeout == 0.05 and not info.value.recoverable
    await cancelled.wait()
    cancels = [m for m in wire if m.get("method") == "notifications/cancelled"]
    assert cancels and cancels[0]["params"]["requestId"] == 1
    # No answer was sent for the cancelled request, and the session still works.
    assert not any(m.get("id") == 1 and "method" not in m for m in wire)
    assert await client.request("fast") == {"ok": True}


async def test_caller_cancellation_is_forwarded() -> None:
    started = asyncio.Event()
    cancelled = asyncio.Event()

    async def handler(method: str, params: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            cancelled.set()
        return {}

    client, _, wire = pair(handler)
    task = asyncio.ensure_future(client.request("slow"))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await cancelled.wait()
    assert any(m.get("method") == "notifications/cancelled" for m in wire)


class VirtualClock:
    """The event loop's clock, moved only by the test: timeouts are checked without waiting."""

    def __init__(self, now: float) -> None:
        self.start = self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
async def clock(monkeypatch: pytest.MonkeyPatch) -> VirtualClock:
    loop = asyncio.get_running_loop()
    virtual = VirtualClock(loop.time())
    monkeypatch.setattr(loop, "time", virtual)
    return virtual


async def test_progress_resets_timeout_until_hard_maximum(clock: VirtualClock) -> None:
    seen: list[tuple[float, float | None, str | None]] = []
    steps: asyncio.Queue[None] = asyncio.Queue()  # the test releases one progress step at a time
    progressed = asyncio.Event()

    async def handler(method: str, params: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        total = params["steps"]
        for i in range(total):
            await steps.get()
            await ctx.report_progress(i + 1, total, f"step {i + 1}")
        if method == "hang":
            await asyncio.Event().wait()
        return {"done": True}

    def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))
        progressed.set()

    async def step(call: asyncio.Future[dict[str, Any]], seconds: float) -> None:
        """Let `seconds` pass, release one step and wait for its progress or the call's end."""
        clock.now += seconds
        progressed.clear()
        steps.put_nowait(None)
        waiter = asyncio.ensure_future(progressed.wait())
        await asyncio.wait([call, waiter], return_when=asyncio.FIRST_COMPLETED)
        waiter.cancel()

    client, _, _ = pair(handler)
    # 8 steps 6 s apart outlast the 10 s timeout only because progress resets the clock.
    call = asyncio.ensure_future(
        client.request("work", {"steps": 8}, timeout=10, on_progress=on_progress)
    )
    await asyncio.sleep(0)  # the request is out and its timer set at the current time
    for _ in range(8):
        await step(call, 6)
    assert await call == {"done": True}
    assert seen[0] == (1, 8, "step 1") and len(seen) == 8
    # Without progress the same 10 s timeout ends a call once 11 s pass.
    silent = asyncio.ensure_future(client.request("hang", {"steps": 0}, timeout=10))
    await asyncio.sleep(0)
    clock.now += 11
    with pytest.raises(MCPTimeout):
        await silent
    # Progress keeps arriving, but the 20 s hard maximum still ends the call.
    begin = clock.now
    call = asyncio.ensure_future(
        client.request("hang", {"steps": 50}, timeout=10, max_timeout=20, on_progress=on_progress)
    )
    await asyncio.sleep(0)
    while not call.done():
        await step(call, 6)
    with pytest.raises(MCPTimeout):
        await call
    assert 20 < clock.now - begin <= 24


async def test_close_fails_pending_at_once_and_later_requests() -> None:
    async def handler(method: str, params: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        await asyncio.Event().wait()
        return {}

    client, _, _ = pair(handler)
    calls = [asyncio.ensure_future(client.request("hang")) for _ in range(5)]
    await asyncio.sleep(0)
    client.close(MCPConnectionClosed("server exited with code 1"))
    for call in calls:
        with pytest.raises(MCPConnectionClosed, match="exited with code 1"):
            await call
    with pytest.raises(MCPConnectionClosed):
        await client.request("again")


async def test_batches_and_garbage_are_rejected() -> None:
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    peer = JSONRPCPeer(send)
    peer.feed([{"jsonrpc": "2.0", "id": 1, "method": "ping"}])
    peer.feed({"jsonrpc": "2.0", "id": 2, "method": "ping", "params": [1]})
    peer.feed({"jsonrpc": "2.0", "id": 3, "method": "ping"})
    for _ in range(5):
        await asyncio.sleep(0)
    by_id = {m["id"]: m for m in sent}
    assert by_id[None]["error"]["code"] == INVALID_REQUEST
    assert by_id[2]["error"]["code"] == -32602
    assert by_id[3]["result"] == {}
    with pytest.raises(JSONRPCError):
        decode(b"{not json")


async def test_bad_and_duplicate_ids_are_refused_at_once() -> None:
    """Any transport: a bad id or a reused in-flight id is answered now, never left hanging."""
    sent: list[dict[str, Any]] = []
    release = asyncio.Event()

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    async def handler(method: str, params: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        await release.wait()
        return {"done": ctx.id}

    peer = JSONRPCPeer(send, handler)
    for bad in (1.5, True, [1], {}, None):
        peer.feed({"jsonrpc": "2.0", "id": bad, "method": "work"})
    peer.feed({"jsonrpc": "2.0", "id": 7, "method": "work"})
    peer.feed({"jsonrpc": "2.0", "id": 7, "method": "work"})  # while the first still runs
    for _ in range(5):
        await asyncio.sleep(0)
    refused = [m for m in sent if m["id"] is None]
    assert len(refused) == 6 and all(m["error"]["code"] == INVALID_REQUEST for m in refused)
    assert "already in flight" in refused[-1]["error"]["message"]
    release.set()
    for _ in range(5):
        await asyncio.sleep(0)
    assert [m for m in sent if m["id"] == 7] == [{"jsonrpc": "2.0", "id": 7, "result": {"done": 7}}]


def test_decode_limits_nesting_depth_outside_strings() -> None:
    with pytest.raises(JSONRPCError, match="nested deeper than 128") as deep:
        decode(b"[" * 129 + b"]" * 129)
    assert deep.value.code == -32700
    assert decode("[" * 128 + "]" * 128) is not None
    brackets = '{"text": "' + "[{" * 5000 + '", "中文": "好"}'
    assert decode(brackets)["中文"] == "好"  # brackets inside strings do not count


async def test_server_to_client_request_through_context() -> None:
    async def handler(method: str, params: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        answer = await ctx.request("sampling/createMessage", {"q": 1})
        await ctx.notify("notifications/message", {"level": "info", "data": "hi"})
        return {"inner": answer}

    notes: list[tuple[str, dict[str, Any]]] = []
    client, _, _ = pair(handler, notes)

    async def client_handler(
        method: str, params: dict[str, Any], ctx: RequestContext
    ) -> dict[str, Any]:
        return {"method": method, "q": params["q"]}

    client.on_request = client_handler
    result = await client.request("tools/call", {})
    assert result == {"inner": {"method": "sampling/createMessage", "q": 1}}
    assert notes == [("notifications/message", {"level": "info", "data": "hi"})]


async def test_a_boolean_id_does_not_answer_request_1() -> None:
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    peer = JSONRPCPeer(send)
    call = asyncio.ensure_future(peer.request("x"))
    await asyncio.sleep(0)
    assert sent[0]["id"] == 1
    peer.feed({"jsonrpc": "2.0", "id": True, "result": {"wrong": True}})
    peer.feed({"jsonrpc": "2.0", "id": 1, "result": {"right": True}})
    assert await call == {"right": True}


async def test_a_stopped_clock_does_not_run_while_a_person_is_asked(clock: VirtualClock) -> None:
    """`RequestClock.stopped()`: neither the timeout nor the hard maximum runs inside the block;
    after it the timeout restarts in full, then runs as before (also for a clock stopped before
    its request was sent)."""
    release = asyncio.Event()

    async def handler(method: str, params: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        if method == "work":
            await release.wait()
            return {"done": True}
        await asyncio.Event().wait()
        return {}

    async def times_out(timeout: float, advance: float) -> None:
        """A witness: a plain request times out after `advance` s, so the loop ran its timers."""
        witness = asyncio.ensure_future(client.request("hang", timeout=timeout))
        await asyncio.sleep(0)
        clock.now += advance
        with pytest.raises(MCPTimeout):
            await witness

    client, _, _ = pair(handler)
    person = RequestClock()
    call = asyncio.ensure_future(client.request("work", timeout=10, max_timeout=20, clock=person))
    await asyncio.sleep(0)
    with person.stopped():
        await times_out(10, 100)  # far past the timeout and the hard maximum
        assert not call.done()
    await times_out(5, 9)  # restarted in full: 9 s after the answer it still runs
    assert not call.done()
    release.set()
    assert await call == {"done": True}
    with person.stopped():  # stopped before the request is sent
        silent = asyncio.ensure_future(client.request("hang", timeout=10, clock=person))
        await times_out(10, 50)
        assert not silent.done()
    await asyncio.sleep(0)
    clock.now += 11  # running again: the timeout ends it
    with pytest.raises(MCPTimeout):
        await silent
