"""`fetch`: HTTP GET a public web page and read it as Markdown.

Outbound requests are where a prompt-injected model does damage, so the defaults are strict:
public addresses only (`_netguard.py`), optional domain allow-list, every redirect hop checked
(against the addresses, the allow-list and, when governance cleared the call, the same rules
that cleared its first URL: `toolweave.tools.targets`), a byte cap on the decoded body read as
a stream (`_http_body.py`: a huge page or a gzip bomb costs no more than the cap), a time limit
for the whole exchange, and text-like content types only. HTML becomes Markdown through
markdownify (imported only when a page needs it) in a worker thread, never on the event loop,
under what is left of the time limit: the worker stops at the next element once the call is
over, and a page with more elements than `max_html_nodes` or nested deeper than
`max_html_depth` is read as plain text instead, which costs time linear in its size.
"""

from __future__ import annotations

import asyncio
import html as html_module
import re
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx

from toolweave.builtins._netguard import check_url, normalise_domains, redirect_refused
from toolweave.builtins._output import check_positive, untrusted
from toolweave.builtins.http_body import ACCEPT_ENCODING, read_capped
from toolweave.tools.base import Tool
from toolweave.tools.errors import ExecutionFailed, ToolTimeout
from toolweave.tools.function_tool import FunctionTool
from toolweave.tools.permissions import Permission
from toolweave.tools.result import ToolResult
from toolweave.tools.shaping import DEFAULT_MAX_CHARS
from toolweave.tools.targets import TargetCheck, target_check
from toolweave.version import __version__

DEFAULT_TIMEOUT = 15.0
"""Seconds for the whole fetch, redirects included."""
DEFAULT_MAX_BYTES = 2 * 1024 * 1024
"""Bytes of a response body read at most."""
DEFAULT_MAX_REDIRECTS = 5
"""Redirect hops followed, each checked like the first URL."""
DEFAULT_MAX_HTML_NODES = 20_000
"""Elements of a page (counted by their `<` before parsing) converted to Markdown at most;
past it the page is read as plain text."""
DEFAULT_MAX_HTML_DEPTH = 200
"""How deep a page's elements may nest and still be converted to Markdown; past it, plain
text (the converter recurses once per level)."""
USER_AGENT = f"toolweave/{__version__} (+fetch tool)"
_HIDDEN = ("script", "style", "noscript", "template", "iframe", "svg")
_HIDDEN_BLOCK = re.compile(rf"<({'|'.join(_HIDDEN)})\b.*?</\1\s*>", re.IGNORECASE | re.DOTALL)
_BLOCK_END = re.compile(r"<(?:br|/p|/div|/tr|/li|/h[1-6]|/table|/ul|/ol)\b[^>]*>", re.IGNORECASE)
_TAG = re.compile(r"<[^>]*>")
_BLANK_LINES = re.compile(r"\n{3,}")
_TEXT_TYPES = ("text/", "application/json", "application/xml", "application/xhtml+xml")
_REDIRECTS = frozenset({301, 302, 303, 307, 308})


@dataclass(frozen=True, slots=True)
class Downloaded:
    """What `download` read: the final URL (after redirects), its content type and charset,
    the body (at most `max_bytes`) and whether it was cut there."""

    url: str
    content_type: str
    charset: str | None
    body: bytes
    cut: bool


async def download(
    url: str,
    *,
    allow_domains: frozenset[str] | None = None,
    allow_private: bool = False,
    timeout: float = DEFAULT_TIMEOUT,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_redirects: int = DEFAULT_MAX_REDIRECTS,
    allowed: TargetCheck | None = None,
    tool: str = "fetch",
) -> Downloaded:
    """A checked GET under fetch's rules: public addresses only unless `allow_private`, the
    `allow_domains` list, every redirect hop checked again (and against `allowed`, the rules
    of the call), the body read up to `max_bytes`, all within `timeout`. `tool` names the
    caller in errors (fetch, a skill install)."""
    try:
        async with (
            asyncio.timeout(timeout),
            httpx.AsyncClient(follow_redirects=False, trust_env=False, timeout=timeout) as client,
        ):
            current = httpx.URL(url)
            for _ in range(max_redirects + 1):
                target = await check_url(current, allow_domains, allow_private)
                request = client.build_request(
                    "GET",
                    target.url,
                    headers={
                        "Host": target.host_header,
                        "User-Agent": USER_AGENT,
                        "Accept-Encoding": ACCEPT_ENCODING,
                    },
                    extensions={"sni_hostname": target.server_name},
                )
                response = await client.send(request, stream=True)
                try:
                    if response.status_code in _REDIRECTS and "location" in response.headers:
                        current = current.join(response.headers["location"])
                        if allowed is not None and not allowed(str(current)):
                            raise redirect_refused(str(current))
                        continue
                    body, cut = await read_capped(response, max_bytes, tool)
                finally:
                    await response.aclose()
                if response.status_code >= 400:
                    raise ExecutionFailed(
                        f"{current} answered HTTP {response.status_code}", tool=tool
                    )
                kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
                return Downloaded(str(current), kind, response.charset_encoding, body, cut)
            raise ExecutionFailed(
                f"more than {max_redirects} redirects (max_redirects) starting at {url}",
                tool=tool,
            )
    except TimeoutError:
        raise ToolTimeout(
            f"fetching {url} took longer than {timeout:g} s", tool=tool, timeout=timeout
        ) from None
    except httpx.HTTPError as exc:
        raise ExecutionFailed(f"fetching {url} failed: {exc}", tool=tool) from exc


