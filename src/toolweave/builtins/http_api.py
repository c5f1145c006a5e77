"""Configurable API tools: any "search something, get a list back" HTTP API as a tool.

`http_api_tool` turns such an API into a tool from configuration alone: a URL template with
`${msg}` (the query), `${num}` (how many) and `${key}` (the API key, configured apart and never
shown) placeholders, and two JSON paths, one to the result list and one to the field of each
item. Switching providers is a configuration change. A template that needs `${key}` with no key
configured answers with an instruction, not the upstream's bare 401. `web_search_tool` does the
same for Tavily- and Jina-style search APIs.
"""

from __future__ import annotations

import asyncio
import json
import urllib.parse
from typing import Any, Literal

import httpx

from toolweave.builtins._output import MAX_ERROR_BODY_CHARS, check_positive, untrusted
from toolweave.builtins.http_body import ACCEPT_ENCODING, read_capped
from toolweave.errors import ConfigError
from toolweave.tools.base import Tool
from toolweave.tools.errors import ExecutionFailed, InvalidArguments, ToolTimeout
from toolweave.tools.function_tool import tool
from toolweave.tools.permissions import Permission
from toolweave.tools.result import ToolResult
from toolweave.tools.shaping import wrap_untrusted

DEFAULT_TIMEOUT = 10.0
"""Seconds one API call may take, from connecting to the last byte (one deadline, not one per
read: a server dripping a byte a second cannot stretch it)."""
DEFAULT_MAX_ITEMS = 10
"""Items the model may ask for (`num`) and results returned at most."""
DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024
"""Bytes of an API response read at most, counted after gzip or deflate decoding."""
_PLACEHOLDERS = ("${msg}", "${num}", "${key}")

SearchProvider = Literal["tavily", "jina"]
_SEARCH_URLS: dict[str, str] = {"tavily": "https://api.tavily.com", "jina": "https://s.jina.ai"}


def json_path(value: Any, path: str) -> Any:
    """Walk `path` ('data', 'images.fixed_width.url', 'items.0.link') through dicts and lists;
    None when a step is missing. An empty path is the value itself."""
    for step in path.split(".") if path else ():
        if isinstance(value, dict):
            value = value.get(step)
        elif isinstance(value, list) and step.isdigit() and int(step) < len(value):
            value = value[int(step)]
        else:
            return None
    return value


def _missing_key(tool_name: str, setting: str) -> ToolResult:
    return ToolResult.error(
        f"The {tool_name} tool needs an API key and none is configured. Ask the operator to "
        f"set {setting}; until then this tool cannot answer, so do not retry it."
    )


async def _get_json(request: httpx.Request, timeout: float, tool_name: str) -> Any:
    """The JSON body of `request`'s answer, read up to `DEFAULT_MAX_RESPONSE_BYTES` decoded
    bytes within one `timeout` for the whole call."""
    request.headers["Accept-Encoding"] = ACCEPT_ENCODING
    try:
        async with (
            asyncio.timeout(timeout),
            httpx.AsyncClient(timeout=timeout, trust_env=False) as client,
        ):
            response = await client.send(request, stream=True)
            try:
                body, cut = await read_capped(response, DEFAULT_MAX_RESPONSE_BYTES, tool_name)
            finally:
                await response.aclose()
    except TimeoutError:
        raise ToolTimeout(
            f"{tool_name}: the API did not answer in full within {timeout:g} s (timeout)",
            tool=tool_name,
            timeout=timeout,
        ) from None
    except httpx.HTTPError as exc:
        raise ExecutionFailed(f"{tool_name}: request failed: {exc}", tool=tool_name) from exc
    if cut:
        raise ExecutionFailed(
            f"{tool_name}: the API answered more than {DEFAULT_MAX_RESPONSE_BYTES} bytes",
            tool=tool_name,
        )
    if response.status_code >= 400:
        answer = body[:MAX_ERROR_BODY_CHARS].decode("utf-8", "replace")
        raise ExecutionFailed(  # the server wrote the body: data, wrapped as results are
            f"{tool_name}: the API answered HTTP {response.status_code}; its body:\n"
            f"{wrap_untrusted(answer, tool_name)}",
            tool=tool_name,
        )
    try:
        return json.loads(body)
    except ValueError as exc:
        raise ExecutionFailed(f"{tool_name}: the API did not answer JSON", tool=tool_name) from exc


