"""`fetch`: HTTP GET a public web page and read it as Markdown.

Outbound requests are where a prompt-injected model does damage, so the defaults are strict:
public addresses only (`_netguard.py`), optional domain allow-list, every redirect hop checked,
a byte cap on the decoded body read as a stream (`_http_body.py`: a huge page or a gzip bomb
costs no more than the cap), a time limit for the whole exchange, and text-like content types
only. HTML becomes Markdown through markdownify, imported only when a page needs it.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from toolweave.builtins._netguard import check_url, normalise_domains
from toolweave.builtins._output import check_positive, untrusted
from toolweave.builtins.http_body import ACCEPT_ENCODING, read_capped
from toolweave.tools.base import Tool
from toolweave.tools.errors import ExecutionFailed, ToolTimeout
from toolweave.tools.function_tool import FunctionTool
from toolweave.tools.permissions import Permission
from toolweave.tools.result import ToolResult
from toolweave.tools.shaping import DEFAULT_MAX_CHARS
from toolweave.version import __version__

DEFAULT_TIMEOUT = 15.0
"""Seconds for the whole fetch, redirects included."""
DEFAULT_MAX_BYTES = 2 * 1024 * 1024
"""Bytes of a response body read at most."""
DEFAULT_MAX_REDIRECTS = 5
"""Redirect hops followed, each checked like the first URL."""
USER_AGENT = f"toolweave/{__version__} (+fetch tool)"
_TEXT_TYPES = ("text/", "application/json", "application/xml", "application/xhtml+xml")
_REDIRECTS = frozenset({301, 302, 303, 307, 308})


async def fetch_url(
    url: str,
    *,
    allow_domains: frozenset[str] | None = None,
    allow_private: bool = False,
    timeout: float = DEFAULT_TIMEOUT,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_redirects: int = DEFAULT_MAX_REDIRECTS,
) -> tuple[str, str, str]:
    """(final URL, content type, text: Markdown for HTML) of a checked GET."""
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
                        continue
                    body, cut = await read_capped(response, max_bytes, "fetch")
                finally:
                    await response.aclose()
                kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
                if response.status_code >= 400:
                    raise ExecutionFailed(
                        f"{current} answered HTTP {response.status_code}", tool="fetch"
                    )
                if kind and not kind.startswith(_TEXT_TYPES):
                    raise ExecutionFailed(
                        f"{current} is {kind}, not text; fetch reads web pages and text only",
                        tool="fetch",
                    )
                text = _decode(body, kind, response.charset_encoding)
                if cut:
                    text += f"\n\n[... the page was cut at {max_bytes} bytes (max_bytes) ...]"
                return str(current), kind, text
            raise ExecutionFailed(
                f"more than {max_redirects} redirects (max_redirects) starting at {url}",
                tool="fetch",
            )
    except TimeoutError:
        raise ToolTimeout(
            f"fetching {url} took longer than {timeout:g} s", tool="fetch", timeout=timeout
        ) from None
    except httpx.HTTPError as exc:
        raise ExecutionFailed(f"fetching {url} failed: {exc}", tool="fetch") from exc


def _decode(body: bytes, kind: str, charset: str | None) -> str:
    if kind in ("text/html", "application/xhtml+xml"):
        return html_to_markdown(body, charset)
    return body.decode(charset or "utf-8", errors="replace")


def html_to_markdown(html: bytes | str, charset: str | None = None) -> str:
    """Markdown of an HTML document, without scripts, styles and other non-content elements."""
    from bs4 import BeautifulSoup
    from markdownify import MarkdownConverter

    soup = BeautifulSoup(
        html, "html.parser", from_encoding=charset if isinstance(html, bytes) else None
    )
    for element in soup(["script", "style", "noscript", "template", "iframe", "svg"]):
        element.decompose()
    title = soup.title.get_text(strip=True) if soup.title else ""
    if soup.title:
        soup.title.decompose()
    markdown: str = MarkdownConverter(heading_style="ATX").convert_soup(soup)
    lines = [line.rstrip() for line in markdown.splitlines()]
    text = "\n".join(lines)
    while "\n\n\n" in text:
        text = text.replace("\n\n\n", "\n\n")
    return (f"# {title}\n\n" if title else "") + text.strip()


def fetch_tool(
    allow_domains: list[str] | None = None,
    *,
    allow_private: bool = False,
    timeout: float = DEFAULT_TIMEOUT,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_chars: int = DEFAULT_MAX_CHARS,
    max_redirects: int = DEFAULT_MAX_REDIRECTS,
) -> Tool:
    """The `fetch` tool. `allow_domains` limits it to those domains and their subdomains;
    `allow_private=True` lets it reach private and loopback addresses (tests, intranets)."""
    check_positive("timeout", timeout)
    check_positive("max_bytes", max_bytes)
    check_positive("max_chars", max_chars)
    domains = normalise_domains(allow_domains)
    options: dict[str, Any] = {
        "allow_domains": domains,
        "allow_private": allow_private,
        "timeout": timeout,
        "max_bytes": max_bytes,
        "max_redirects": max_redirects,
    }

    async def fetch(url: str) -> ToolResult:
        """Fetch a web page (HTTP GET) and return its text, HTML converted to Markdown.

        Args:
            url: The http or https URL to fetch.
        """
        final, kind, text = await fetch_url(url, **options)
        return untrusted(f"URL: {final}\nContent-Type: {kind}\n\n{text}", "fetch", max_chars)

    # Rules match a fetch on its domain (`fetch(domain:example.com)`), taken from `url`.
    return FunctionTool(
        fetch, read_only=True, open_world=True, permissions=[Permission.NETWORK], primary_arg="url"
    )