async def fetch_url(
    url: str,
    *,
    allow_domains: frozenset[str] | None = None,
    allow_private: bool = False,
    timeout: float = DEFAULT_TIMEOUT,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_redirects: int = DEFAULT_MAX_REDIRECTS,
    max_html_nodes: int = DEFAULT_MAX_HTML_NODES,
    max_html_depth: int = DEFAULT_MAX_HTML_DEPTH,
    allowed: TargetCheck | None = None,
) -> tuple[str, str, str]:
    """(final URL, content type, text: Markdown for HTML) of a checked GET (`download`). The
    text is converted under what is left of `timeout`."""
    stop = threading.Event()  # tells the HTML worker the call is over
    try:
        async with asyncio.timeout(timeout):
            got = await download(
                url,
                allow_domains=allow_domains,
                allow_private=allow_private,
                timeout=timeout,
                max_bytes=max_bytes,
                max_redirects=max_redirects,
                allowed=allowed,
            )
            kind = got.content_type
            if kind and not kind.startswith(_TEXT_TYPES):
                raise ExecutionFailed(
                    f"{got.url} is {kind}, not text; fetch reads web pages and text only",
                    tool="fetch",
                )
            text = await asyncio.to_thread(
                _decode, got.body, kind, got.charset, _Bounds(max_html_nodes, max_html_depth, stop)
            )
            if got.cut:
                text += f"\n\n[... the page was cut at {max_bytes} bytes (max_bytes) ...]"
            return got.url, kind, text
    except TimeoutError:
        raise ToolTimeout(
            f"fetching {url} took longer than {timeout:g} s", tool="fetch", timeout=timeout
        ) from None
    finally:
        stop.set()


def downloader(
    allow_domains: list[str] | None = None,
    *,
    allow_private: bool = False,
    timeout: float = DEFAULT_TIMEOUT,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_redirects: int = DEFAULT_MAX_REDIRECTS,
    tool: str = "download",
) -> Callable[[str], Awaitable[tuple[str, bytes]]]:
    """`async (url) -> (final URL, body)` under fetch's rules (`download`), for files a
    command installs (skills from a URL): a body over `max_bytes` is refused, never cut."""
    check_positive("timeout", timeout)
    check_positive("max_bytes", max_bytes)
    domains = normalise_domains(allow_domains)

    async def get(url: str) -> tuple[str, bytes]:
        got = await download(
            url,
            allow_domains=domains,
            allow_private=allow_private,
            timeout=timeout,
            max_bytes=max_bytes,
            max_redirects=max_redirects,
            tool=tool,
        )
        if got.cut:
            raise ExecutionFailed(
                f"{got.url} is larger than {max_bytes} bytes (max_bytes); nothing was installed",
                tool=tool,
            )
        return got.url, got.body

    return get


def _decode(body: bytes, kind: str, charset: str | None, bounds: _Bounds) -> str:
    if kind in ("text/html", "application/xhtml+xml"):
        return html_to_markdown(body, charset, bounds=bounds)
    return body.decode(charset or "utf-8", errors="replace")


