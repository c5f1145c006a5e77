"""`fetch` under domain rules and hostile pages (second review, classes 8 and 10).

Class 10: a `WebFetch(domain:...)` deny was evaded by other spellings of the host (IP literal
forms, Unicode full stops, a trailing dot) and by a redirect. Class 8: converting a large HTML
table froze the event loop past the call's timeout. Each attack is replayed against a loopback
server; what is refused must never reach it.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from tests.builtins.fake_http import FakeServer
from toolweave.builtins import fetch_tool, html_to_markdown
from toolweave.governance import CallBlocked, GateContext, Governance, Rules
from toolweave.tools import PermissionDenied, Tool, ToolContext, ToolTimeout
from toolweave.tools.hosts import canonical_host, url_host

LOOPBACK_SPELLINGS = [
    "127.0.0.1",
    "[::ffff:127.0.0.1]",
    "2130706433",
    "0x7f000001",
    "127.1",
    "0177.0.0.1",
    "127.0.1",
    "127\u30020\u30020\u30021",
    "127\uff0e0\uff0e0\uff0e1",
    "x\u2100@127.0.0.1",  # a user name urlsplit refuses (NFKC gives `a/c`), httpx sends
    "x\uff0f@127.0.0.1",
]


@pytest.mark.parametrize("host", LOOPBACK_SPELLINGS)
def test_every_ip_literal_form_is_one_host(host: str) -> None:
    assert url_host(f"http://{host}:8080/x") == "127.0.0.1"


def test_names_are_lower_case_idna_without_a_trailing_dot() -> None:
    assert url_host("http://User@Internal\u3002Example\uff0eCOM.:81/") == "internal.example.com"
    assert url_host("https://bücher.de/") == "xn--bcher-kva.de" == canonical_host("BÜCHER.de.")
    assert url_host("http://[::1]/") == "::1" and url_host("http://[bad/") == ""
    assert canonical_host("256.1.1.1") == "256.1.1.1"  # not an address: compared as a name


async def governed(tool: Tool, url: str, rules: Rules) -> Any:
    gate = GateContext(session_id="s")
    args = (await Governance(rules=rules).clear("fetch", "c", {"url": url}, tool, gate)).args
    return await tool.execute(args, ToolContext(tool_call_cleared=True))


@pytest.mark.parametrize("host", LOOPBACK_SPELLINGS)
async def test_a_domain_deny_holds_for_every_spelling(host: str, http_server: FakeServer) -> None:
    http_server.route("/", "secret", content_type="text/plain")
    rules = Rules(deny=["WebFetch(domain:127.0.0.1)"])
    with pytest.raises(CallBlocked, match=r"domain:127\.0\.0\.1"):
        await governed(fetch_tool(allow_private=True), f"http://{host}:{http_server.port}/", rules)
    assert http_server.requests == []


def test_a_deny_rule_spelled_loosely_is_normalised_too() -> None:
    rules = Rules(deny=["WebFetch(domain:Internal.Example.)", "WebFetch(domain:*.Corp.test.)"])
    for url in ("http://internal.example./", "http://INTERNAL\u3002example/x",
                "http://a.CORP.test./"):  # fmt: skip
        assert rules.decide("fetch", {"url": url}) == "deny", url
    assert rules.decide("fetch", {"url": "http://example.org/"}) != "deny"


async def test_every_redirect_hop_meets_the_rules(http_server: FakeServer) -> None:
    port = http_server.port
    http_server.route("/start", "", status=302, location=f"http://localhost:{port}/secret")
    http_server.route("/numeric", "", status=302, location=f"http://2130706433:{port}/secret")
    http_server.route("/secret", "the secret", content_type="text/plain")
    tool = fetch_tool(allow_private=True)
    rules = Rules(deny=["WebFetch(domain:localhost)"])
    with pytest.raises(PermissionDenied, match="redirected to http://localhost"):
        await governed(tool, f"http://127.0.0.1:{port}/start", rules)
    numeric = Rules(deny=["WebFetch(domain:127.0.0.1)"])
    with pytest.raises(PermissionDenied, match="permission rules refuse"):
        await governed(tool, f"http://localhost:{port}/numeric", numeric)
    assert [r.target for r in http_server.requests] == ["/start", "/numeric"]
    allowed = await governed(tool, f"http://127.0.0.1:{port}/start", Rules())
    assert "the secret" in allowed.text  # without a rule against it the hop is followed


async def test_fetch_allow_domains_compare_normalised_hosts(http_server: FakeServer) -> None:
    http_server.route("/", "ok", content_type="text/plain")
    tool = fetch_tool(allow_domains=["127.0.0.1."], allow_private=True)
    result = await tool.execute({"url": f"http://127.1:{http_server.port}/"}, ToolContext())
    assert "ok" in result.text


def big_table(rows: int) -> str:
    cells = "".join(
        f"<tr><td>{i}</td><td>名称 {i}</td><td><b>{i * 3}</b></td></tr>" for i in range(rows)
    )
    return f"<html><body><table>{cells}</table></body></html>"


async def loop_gaps(work: Any) -> tuple[Any, float]:
    """Run `work` while a ticker measures the longest the event loop went without a turn."""
    longest = 0.0
    done = asyncio.Event()

    async def ticker() -> None:
        nonlocal longest
        last = time.perf_counter()
        while not done.is_set():
            await asyncio.sleep(0.01)
            now = time.perf_counter()
            longest = max(longest, now - last)
            last = now

    task = asyncio.create_task(ticker())
    try:
        return await work, longest
    finally:
        done.set()
        await task


async def test_a_large_table_never_freezes_the_loop(http_server: FakeServer) -> None:
    page = big_table(30_000)  # about 1.6 MB, ~240k nodes: past max_html_nodes
    assert len(page.encode()) > 1_500_000
    http_server.route("/t", page, content_type="text/html; charset=utf-8")
    tool = fetch_tool(allow_private=True, max_chars=2000)
    started = time.perf_counter()
    result, longest = await loop_gaps(tool.execute({"url": f"{http_server.url}/t"}, ToolContext()))
    assert "max_html_nodes" in result.text or "名称" in result.text
    assert longest < 0.5, f"the event loop stalled {longest:.2f} s"
    assert time.perf_counter() - started < 15


async def test_the_conversion_ends_with_the_call_deadline(http_server: FakeServer) -> None:
    http_server.route("/t", big_table(8_000), content_type="text/html")
    tool = fetch_tool(allow_private=True, timeout=0.3, max_html_nodes=10**7)
    started = time.perf_counter()
    with pytest.raises(ToolTimeout, match=r"longer than 0\.3 s"):
        await loop_gaps(tool.execute({"url": f"{http_server.url}/t"}, ToolContext()))
    assert time.perf_counter() - started < 1.5


def test_deep_or_huge_pages_are_read_as_plain_text() -> None:
    deep = "<div>" * 5000 + "底部 bottom" + "</div>" * 5000
    assert "底部 bottom" in html_to_markdown(deep) and "max_html_depth" in html_to_markdown(deep)
    small = html_to_markdown(big_table(3))
    assert "名称 2" in small and "plain text" not in small


def test_the_html_bounds_are_toolweave_toml_settings() -> None:
    from toolweave.errors import ConfigError
    from toolweave.host import parse_config

    with pytest.raises(ConfigError, match="fetch_max_html_nodes"):
        parse_config({"builtins": {"fetch": True, "fetch_max_html_nodes": 0}}, env={})
    config = parse_config({"builtins": {"fetch": True, "fetch_max_html_depth": 50}}, env={})
    assert config.section("builtins").fetch_max_html_depth == 50  # type: ignore[attr-defined]
