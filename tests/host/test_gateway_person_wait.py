"""The wait for a person does not count against a downstream request's timeout (issue 34): a
2025-11-25 downstream server (server-everything) asks, during a call through `toolweave serve`'s
gateway, a question only the upstream client's user can answer; the user takes longer than the
downstream request's whole timeout (`[mcpServers.<name>].timeout`) and the host's own timeout
of the proxied call (`[serve].tool_timeout`), both tiny here, and the call still completes, in
the official SDK client's 2026 mode (the call is held between rounds) and its legacy mode (the
question is a request on the 2025 session, inside the host's timed call). After the answer the
clocks run again: a downstream call that then stalls still times out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import types
from mcp.client import Client
from mcp.shared.exceptions import MCPError

from tests.host.serving import serving_gateway
from tests.host.test_gateway import EVERYTHING, NODE, needs_node
from tests.host.test_gateway_elicitation import FORM, Person, _text
from toolweave.mcp import MCPTimeout
from toolweave.mcp.shared.peer import JSONRPCPeer

pytestmark = needs_node
TIMEOUT = 1.5
"""The downstream request timeout under test (seconds): small, so one runs out quickly."""
TOOL_TIMEOUT = 2 * TIMEOUT
"""The host's timeout of the proxied call: longer, so a stalled call ends by the downstream's."""


async def one_timeout_passes() -> None:
    """Return once a request under the longer of the two timeouts, on this event loop (the
    gateway's), has timed out: a call whose clocks kept running would have timed out too."""

    async def nowhere(message: dict[str, Any]) -> None:
        return None

    with pytest.raises(MCPTimeout):
        await JSONRPCPeer(nowhere).request("never-answered", timeout=TOOL_TIMEOUT)


class SlowPerson(Person):
    """Answers only after a whole downstream timeout has passed."""

    async def __call__(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        await one_timeout_passes()
        return await super().__call__(context, params)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_person_slower_than_the_downstream_timeout_still_answers(
    tmp_path: Path, mode: str
) -> None:
    servers = {"everything": {"command": str(NODE), "args": [str(EVERYTHING)], "timeout": TIMEOUT}}
    person = SlowPerson({"name": "梅雨", "check": True, "nights": 3})
    long_run = "everything__trigger-long-running-operation"
    allow = [FORM["everything"], long_run]
    async with (
        serving_gateway(tmp_path, servers, allow, {"tool_timeout": TOOL_TIMEOUT}) as url,
        Client(url, mode=mode, elicitation_callback=person) as client,
    ):
        answered = await client.call_tool(FORM["everything"], {})
        # The clock is not switched off: a downstream call longer than its timeout still ends.
        with pytest.raises(MCPError, match=f"timed out after {TIMEOUT:g}s"):
            await client.call_tool(long_run, {"duration": 60 * TIMEOUT, "steps": 1})
    assert not answered.is_error and "- Name: 梅雨" in _text(answered), _text(answered)
    assert len(person.asked) == 1