def http_api_tool(
    name: str,
    description: str,
    url_template: str,
    list_path: str,
    item_field: str,
    api_key: str | None = None,
    *,
    key_setting: str = "api_key",
    timeout: float = DEFAULT_TIMEOUT,
    max_items: int = DEFAULT_MAX_ITEMS,
) -> Tool:
    """A tool `name(msg, num)` that GETs `url_template` with the placeholders filled (URL-
    encoded) and returns `item_field` of each element of the list at `list_path`.
    `key_setting` names where the operator configures the key, for the missing-key message."""
    check_positive("timeout", timeout)
    check_positive("max_items", max_items)
    if "${msg}" not in url_template:
        raise ConfigError(f"url_template of {name!r} must contain ${{msg}} (the query)")
    if not url_template.startswith(("http://", "https://")):
        raise ConfigError(f"url_template of {name!r} must be an http(s) URL")

    @tool(name=name, description=description, read_only=True, permissions=[Permission.NETWORK])
    async def call_api(msg: str, num: int = 1) -> ToolResult:
        """
        Args:
            msg: What to search for.
            num: How many results to return.
        """
        if "${key}" in url_template and not api_key:
            return _missing_key(name, key_setting)
        if not 1 <= num <= max_items:
            raise InvalidArguments(f"num must be 1-{max_items}, got {num}", tool=name)
        values = {"${msg}": msg, "${num}": str(num), "${key}": api_key or ""}
        url = url_template
        for placeholder in _PLACEHOLDERS:
            url = url.replace(placeholder, urllib.parse.quote(values[placeholder], safe=""))
        data = await _get_json(httpx.Request("GET", url), timeout, name)
        items = json_path(data, list_path)
        if not isinstance(items, list):
            raise ExecutionFailed(
                f"{name}: the answer has no list at {list_path!r} (list_path)", tool=name
            )
        found = [json_path(item, item_field) for item in items]
        results = [str(v) for v in found if v is not None][:num]
        return untrusted("\n".join(results) or "no results", name)

    return call_api


def web_search_tool(
    provider: SearchProvider = "tavily",
    api_key: str | None = None,
    *,
    base_url: str | None = None,
    key_setting: str = "api_key",
    timeout: float = DEFAULT_TIMEOUT,
    max_results: int = DEFAULT_MAX_ITEMS,
) -> Tool:
    """`web_search(query, max_results)` through a Tavily- or Jina-style search API (`base_url`
    points it at a compatible endpoint)."""
    if provider not in _SEARCH_URLS:
        raise ConfigError(f"provider must be one of {sorted(_SEARCH_URLS)}, not {provider!r}")
    check_positive("timeout", timeout)
    check_positive("max_results", max_results)
    root = (base_url or _SEARCH_URLS[provider]).rstrip("/")

    @tool(read_only=True, permissions=[Permission.NETWORK])
    async def web_search(query: str, count: int = 5) -> ToolResult:
        """Search the web; returns title, URL and a snippet per result.

        Args:
            query: The search query, in any language.
            count: How many results to return.
        """
        if not api_key:
            return _missing_key("web_search", key_setting)
        if not 1 <= count <= max_results:
            raise InvalidArguments(f"count must be 1-{max_results}, got {count}", tool="web_search")
        auth = {"Authorization": f"Bearer {api_key}", "Accept": "application/json"}
        if provider == "tavily":
            request = httpx.Request(
                "POST", f"{root}/search", json={"query": query, "max_results": count}, headers=auth
            )
            items = json_path(await _get_json(request, timeout, "web_search"), "results")
        else:
            request = httpx.Request("GET", f"{root}/", params={"q": query}, headers=auth)
            items = json_path(await _get_json(request, timeout, "web_search"), "data")
        if not isinstance(items, list):
            raise ExecutionFailed(
                "web_search: the provider's answer has no result list", tool="web_search"
            )
        blocks = [
            f"{item.get('title', '')}\n{item.get('url', '')}\n"
            f"{item.get('content') or item.get('description') or ''}".strip()
            for item in items[:count]
            if isinstance(item, dict)
        ]
        return untrusted("\n\n".join(blocks) or "no results", "web_search")

    return web_search
