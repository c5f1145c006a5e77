"""The OAuth provider against a small real authorization server (a Starlette app over httpx's
ASGI transport): the full code flow, then a token refresh, then a refused refresh. The official
conformance suite covers discovery variants, scopes and client authentication methods."""

from __future__ import annotations

import asyncio
import time
from typing import Any
from urllib.parse import parse_qs

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from toolweave.mcp import OAuthClientProvider, OAuthError, headless_redirect
from toolweave.mcp.client.auth._discovery import (
    canonical_resource,
    parse_challenge,
    resource_allowed,
)

BASE = "http://localhost:8123"  # loopback: plain HTTP is allowed only there


def authorization_server(
    log: list[dict[str, Any]],
    *,
    as_base: str = BASE,
    issuer: str = f"{BASE}/as",
    pkce: bool = True,
    state_suffix: str = "",
) -> Starlette:
    async def mcp(request: Request) -> Response:
        if request.headers.get("authorization", "").startswith("Bearer "):
            return JSONResponse({"ok": True})
        challenge = f'Bearer resource_metadata="{BASE}/prm", scope="files:read"'
        return Response(status_code=401, headers={"WWW-Authenticate": challenge})

    async def prm(request: Request) -> Response:
        return JSONResponse({"resource": f"{BASE}/mcp", "authorization_servers": [f"{BASE}/as"]})

    async def metadata(request: Request) -> Response:
        return JSONResponse(
            {
                "issuer": issuer,
                "authorization_endpoint": f"{as_base}/as/authorize",
                "token_endpoint": f"{as_base}/as/token",
                "registration_endpoint": f"{as_base}/as/register",
                "token_endpoint_auth_methods_supported": ["client_secret_post"],
                **({"code_challenge_methods_supported": ["S256"]} if pkce else {}),
            }
        )

    async def register(request: Request) -> Response:
        log.append({"register": await request.json()})
        return JSONResponse({"client_id": "c1", "client_secret": "s1"}, status_code=201)

    async def authorize(request: Request) -> Response:
        log.append({"authorize": dict(request.query_params)})
        q = request.query_params
        state = q["state"] + state_suffix
        return RedirectResponse(f"{q['redirect_uri']}?code=k1&state={state}", 302)

    async def token(request: Request) -> Response:
        form = {k: v[0] for k, v in parse_qs((await request.body()).decode()).items()}
        log.append({"token": form})
        if form["grant_type"] == "refresh_token" and form["refresh_token"] == "r1":
            return JSONResponse({"access_token": "a2", "token_type": "Bearer", "expires_in": 60})
        if form["grant_type"] == "authorization_code" and form["code"] == "k1":
            return JSONResponse(
                {
                    "access_token": "a1",
                    "refresh_token": "r1",
                    "token_type": "Bearer",
                    "expires_in": 60,
                }
            )
        return JSONResponse({"error": "invalid_grant"}, status_code=400)

    return Starlette(
        routes=[
            Route("/mcp", mcp, methods=["POST"]),
            Route("/prm", prm),
            Route("/.well-known/oauth-authorization-server/as", metadata),
            Route("/as/register", register, methods=["POST"]),
            Route("/as/authorize", authorize),
            Route("/as/token", token, methods=["POST"]),
        ]
    )


async def test_code_flow_then_refresh() -> None:
    log: list[dict[str, Any]] = []
    transport = httpx.ASGITransport(app=authorization_server(log))

    def make_client() -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=transport)

    provider = OAuthClientProvider(headless_redirect(make_client), client_name="tw-test")
    async with make_client() as client:
        refused = await client.post(f"{BASE}/mcp")
        assert refused.status_code == 401
        assert await provider.handle_challenge(refused, client)
        headers = await provider.headers(client)
        assert headers == {"Authorization": "Bearer a1"}
        assert (await client.post(f"{BASE}/mcp", headers=headers)).json() == {"ok": True}

        asked = log[1]["authorize"]
        assert asked["code_challenge_method"] == "S256" and asked["client_id"] == "c1"
        assert asked["resource"] == f"{BASE}/mcp" and asked["scope"] == "files:read"
        exchange = log[2]["token"]
        assert exchange["client_secret"] == "s1" and exchange["code_verifier"]
        assert log[0]["register"]["token_endpoint_auth_method"] == "client_secret_post"

        assert provider.tokens is not None
        provider.tokens.expires_at = time.time() - 1  # expired: the next request refreshes
        assert await provider.headers(client) == {"Authorization": "Bearer a2"}
        assert log[-1]["token"]["grant_type"] == "refresh_token"
        assert log[-1]["token"]["resource"] == f"{BASE}/mcp"

        # The token is bound to this server: another origin never sees it.
        assert await provider.headers(client, "http://localhost:9999/mcp") == {}
        assert await provider.headers(client, f"{BASE}/mcp") == {"Authorization": "Bearer a2"}

        provider.tokens.refresh_token = "revoked"
        provider.tokens.expires_at = time.time() - 1
        assert await provider.headers(client) == {}  # refresh refused: authorize again
        assert provider.tokens is None


