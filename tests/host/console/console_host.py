"""A real `toolweave serve --http` host in the test's event loop, and an agent whose calls to
`get_weather` the governance pipeline puts to the console's approver (imported by module name
by the console tests)."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import tempfile
from collections.abc import AsyncIterator
from typing import Any

from toolweave.agent import Agent
from toolweave.agent.orchestration import RunLimits
from toolweave.governance import Governance, Rules
from toolweave.host import ToolHost, parse_config
from toolweave.llm import Message, ScriptedModel, ToolCallPart, Usage
from toolweave.tools import Tool


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.asynccontextmanager
async def serving(token: str | None = None, **serve: Any) -> AsyncIterator[ToolHost]:
    """The host bound to a free loopback port until the block ends."""
    table: dict[str, Any] = {
        "transport": "http",
        "port": free_port(),
        "providers": ["demo"],
        "data_dir": tempfile.mkdtemp(prefix="toolweave-console-"),  # the query log lives here
        **serve,
    }
    if token is not None:
        table["token"] = token
    host = ToolHost(parse_config({"serve": table}, env={}))
    ready = asyncio.Event()
    task = asyncio.ensure_future(host.serve_http(on_ready=lambda _port: ready.set()))
    waiter = asyncio.ensure_future(ready.wait())
    await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
    if task.done():
        waiter.cancel()
        task.result()  # raises why the host did not start
    try:
        yield host
    finally:
        host.stop()
        await task


def gated_weather_agent(
    host: ToolHost, tools: list[Tool], city: str, answer: str, *, log_run: bool = False
) -> Agent:
    """An agent that asks for `city`'s weather (a call needing the console's approval), then
    answers `answer`; each model call reports 120 input and 30 output tokens. With `log_run`
    the run is a row of the host's query log, beside the served calls."""
    model = ScriptedModel(
        [
            Message.assistant(tool_calls=[ToolCallPart("c1", "get_weather", {"city": city})]),
            Message.assistant(answer),
        ],
        usage=Usage(input_tokens=120, output_tokens=30),
    )
    # The governance pipeline asks about get_weather; the console is the approver.
    query_log = host.accounting.query_log() if log_run else None  # the host's own log
    return Agent(
        model,
        tools,
        governance=Governance(rules=Rules(ask=["get_weather"]), approver=host.console.approvals),
        orchestration=RunLimits(query_log=query_log),
    )