def html_to_markdown(
    html: bytes | str, charset: str | None = None, *, bounds: _Bounds | None = None
) -> str:
    """Markdown of an HTML document, without scripts, styles and other non-content elements;
    plain text when it has more elements or nests deeper than `bounds` allow (defaults: the
    module's), counted before anything is parsed, so the cost stays linear in the page."""
    limits = bounds or _Bounds(DEFAULT_MAX_HTML_NODES, DEFAULT_MAX_HTML_DEPTH, threading.Event())
    source = html if isinstance(html, str) else html.decode(charset or "utf-8", "replace")
    if source.count("<") > limits.max_nodes:  # every element opens with one
        note = f"the page has more than {limits.max_nodes} elements (max_html_nodes)"
        return _tidy(f"{_plain_text(source)}\n\n[... {note}: read as plain text ...]")
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(
        html, "html.parser", from_encoding=charset if isinstance(html, bytes) else None
    )
    for element in soup(_HIDDEN):
        element.decompose()
    title = soup.title.get_text(strip=True) if soup.title else ""
    if soup.title:
        soup.title.decompose()
    if limits.too_deep(soup):
        note = f"the page nests deeper than {limits.max_depth} levels (max_html_depth)"
        markdown = soup.get_text("\n") + f"\n\n[... {note}: read as plain text ...]"
    else:
        markdown = _converter(limits.stop).convert_soup(soup)
    return (f"# {title}\n\n" if title else "") + _tidy(markdown)


def _tidy(markdown: str) -> str:
    text = "\n".join(line.rstrip() for line in markdown.splitlines())
    return _BLANK_LINES.sub("\n\n", text).strip()


def _plain_text(source: str) -> str:
    """The text of a page too large to convert: hidden elements dropped, block ends as line
    breaks, other tags removed, entities decoded (each step one linear regex pass)."""
    text = _HIDDEN_BLOCK.sub(" ", source)
    text = _BLOCK_END.sub("\n", text)
    return html_module.unescape(_TAG.sub(" ", text))


def fetch_tool(
    allow_domains: list[str] | None = None,
    *,
    allow_private: bool = False,
    timeout: float = DEFAULT_TIMEOUT,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_chars: int = DEFAULT_MAX_CHARS,
    max_redirects: int = DEFAULT_MAX_REDIRECTS,
    max_html_nodes: int = DEFAULT_MAX_HTML_NODES,
    max_html_depth: int = DEFAULT_MAX_HTML_DEPTH,
) -> Tool:
    """The `fetch` tool. `allow_domains` limits it to those domains and their subdomains;
    `allow_private=True` lets it reach private and loopback addresses (tests, intranets)."""
    for name, value in (
        ("timeout", timeout),
        ("max_bytes", max_bytes),
        ("max_chars", max_chars),
        ("max_html_nodes", max_html_nodes),
        ("max_html_depth", max_html_depth),
    ):
        check_positive(name, value)  # fmt: skip
    domains = normalise_domains(allow_domains)
    options: dict[str, Any] = {
        "allow_domains": domains,
        "allow_private": allow_private,
        "timeout": timeout,
        "max_bytes": max_bytes,
        "max_redirects": max_redirects,
        "max_html_nodes": max_html_nodes,
        "max_html_depth": max_html_depth,
    }

    async def fetch(url: str) -> ToolResult:
        """Fetch a web page (HTTP GET) and return its text, HTML converted to Markdown.

        Args:
            url: The http or https URL to fetch.
        """
        final, kind, text = await fetch_url(url, **options, allowed=target_check())
        return untrusted(f"URL: {final}\nContent-Type: {kind}\n\n{text}", "fetch", max_chars)

    # Rules match a fetch on its domain (`fetch(domain:example.com)`), taken from `url`, and
    # every redirect hop meets them again (`checks_targets`).
    made = FunctionTool(
        fetch, read_only=True, open_world=True, permissions=[Permission.NETWORK], primary_arg="url"
    )
    made.checks_targets = True  # type: ignore[attr-defined]
    return made


class _Bounds:
    """How much HTML is converted to Markdown (`max_nodes`, `max_depth`) and the event that
    says the call is over (`stop`), checked by the worker at every element."""

    def __init__(self, max_nodes: int, max_depth: int, stop: threading.Event) -> None:
        self.max_nodes, self.max_depth, self.stop = max_nodes, max_depth, stop

    def too_deep(self, soup: Any) -> bool:
        """Whether elements of `soup` nest deeper than `max_depth` (walked without recursion)."""
        pending = [(soup, 0)]
        while pending:
            node, depth = pending.pop()
            if depth > self.max_depth:
                return True
            pending.extend((child, depth + 1) for child in getattr(node, "contents", ()))
        return False


def _converter(stop: threading.Event) -> Any:
    """A markdownify converter that gives up at the next element once `stop` is set."""
    from markdownify import MarkdownConverter

    class _Stoppable(MarkdownConverter):
        def process_tag(self, node: Any, parent_tags: Any = None) -> Any:
            if stop.is_set():
                raise _Stopped
            return super().process_tag(node, parent_tags)  # type: ignore[misc]  # not in stubs

    return _Stoppable(heading_style="ATX")


class _Stopped(Exception):
    """The call ended while its page was being converted; nobody waits for the Markdown."""