def test_challenge_and_resource_helpers() -> None:
    parsed = parse_challenge('Bearer error="insufficient_scope", scope="a b", realm=x')
    assert parsed == {"error": "insufficient_scope", "scope": "a b", "realm": "x"}
    assert canonical_resource("HTTP://Example.COM:8080/mcp#frag") == "http://example.com:8080/mcp"
    assert resource_allowed("http://h/mcp", "http://h/")
    assert resource_allowed("http://h/mcp/x", "http://h/mcp")
    assert not resource_allowed("http://h/mcp", "https://evil.example.com/mcp")
    assert not resource_allowed("http://h/mcpx", "http://h/mcp")


async def test_forbidden_without_insufficient_scope_is_not_retried() -> None:
    provider = OAuthClientProvider(headless_redirect())
    request = httpx.Request("POST", f"{BASE}/mcp")
    response = httpx.Response(403, request=request, headers={"WWW-Authenticate": "Bearer"})
    async with httpx.AsyncClient() as client:
        assert not await provider.handle_challenge(response, client)


@pytest.mark.parametrize(
    ("options", "error"),
    [
        ({"state_suffix": "x"}, "wrong state"),
        ({"pkce": False}, "does not list PKCE S256"),
        ({"as_base": "http://auth.example.com"}, "is not HTTPS"),
        ({"issuer": "https://impostor.example.com/as"}, "names issuer"),
    ],
)
async def test_unsafe_authorization_is_refused(options: dict[str, Any], error: str) -> None:
    log: list[dict[str, Any]] = []
    transport = httpx.ASGITransport(app=authorization_server(log, **options))

    def make_client() -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=transport)

    provider = OAuthClientProvider(headless_redirect(make_client), client_id="c1")
    async with make_client() as client:
        refused = await client.post(f"{BASE}/mcp")
        with pytest.raises(OAuthError, match=error):
            await provider.handle_challenge(refused, client)
    assert provider.tokens is None
    assert not any("token" in entry for entry in log)  # no code was ever exchanged


async def test_concurrent_challenges_authorize_once() -> None:
    log: list[dict[str, Any]] = []
    transport = httpx.ASGITransport(app=authorization_server(log))

    def make_client() -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=transport)

    provider = OAuthClientProvider(headless_redirect(make_client), client_id="c1")
    async with make_client() as client:
        refused = [await client.post(f"{BASE}/mcp") for _ in range(5)]
        retry = await asyncio.gather(*(provider.handle_challenge(r, client) for r in refused))
        assert retry == [True] * 5
        assert await provider.headers(client, f"{BASE}/mcp") == {"Authorization": "Bearer a1"}
        assert provider.tokens is not None
        provider.tokens.expires_at = time.time() - 1  # expired: concurrent requests refresh once
        headers = await asyncio.gather(*(provider.headers(client) for _ in range(5)))
        assert headers == [{"Authorization": "Bearer a2"}] * 5
    assert sum("authorize" in entry for entry in log) == 1
    assert sum(entry.get("token", {}).get("grant_type") == "refresh_token" for entry in log) == 1


async def test_the_provider_is_an_httpx_auth() -> None:
    log: list[dict[str, Any]] = []
    transport = httpx.ASGITransport(app=authorization_server(log))

    def make_client() -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=transport)

    provider = OAuthClientProvider(headless_redirect(make_client), client_factory=make_client)
    assert isinstance(provider, httpx.Auth)
    async with httpx.AsyncClient(transport=transport, auth=provider) as client:
        answered = await client.post(f"{BASE}/mcp", json={"城市": "北京"})
        assert answered.status_code == 200 and answered.json() == {"ok": True}
        assert answered.request.headers["authorization"] == "Bearer a1"
        assert [r.status_code for r in answered.history] == [401]
        assert provider.tokens is not None
        provider.tokens.expires_at = time.time() - 1  # the flow refreshes an expiring token
        again = await client.post(f"{BASE}/mcp")
        assert again.request.headers["authorization"] == "Bearer a2" and not again.history
    assert sum("authorize" in entry for entry in log) == 1


def test_the_provider_refuses_a_sync_client() -> None:
    provider = OAuthClientProvider(headless_redirect())
    transport = httpx.MockTransport(lambda request: httpx.Response(200))
    # Fail closed: a sync client gets an error, never an anonymous request.
    with (
        httpx.Client(transport=transport, auth=provider) as client,
        pytest.raises(OAuthError, match=r"needs an httpx\.AsyncClient"),
    ):
        client.get(f"{BASE}/mcp")
