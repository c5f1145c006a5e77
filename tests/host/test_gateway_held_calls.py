"""A downstream call held between a 2026 caller's rounds (issue 34): through `toolweave serve`'s
gateway, a downstream question the upstream client must answer in a new input-required round
keeps the downstream call open, and the retried round goes on with that same call instead of
running it again. Downstream: `eliciting_server.py`'s `order` (a toolkit server, 2026 over
stdio), which records every run and every order it places in a file. Upstream: the official MCP
SDK client in its default (2026) mode, and raw HTTP to send a retry to another replica (a
second gateway sharing the state key), which refuses it rather than ordering twice."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp.client import Client
from mcp.shared.exceptions import MCPError

from tests.host.serving import serving_gateway
from tests.host.test_gateway_elicitation import TOOLKIT, Person, _text
from toolweave.errors import ConfigError
from toolweave.host.config import parse_config
from toolweave.mcp import MCPClient

ORDER = "toolkit__order"
STATE_KEY = "a shared key of the two replicas, 32+ bytes"
_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
}
_HEADERS = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": ORDER}


def _servers(orders: Path) -> dict[str, dict[str, Any]]:
    env = {"ORDERS_FILE": str(orders)}
    return {"toolkit": {"command": sys.executable, "args": [str(TOOLKIT)], "env": env}}


def _lines(orders: Path) -> list[str]:
    return orders.read_text(encoding="utf-8").splitlines()


async def test_the_retried_round_goes_on_with_the_held_downstream_call(tmp_path: Path) -> None:
    orders = tmp_path / "orders.txt"
    person = Person({"address": "京都駅 2番出口"})
    async with (
        serving_gateway(tmp_path, _servers(orders), [ORDER]) as url,
        Client(url, mode="auto", elicitation_callback=person) as client,
    ):
        result = await client.call_tool(ORDER, {"item": "茶碗"})
    assert not result.is_error and _text(result) == "茶碗 ordered, to 京都駅 2番出口"
    assert [p.message for p in person.asked] == ["Where should the 茶碗 go?"]
    # One order: the downstream ran twice (its first round, then its own retry with the
    # answer, which `continued`), and the gateway's retry did not start a new call.
    assert _lines(orders) == ["run 茶碗", "order 茶碗", "run 茶碗"]


async def _call(http: httpx.AsyncClient, url: str, params: dict[str, Any]) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    answer: dict[str, Any] = (await http.post(url, json=body, headers=_HEADERS)).json()
    return answer


async def test_a_retry_reaching_a_replica_that_does_not_hold_the_call_is_refused(
    tmp_path: Path,
) -> None:
    orders = tmp_path / "orders.txt"
    serve = {"state_key": STATE_KEY}
    params = {"name": ORDER, "arguments": {"item": "急須"}, "_meta": _META}
    async with (
        serving_gateway(tmp_path / "a", _servers(orders), [ORDER], serve) as first,
        serving_gateway(tmp_path / "b", _servers(orders), [ORDER], serve) as second,
        httpx.AsyncClient() as http,
    ):
        asked = (await _call(http, first, params))["result"]
        answers = {
            key: {"action": "accept", "content": {"address": "大阪"}}
            for key in asked["inputRequests"]
        }
        retry = {**params, "inputResponses": answers, "requestState": asked["requestState"]}
        elsewhere = await _call(http, second, retry)
        after_refusal = _lines(orders)
        resumed = (await _call(http, first, retry))["result"]  # the replica that holds it goes on
    assert asked["resultType"] == "input_required" and list(asked["inputRequests"]) == [
        "forwarded-1"
    ]
    refusal = elsewhere["error"]
    assert refusal["code"] == -32603 and "is not held here" in refusal["message"]
    assert "call again without requestState" in refusal["message"]
    assert after_refusal == ["run 急須", "order 急須"]  # the refused retry ran nothing
    assert not resumed.get("isError") and resumed["content"][0]["text"] == "急須 ordered, to 大阪"
    assert _lines(orders) == ["run 急須", "order 急須", "run 急須"]


async def test_past_max_held_calls_a_question_needing_a_new_round_is_refused(
    tmp_path: Path,
) -> None:
    orders = tmp_path / "orders.txt"
    person = Person({"address": "nowhere"})
    async with (
        serving_gateway(tmp_path, _servers(orders), [ORDER], {"max_held_calls": 0}) as url,
        Client(url, mode="auto", elicitation_callback=person) as client,
    ):
        with pytest.raises(MCPError) as refused:
            await client.call_tool(ORDER, {"item": "箸"})
    assert refused.value.code == -32603 and "max_held_calls = 0" in str(refused.value)
    assert person.asked == [] and _lines(orders) == ["run 箸", "order 箸"]


async def test_one_client_cannot_fill_the_held_calls_of_everyone(tmp_path: Path) -> None:
    """`max_held_calls` is shared by every caller: alice, holding her share
    (`max_held_calls_per_client`), is refused another held call while bob still gets his."""
    orders = tmp_path / "orders.txt"
    tokens = {
        "alice": "alice's token, 32 bytes or more...",
        "bob": "bob's token, 32 bytes or more..",
    }
    serve = {"tokens": tokens, "max_held_calls": 2, "max_held_calls_per_client": 1}

    async def call(http: httpx.AsyncClient, url: str, who: str, item: str) -> dict[str, Any]:
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": ORDER, "arguments": {"item": item}, "_meta": _META}}  # fmt: skip
        headers = {**_HEADERS, "Authorization": f"Bearer {tokens[who]}"}
        answer: dict[str, Any] = (await http.post(url, json=body, headers=headers)).json()
        return answer

    async with (
        serving_gateway(tmp_path, _servers(orders), [ORDER], serve) as url,
        httpx.AsyncClient() as http,
    ):
        alice_first = await call(http, url, "alice", "皿")
        alice_second = await call(http, url, "alice", "椀")
        bob = await call(http, url, "bob", "箸")
    assert alice_first["result"]["resultType"] == "input_required"
    refusal = alice_second["error"]
    assert refusal["code"] == -32603
    assert "max_held_calls_per_client = 1" in refusal["message"]
    assert "1 of them yours" in refusal["message"]
    assert bob["result"]["resultType"] == "input_required"  # held: bob is not locked out


def test_held_call_ttl_must_be_finite() -> None:
    """nan slipped past `<= 0` into `call_later` (a NaN deadline in the loop's timer heap); inf
    held a call forever."""
    for ttl in (float("nan"), float("inf")):
        with pytest.raises(ValueError, match="held_call_ttl a finite number of seconds"):
            MCPClient.http("http://127.0.0.1:9/mcp", forward_questions=True, held_call_ttl=ttl)
        with pytest.raises(ConfigError, match=r"held_call_ttl: Input should be a finite"):
            parse_config({"serve": {"held_call_ttl": ttl}})
    with pytest.raises(ConfigError, match=r"max_held_calls_per_client: Input should be greater"):
        parse_config({"serve": {"max_held_calls_per_client": -1}})
