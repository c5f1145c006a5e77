"""Elicitation through the gateway (issue 34): a downstream server's `elicitation/create` (form
and URL mode, SEP-1036) reaches the upstream client of the call that caused it, through
`toolweave serve`, and the answer goes back down. Upstream: the official MCP SDK client, in its
default (2026: the question becomes an input-required round, and the retry runs the downstream
call again) and legacy (2025: a request on the session) modes. Downstream: server-everything
(npm, a 2025-11-25 server asking on its session) and a toolweave toolkit server (2026-07-28,
asking through input-required results). A client that cannot be asked gets a clear refusal, and
so does a 2025 question that cannot be tied to one of several calls in flight."""

from __future__ import annotations

import asyncio
import sys
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import pytest
from mcp import types
from mcp.client import Client
from mcp.shared.exceptions import MCPError

from tests.host.serving import serving_gateway
from tests.host.test_gateway import EVERYTHING, NODE, needs_node
from toolweave.mcp.shared.errors import MISSING_CLIENT_CAPABILITY

pytestmark = needs_node
MODES = ["auto", "legacy"]
FORM = {"everything": "everything__trigger-elicitation-request", "toolkit": "toolkit__book"}
URL = {"everything": "everything__trigger-url-elicitation", "toolkit": "toolkit__pay"}
TOOLKIT = Path(__file__).with_name("eliciting_server.py")
PAYMENTS = Path(__file__).parents[1] / "peers" / "url_payment_server.mjs"


def gateway(tmp_path: Path) -> AbstractAsyncContextManager[str]:
    servers = {
        "everything": {"command": str(NODE), "args": [str(EVERYTHING)]},
        "toolkit": {"command": sys.executable, "args": [str(TOOLKIT)]},
    }
    return serving_gateway(tmp_path, servers, [*FORM.values(), *URL.values()])


class Person:
    """The upstream user: answers every question with `content` and records what was asked."""

    def __init__(self, content: dict[str, Any] | None = None) -> None:
        self.content = content
        self.asked: list[types.ElicitRequestParams] = []

    async def __call__(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.asked.append(params)
        return types.ElicitResult(action="accept", content=self.content)


def _text(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


@pytest.mark.parametrize("mode", MODES)
async def test_a_form_question_reaches_the_upstream_client(tmp_path: Path, mode: str) -> None:
    everyone = Person({"name": "梅雨", "check": True, "nights": 3})
    async with gateway(tmp_path) as url, Client(url, mode=mode, elicitation_callback=everyone) as c:
        everything = await c.call_tool(FORM["everything"], {})
        toolkit = await c.call_tool(FORM["toolkit"], {"city": "京都"})
    assert not everything.is_error and "- Name: 梅雨" in _text(everything), _text(everything)
    assert not toolkit.is_error and _text(toolkit) == "booked 3 nights in 京都"
    asked = {p.message for p in everyone.asked}
    assert asked == {"Please provide inputs for the following fields:", "How many nights in 京都?"}
    forms = [p for p in everyone.asked if isinstance(p, types.ElicitRequestFormParams)]
    assert len(forms) == len(everyone.asked)
    assert any("nights" in (p.requested_schema.get("properties") or {}) for p in forms)


@pytest.mark.parametrize("mode", MODES)
async def test_a_url_question_reaches_the_upstream_client(tmp_path: Path, mode: str) -> None:
    person = Person()
    page = "https://example.com/consent"
    async with gateway(tmp_path) as url, Client(url, mode=mode, elicitation_callback=person) as c:
        everything = await c.call_tool(URL["everything"], {"url": page, "elicitationId": "e-1"})
        toolkit = await c.call_tool(URL["toolkit"], {"amount": 12})
    assert not everything.is_error and "completed the URL elicitation flow" in _text(everything)
    assert "Elicitation ID: e-1" in _text(everything)
    assert not toolkit.is_error and _text(toolkit) == "payment page accept"
    urls = [p for p in person.asked if isinstance(p, types.ElicitRequestURLParams)]
    assert len(urls) == len(person.asked)
    assert {(p.url, p.elicitation_id) for p in urls} == {
        (page, "e-1"),
        ("https://pay.example.com/checkout", "order-7"),
    }


@pytest.mark.parametrize("mode", MODES)
async def test_a_url_questions_completion_reaches_a_2025_upstream_client(
    tmp_path: Path, mode: str
) -> None:
    """A 2025 downstream server on the TypeScript SDK sends `notifications/elicitation/complete`
    once the person accepted its payment page; the gateway passes it to the client the URL
    question went to, on that call's request. A 2026 client gets none: the 2026-07-28 revision
    removed the notification (the official SDK drops it), and its call still completes, the
    downstream call held between its rounds."""
    completed: list[str] = []

    async def listen(message: Any) -> None:
        if getattr(message, "method", None) == "notifications/elicitation/complete":
            completed.append(message.params.elicitation_id)

    servers = {"payments": {"command": str(NODE), "args": [str(PAYMENTS)]}}
    person = Person()
    async with (
        serving_gateway(tmp_path, servers, ["payments__pay"]) as url,
        Client(url, mode=mode, elicitation_callback=person, message_handler=listen) as client,
    ):
        paid = await client.call_tool("payments__pay", {"amount": 30})
    assert not paid.is_error and _text(paid) == "payment accept"
    assert [(p.url, p.elicitation_id) for p in person.asked] == [  # type: ignore[union-attr]
        ("https://pay.example.com/checkout", "payment-30")
    ]
    assert completed == (["payment-30"] if mode == "legacy" else [])


@pytest.mark.parametrize("mode", MODES)
async def test_a_client_that_cannot_be_asked_gets_a_clear_refusal(
    tmp_path: Path, mode: str
) -> None:
    refusal = "did not declare the 'elicitation' capability"
    async with gateway(tmp_path) as url, Client(url, mode=mode) as client:  # no elicitation
        # A 2025 downstream server hears the refusal as its request's error and says so.
        everything = await client.call_tool(FORM["everything"], {})
        # A 2026 downstream question is the call's own: the call is refused with -32021.
        with pytest.raises(MCPError) as refused:
            await client.call_tool(FORM["toolkit"], {"city": "Lyon"})
    assert everything.is_error and refusal in _text(everything), _text(everything)
    assert refused.value.code == MISSING_CLIENT_CAPABILITY and refusal in str(refused.value)


async def test_a_2025_question_with_two_calls_in_flight_is_refused(tmp_path: Path) -> None:
    """A 2025 downstream request does not say which call it belongs to: while the first call's
    question is open, the second call's question to the same server cannot be routed."""
    first_asked, second_done = asyncio.Event(), asyncio.Event()

    async def person(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        first_asked.set()
        await second_done.wait()  # the first call stays in flight, its question open
        return types.ElicitResult(action="accept", content={"name": "first"})

    async with (
        gateway(tmp_path) as url,
        Client(url, mode="legacy", elicitation_callback=person) as client,
    ):
        first = asyncio.ensure_future(client.call_tool(FORM["everything"], {}))
        await first_asked.wait()
        second = await client.call_tool(FORM["everything"], {})
        second_done.set()
        answered = await first
    assert not answered.is_error and "- Name: first" in _text(answered), _text(answered)
    assert second.is_error and "2 calls are in flight" in _text(second), _text(second)
