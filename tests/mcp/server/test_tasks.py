"""Tasks (SEP-2663) in the server toolkit: calls that finish later, input while a task, cancel,
the caller's ownership, the required-task error, composition with input-required results, and
"failed: host restarted" after a restart."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import httpx

from tests.mcp.server.inprocess import serve_in_process
from tests.mcp.server.modern import Modern, modern_client
from tests.support import store_args
from toolweave.mcp import Context, MCPServer
from toolweave.mcp.server.tasks import PostgresTaskStore, SQLiteTaskStore, TaskRecord, TaskStore

__all__ = ["store_args"]

TASKS = {"extensions": {"io.modelcontextprotocol/tasks": {}}, "elicitation": {}}
NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def open_store(args: dict[str, Any], instance: str = "local") -> TaskStore:
    """The store under test: an SQLite file or a schema of the real Postgres server."""
    if "dsn" in args:
        return PostgresTaskStore(args["dsn"], instance=instance)
    return SQLiteTaskStore(args["path"], instance=instance)


def make_server(**options: Any) -> MCPServer:
    server = MCPServer("tasks", **options)
    release = asyncio.Event()
    stopped = asyncio.Event()

    @server.tool(task="optional")
    async def long_job(ctx: Context, label: str = "作业") -> str:
        await asyncio.sleep(0)  # its first pause: the call is a task from here on
        await ctx.report_progress(1, 4, "started")
        try:
            await release.wait()
        finally:
            stopped.set()
        return f"{label} done"

    @server.tool(task="required")
    async def ask_then_work(ctx: Context) -> str:
        answer = await ctx.elicit("Name?", NAME, key="user_name")
        await release.wait()
        return f"Hello, {answer['content']['name']}"

    @server.tool(task="optional")
    async def two_questions(ctx: Context) -> str:
        await release.wait()
        first, second = await asyncio.gather(
            ctx.elicit("One?", NAME, key="one"), ctx.elicit("Two?", NAME, key="two")
        )
        return f"{first['content']['name']}+{second['content']['name']}"

    @server.tool(task="optional")
    async def quick() -> str:
        return "at once"

    server.release, server.stopped = release, stopped  # type: ignore[attr-defined]
    return server


async def test_a_long_call_becomes_a_task_that_completes_with_progress() -> None:
    server = make_server()
    async with modern_client(server) as http:
        modern = Modern(http, TASKS)
        created = await modern.result("tools/call", {"name": "long_job"})
        task_id = created["taskId"]
        working = await modern.result("tasks/get", {"taskId": task_id})
        server.release.set()  # type: ignore[attr-defined]
        await server.tasks.wait(task_id)
        done = await modern.result("tasks/get", {"taskId": task_id})
        quick = await modern.result("tools/call", {"name": "quick"})
        listed = await modern.result("tools/list")
        found = await modern.result("server/discover")
    assert created["resultType"] == "task" and created["status"] == "working"
    assert created["ttlMs"] == 3_600_000 and created["pollIntervalMs"] == 1_000
    assert not {"result", "requestState", "inputRequests", "ttl"} & set(created)
    assert working["status"] == "working" and working["statusMessage"] == "1/4 started"
    assert done["status"] == "completed" and done["resultType"] == "complete"
    assert done["result"]["content"][0]["text"] == "作业 done"
    assert quick["content"][0]["text"] == "at once"  # finished before its first pause
    execution = {t["name"]: t.get("execution") for t in listed["tools"]}
    assert execution["ask_then_work"] == {"taskSupport": "required"}
    assert found["capabilities"]["extensions"] == {"io.modelcontextprotocol/tasks": {}}


async def test_cancel_stops_the_tool_and_is_idempotent() -> None:
    server = make_server()
    async with modern_client(server) as http:
        modern = Modern(http, TASKS)
        task_id = (await modern.result("tools/call", {"name": "long_job"}))["taskId"]
        ack = await modern.result("tasks/cancel", {"taskId": task_id})
        await server.stopped.wait()  # type: ignore[attr-defined]
        await server.tasks.wait(task_id)
        again = await modern.result("tasks/cancel", {"taskId": task_id})
        seen = await modern.result("tasks/get", {"taskId": task_id})
        unknown = await modern.post("tasks/get", {"taskId": "nope"})
        removed = await modern.post("tasks/list")
    assert ack == again and set(ack) == {"resultType", "_meta"}
    assert seen["status"] == "cancelled" and "result" not in seen
    assert unknown.json()["error"]["code"] == -32602
    assert removed.status_code == 404 and removed.json()["error"]["code"] == -32601


async def test_another_caller_can_neither_see_nor_cancel_a_task() -> None:
    server = make_server()
    async with (
        modern_client(server, auth_token="alice") as alice_http,
        modern_client(server, auth_token="mallory") as mallory_http,
    ):
        alice = Modern(alice_http, TASKS)
        mallory = Modern(mallory_http, TASKS)
        as_alice = {"Authorization": "Bearer alice"}
        as_mallory = {"Authorization": "Bearer mallory"}
        task_id = (await alice.result("tools/call", {"name": "long_job"}, headers=as_alice))[
            "taskId"
        ]
        peek = await mallory.post("tasks/get", {"taskId": task_id}, headers=as_mallory)
        kill = await mallory.post("tasks/cancel", {"taskId": task_id}, headers=as_mallory)
        still = await alice.result("tasks/get", {"taskId": task_id}, headers=as_alice)
        await alice.result("tasks/cancel", {"taskId": task_id}, headers=as_alice)
    assert peek.json()["error"]["code"] == kill.json()["error"]["code"] == -32602
    assert still["status"] == "working"


async def test_clients_without_the_extension_run_optional_tools_and_are_refused_required() -> None:
    server = make_server()
    server.release.set()  # type: ignore[attr-defined]
    async with modern_client(server) as http:
        modern = Modern(http, {"elicitation": {}})
        inline = await modern.result("tools/call", {"name": "long_job", "task": {"ttl": 1}})
        required = await modern.post("tools/call", {"name": "ask_then_work"})
        gated = await modern.post("tasks/get", {"taskId": "x"})
    assert inline["resultType"] == "complete" and "taskId" not in inline
    assert required.status_code == gated.status_code == 400
    extension = {"extensions": {"io.modelcontextprotocol/tasks": {}}}
    assert required.json()["error"]["data"]["requiredCapabilities"] == extension
    assert gated.json()["error"]["code"] == -32021


class WatchedStore(SQLiteTaskStore):
    """The SQLite store, telling the test when a task is parked on two questions."""

    def __init__(self) -> None:
        super().__init__()
        self.two_parked = asyncio.Event()

    async def update(self, task_id: str, changes: dict[str, Any]) -> TaskRecord | None:
        task = await super().update(task_id, changes)
        if len(changes.get("input_requests") or {}) == 2:
            self.two_parked.set()
        return task


async def test_input_while_a_task_parks_it_until_every_answer_arrives() -> None:
    store = WatchedStore()
    server = make_server(task_store=store)
    async with modern_client(server) as http:
        modern = Modern(http, TASKS)
        task_id = (await modern.result("tools/call", {"name": "two_questions"}))["taskId"]
        server.release.set()  # type: ignore[attr-defined]
        await store.two_parked.wait()
        parked = await modern.result("tasks/get", {"taskId": task_id})
        one = {"action": "accept", "content": {"name": "甲"}}
        ack = await modern.result(
            "tasks/update", {"taskId": task_id, "inputResponses": {"one": one}}
        )
        half = await modern.result("tasks/get", {"taskId": task_id})
        two = {"action": "accept", "content": {"name": "乙"}}
        await modern.result("tasks/update", {"taskId": task_id, "inputResponses": {"two": two}})
        await server.tasks.wait(task_id)
        done = await modern.result("tasks/get", {"taskId": task_id})
    assert parked["status"] == "input_required"
    assert parked["inputRequests"]["one"]["method"] == "elicitation/create"
    assert set(ack) == {"resultType", "_meta"}
    assert half["status"] == "input_required" and list(half["inputRequests"]) == ["two"]
    assert done["status"] == "completed" and done["result"]["content"][0]["text"] == "甲+乙"


async def test_input_required_rounds_come_first_then_the_call_becomes_a_task() -> None:
    server = make_server()
    async with modern_client(server) as http:
        modern = Modern(http, TASKS)
        asked = await modern.result("tools/call", {"name": "ask_then_work"})
        created = await modern.result(
            "tools/call",
            {
                "name": "ask_then_work",
                "inputResponses": {"user_name": {"action": "accept", "content": {"name": "Ann"}}},
                "requestState": asked["requestState"],
            },
        )
        server.release.set()  # type: ignore[attr-defined]
        await server.tasks.wait(created["taskId"])
        done = await modern.result("tasks/get", {"taskId": created["taskId"]})
    assert asked["resultType"] == "input_required" and "taskId" not in asked
    assert created["resultType"] == "task" and "requestState" not in created
    assert done["result"]["content"][0]["text"] == "Hello, Ann"


async def test_tasks_left_running_by_a_stopped_host_fail_as_host_restarted(
    store_args: dict[str, Any],
) -> None:
    first = make_server(task_store=open_store(store_args))
    async with modern_client(first) as http:
        task_id = (await Modern(http, TASKS).result("tools/call", {"name": "long_job"}))["taskId"]
    await first.tasks.close()  # the host stops with the task still working
    second = make_server(task_store=open_store(store_args))
    async with modern_client(second) as http:
        seen = await Modern(http, TASKS).result("tasks/get", {"taskId": task_id})
    await second.tasks.close()
    assert seen["status"] == "failed" and "result" not in seen
    assert seen["error"] == {"code": -32603, "message": "failed: host restarted"}


async def test_the_store_forgets_expired_tasks_and_never_reopens_an_ended_one(
    store_args: dict[str, Any],
) -> None:
    store = open_store(store_args)
    old = TaskRecord("old", "me", "t", ttl_ms=1_000, created_at=time.time() - 5)
    await store.create(old)
    fresh = TaskRecord("fresh", "me", "t", ttl_ms=60_000)
    await store.create(fresh)
    ended = await store.update("fresh", {"status": "completed", "result": {"content": []}})
    reopened = await store.update("fresh", {"status": "working"})
    assert await store.get("old", "me") is None
    assert await store.get("fresh", "someone else") is None
    assert ended is not None and reopened is not None and reopened.status == "completed"
    await store.close()


async def test_replicas_share_tasks_and_a_restart_fails_only_its_own(
    store_args: dict[str, Any],
) -> None:
    replica_a, replica_b = open_store(store_args, "a"), open_store(store_args, "b")
    await replica_a.create(TaskRecord("on-a", "me", "t", ttl_ms=60_000))
    await replica_b.create(TaskRecord("on-b", "me", "t", ttl_ms=60_000))
    seen_on_b = await replica_b.get("on-a", "me")
    restarted_b = open_store(store_args, "b")
    failed = await restarted_b.recover()
    on_a = await replica_a.get("on-a", "me")
    on_b = await replica_a.get("on-b", "me")
    for store in (replica_a, replica_b, restarted_b):
        await store.close()
    assert seen_on_b is not None and seen_on_b.instance == "a"
    assert failed == 1
    assert on_a is not None and on_a.status == "working"
    assert on_b is not None and on_b.status == "failed" and on_b.error is not None
    assert on_b.error["message"] == "failed: host restarted"


async def test_a_listen_stream_following_a_task_gets_its_status_changes() -> None:
    server = make_server()
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": TASKS,
    }
    headers = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
    }
    async with serve_in_process(server) as url, httpx.AsyncClient() as http:
        created = await http.post(
            url,
            json={
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "long_job", "_meta": meta},
            },
            headers={**headers, "Mcp-Method": "tools/call", "Mcp-Name": "long_job"},
        )
        task_id = created.json()["result"]["taskId"]
        follow = {"taskIds": [task_id, "someone-elses"], "toolsListChanged": True}
        listen = {
            "jsonrpc": "2.0",
            "id": "follow",
            "method": "subscriptions/listen",
            "params": {"_meta": meta, "notifications": follow},
        }
        seen: list[dict[str, Any]] = []
        async with http.stream(
            "POST", url, json=listen, headers={**headers, "Mcp-Method": "subscriptions/listen"}
        ) as stream:
            async for line in stream.aiter_lines():
                if not line.startswith("data: {"):
                    continue
                seen.append(json.loads(line[6:]))
                if len(seen) == 1:  # acknowledged: now let the task finish
                    server.release.set()  # type: ignore[attr-defined]
                elif seen[-1]["params"]["status"] == "completed":
                    break
    ack, *updates = seen
    assert ack["params"]["notifications"]["taskIds"] == [task_id]  # only the caller's own
    assert {update["method"] for update in updates} == {"notifications/tasks"}
    final = updates[-1]["params"]
    assert final["taskId"] == task_id and final["result"]["content"][0]["text"] == "作业 done"
    assert final["_meta"] == {"io.modelcontextprotocol/subscriptionId": "follow"}
