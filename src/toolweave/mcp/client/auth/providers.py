"""OAuth 2.1 for protected Streamable HTTP servers, as the MCP authorization spec lays it out.

`OAuthClientProvider` is an `httpx.Auth`, so it plugs into `MCPClient.http(url, auth=...)` like
any other httpx authentication (and works on a plain `httpx.AsyncClient` too). On a 401 the
provider discovers the protected-resource metadata (the `resource_metadata` URL of the
`WWW-Authenticate` challenge, else the well-known paths), checks that the advertised
resource really is this server (RFC 8707 / RFC 9728), finds the authorization server's metadata
(RFC 8414 and OpenID discovery, falling back to the 2025-03-26 defaults), gets a client id
(pre-registered, a client-ID metadata document URL, or dynamic registration), runs the
authorization-code flow with PKCE S256 and a resource indicator, and keeps the tokens. A 403
`insufficient_scope` asks again with the wider scope (at most `MAX_AUTH_ATTEMPTS`
authorizations per request, so a server that never accepts cannot loop us). The browser step
is a callback (`redirect_handler`) so tests and headless hosts can drive it.

Tokens are bound to the resource they were issued for: `headers(client, url)` returns nothing
for any other server, and a challenge from a different server starts over rather than reusing
the first server's authorization server. Authorization-server endpoints must be HTTPS (loopback
excepted), and the code flow refuses an authorization server whose metadata does not list PKCE
S256, as the MCP authorization spec requires. Discovery (the public documents, and the
decision whom credentials may go to) lives in `_discovery.py`. Requests to the
authorization server (discovery, registration, tokens) go through a client of their own, made
by `client_factory` (default `default_client()`, with `AUTH_HTTP_TIMEOUT`).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import logging
import secrets
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Generator
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, quote, urlencode, urlsplit

import httpx

from toolweave.mcp.client.auth._discovery import (
    Discovery,
    canonical_resource,
    check_iss,
    discover,
    parse_challenge,
    resource_allowed,
)
from toolweave.mcp.client.auth._jws import DPOP_ALGORITHM, DPoPKey
from toolweave.mcp.shared.errors import OAuthError

logger = logging.getLogger("toolweave.mcp.oauth")

RedirectHandler = Callable[[str], Awaitable[str]]
ClientFactory = Callable[[], httpx.AsyncClient]
#: Most authorizations (401/403 challenges answered) for one request, so a server that never
#: accepts a token cannot loop us.
MAX_AUTH_ATTEMPTS = 2
#: Default seconds one request to an authorization server (discovery, registration, tokens)
#: may take; httpx's own default (5 s) failed discovery on a loaded machine.
AUTH_HTTP_TIMEOUT = 30.0


def default_client() -> httpx.AsyncClient:
    """The client for requests to the authorization server (`client_factory`'s default)."""
    return httpx.AsyncClient(timeout=AUTH_HTTP_TIMEOUT)


def pkce_pair() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode()).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


@dataclass(slots=True)
class OAuthTokens:
    access_token: str
    refresh_token: str | None = None
    expires_at: float | None = None
    scope: str | None = None
    #: "Bearer", or "DPoP" for a token bound to this client's proof key (RFC 9449).
    token_type: str = "Bearer"


@dataclass(slots=True)
class OAuthClientInfo:
    client_id: str
    client_secret: str | None = None
    auth_method: str | None = None


class OAuthClientProvider(httpx.Auth):
    """Authentication for `MCPClient.http(url, auth=OAuthClientProvider(...))`, an `httpx.Auth`.

    `redirect_handler(authorization_url)` must return the URL the authorization server
    redirected the browser to (it carries `code` and `state`). `client_id`/`client_secret` are
    pre-registered credentials; `client_metadata_url` enables client-ID metadata documents;
    otherwise the client registers itself dynamically. `client_factory` makes the client for
    requests to the authorization server.
    """

    def __init__(
        self,
        redirect_handler: RedirectHandler,
        *,
        redirect_uri: str = "http://localhost:3000/callback",
        client_name: str = "toolweave",
        client_id: str | None = None,
        client_secret: str | None = None,
        client_metadata_url: str | None = None,
        scope: str | None = None,
        client_factory: ClientFactory | None = None,
    ) -> None:
        self.redirect_handler = redirect_handler
        self.client_factory: ClientFactory = client_factory or default_client
        self.redirect_uri = redirect_uri
        self.client_name = client_name
        self.client_metadata_url = client_metadata_url
        self.scope = scope
        self.client: OAuthClientInfo | None = (
            OAuthClientInfo(client_id, client_secret) if client_id else None
        )
        self.tokens: OAuthTokens | None = None
        self.server_url: str | None = None
        self._lock = asyncio.Lock()
        self._discovery: Discovery | None = None
        self._registered_at: str | None = None  # the issuer a dynamic registration belongs to
        self._dpop: DPoPKey | None = None  # made when the authorization server offers DPoP
        self._nonces: dict[str, str] = {}  # origin -> the last DPoP-Nonce it sent

    # -- httpx.Auth ------------------------------------------------------------------------------

    async def async_auth_flow(
        self, request: httpx.Request
    ) -> AsyncGenerator[httpx.Request, httpx.Response]:
        """Send the bearer token; on a challenge authorize (at most `MAX_AUTH_ATTEMPTS` times)
        and send the request again."""
        url, method = str(request.url), request.method
        nonce_retried = False
        attempt = 0
        while True:
            tokens = self.tokens
            if tokens is not None and _expiring(tokens):
                async with self.client_factory() as client:
                    headers = await self.headers(client, url, method)
            else:
                headers = self._authorization(url, method)
            request.headers.pop("Authorization", None)
            request.headers.pop("DPoP", None)
            request.headers.update(headers)
            response = yield request
            if response.status_code not in (401, 403) or attempt == MAX_AUTH_ATTEMPTS:
                return
            if not nonce_retried and self._take_nonce(response):
                nonce_retried = True  # the resource server wants a fresh proof with its nonce
                continue
            attempt += 1
            async with self.client_factory() as client:
                if not await self.handle_challenge(response, client):
                    return

    def sync_auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response]:
        raise OAuthError("OAuthClientProvider needs an httpx.AsyncClient (OAuth runs async)")

    # -- tokens and challenges ------------------------------------------------------------------

    def _authorization(self, url: str | None, method: str = "POST") -> dict[str, str]:
        """The current token's headers for `url`, without refreshing it: `Bearer`, or `DPoP`
        with a fresh proof of this request (RFC 9449)."""
        tokens = self.tokens
        if tokens is None:
            return {}
        if url is not None and not self._covers(url):
            logger.warning("not sending the access token for %s to %s", self.server_url, url)
            return {}
        if tokens.token_type.lower() != "dpop" or self._dpop is None or url is None:
            return {"Authorization": f"Bearer {tokens.access_token}"}
        proof = self._dpop.proof(
            method, url, nonce=self._nonces.get(_origin(url)), access_token=tokens.access_token
        )
        return {"Authorization": f"DPoP {tokens.access_token}", "DPoP": proof}

    async def headers(
        self, client: httpx.AsyncClient, url: str | None = None, method: str = "POST"
    ) -> dict[str, str]:
        """The `Authorization` (and `DPoP`) headers for a `method` request to `url` (none for
        a server the tokens were not issued for)."""
        tokens = self.tokens
        if tokens is None or not self._authorization(url, method):
            return {}
        if _expiring(tokens):
            async with self._lock:  # one refresh for many concurrent requests (tokens rotate)
                if self.tokens is tokens and not await self._refresh(client):
                    return {}
        return self._authorization(url, method)

    def _take_nonce(self, response: httpx.Response) -> bool:
        """Keep the `DPoP-Nonce` of a `use_dpop_nonce` answer; True when there is one."""
        nonce = response.headers.get("dpop-nonce")
        challenge = response.headers.get("www-authenticate", "")
        body_error = ""
        if response.status_code == 400 and "json" in response.headers.get("content-type", ""):
            body_error = str(response.json().get("error", ""))
        if not nonce or "use_dpop_nonce" not in f"{challenge} {body_error}":
            return False
        self._nonces[_origin(str(response.request.url))] = nonce
        return True

    async def handle_challenge(self, response: httpx.Response, client: httpx.AsyncClient) -> bool:
        """Authorize after a 401 (or a 403 asking for more scope); True means retry now.

        Concurrent challenges are handled one at a time, and a request refused with a token that
        has since been replaced just retries: many calls failing together authorize once."""
        challenge = parse_challenge(response.headers.get("www-authenticate", ""))
        if response.status_code == 403 and challenge.get("error") != "insufficient_scope":
            return False
        sent = response.request.headers.get("authorization", "").partition(" ")[2]
        async with self._lock:
            current, url = self.tokens, str(response.request.url)
            if current is not None and sent != current.access_token and self._covers(url):
                return True
            return await self._answer_challenge(response, client, challenge)

    async def _answer_challenge(
        self, response: httpx.Response, client: httpx.AsyncClient, challenge: dict[str, str]
    ) -> bool:
        self.server_url = str(response.request.url)
        if not self._covers(self.server_url):  # another server: its own authorization from scratch
            self._discovery, self.tokens = None, None
        if self._discovery is None or (response.status_code == 401 and self.tokens is not None):
            await self._rediscover(client, challenge)  # a refused token: has the server moved?
        refreshable = self.tokens is not None and self.tokens.refresh_token is not None
        if response.status_code == 401 and refreshable and await self._refresh(client):
            return True
        discovery = self._discovery
        assert discovery is not None
        scope = challenge.get("scope") or self.scope
        if scope is None and discovery.scopes_supported:
            scope = " ".join(discovery.scopes_supported)
        await self._register(client, discovery)
        await self._authorize(client, discovery, scope)
        return True

    async def _rediscover(self, client: httpx.AsyncClient, challenge: dict[str, str]) -> None:
        """Discover again; when the protected resource now names another authorization server,
        its tokens and a dynamic registration there are dropped (SEP-2352: credentials are
        bound to the server that issued them) and the client registers anew."""
        assert self.server_url is not None
        previous, self._discovery = (
            self._discovery,
            await discover(client, self.server_url, challenge),
        )
        if previous is None or previous.issuer == self._discovery.issuer:
            return
        logger.info(
            "%s moved from authorization server %s to %s; authorizing there",
            self.server_url,
            previous.issuer,
            self._discovery.issuer,
        )
        self.tokens = None
        if self._registered_at is not None:
            self.client, self._registered_at = None, None

    def _covers(self, url: str) -> bool:
        discovery = self._discovery
        return discovery is None or resource_allowed(canonical_resource(url), discovery.resource)

    # -- registration ---------------------------------------------------------------------------

    def _auth_method(self, metadata: dict[str, Any], has_secret: bool) -> str:
        supported = metadata.get("token_endpoint_auth_methods_supported")
        if not isinstance(supported, list):
            return "client_secret_basic" if has_secret else "none"
        for method in ("client_secret_basic", "client_secret_post", "none"):
            if method in supported and (has_secret or method == "none"):
                return method
        return "none"

    async def _register(self, client: httpx.AsyncClient, discovery: Discovery) -> None:
        metadata = discovery.metadata
        if self.client is not None:
            if self.client.auth_method is None:
                has_secret = self.client.client_secret is not None
                self.client.auth_method = self._auth_method(metadata, has_secret)
            return
        if self.client_metadata_url and metadata.get("client_id_metadata_document_supported"):
            self.client = OAuthClientInfo(self.client_metadata_url, None, "none")
            return
        endpoint = metadata.get("registration_endpoint")
        if not isinstance(endpoint, str):
            raise OAuthError(
                "the authorization server offers no dynamic client registration; pass "
                "client_id (and client_secret) of a pre-registered client"
            )
        wanted = self._auth_method(metadata, has_secret=True)
        body = {
            "client_name": self.client_name,
            "redirect_uris": [self.redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": wanted,
            "application_type": _application_type(self.redirect_uri),
        }
        response = await client.post(endpoint, json=body)
        if response.status_code not in (200, 201):
            raise OAuthError(
                f"client registration at {endpoint} failed: HTTP {response.status_code}"
            )
        info = response.json()
        secret = info.get("client_secret")
        method = info.get("token_endpoint_auth_method") or (wanted if secret else "none")
        self.client = OAuthClientInfo(str(info["client_id"]), secret, method)
        self._registered_at = discovery.issuer

    # -- authorization and tokens ---------------------------------------------------------------

    async def _authorize(
        self, client: httpx.AsyncClient, discovery: Discovery, scope: str | None
    ) -> None:
        assert self.client is not None
        methods = discovery.metadata.get("code_challenge_methods_supported")
        if discovery.discovered and not (isinstance(methods, list) and "S256" in methods):
            raise OAuthError(
                "the authorization server's metadata does not list PKCE S256 in "
                "code_challenge_methods_supported; MCP clients must refuse such a server"
            )
        verifier, challenge = pkce_pair()
        state = secrets.token_urlsafe(16)
        query: dict[str, str] = {
            "response_type": "code",
            "client_id": self.client.client_id,
            "redirect_uri": self.redirect_uri,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "state": state,
            "resource": discovery.resource,
        }
        if scope:
            query["scope"] = scope
        endpoint = str(discovery.metadata["authorization_endpoint"])
        separator = "&" if "?" in endpoint else "?"
        redirected = await self.redirect_handler(f"{endpoint}{separator}{urlencode(query)}")
        params = parse_qs(urlsplit(redirected).query)
        if params.get("state", [None])[0] != state:
            raise OAuthError("the authorization response carried the wrong state; aborting")
        check_iss(discovery, params.get("iss", [None])[0])
        if "code" not in params:
            error = params.get("error", ["no code"])[0]
            raise OAuthError(f"authorization was refused: {error}")
        await self._token_request(
            client,
            discovery,
            {
                "grant_type": "authorization_code",
                "code": params["code"][0],
                "redirect_uri": self.redirect_uri,
                "code_verifier": verifier,
                "resource": discovery.resource,
            },
        )

    async def _refresh(self, client: httpx.AsyncClient) -> bool:
        tokens, discovery = self.tokens, self._discovery
        if tokens is None or tokens.refresh_token is None or discovery is None:
            return False
        try:
            await self._token_request(
                client,
                discovery,
                {
                    "grant_type": "refresh_token",
                    "refresh_token": tokens.refresh_token,
                    "resource": discovery.resource,
                },
            )
        except OAuthError as exc:
            logger.info("token refresh failed, authorizing again: %s", exc)
            self.tokens = None
            return False
        return True

    async def _token_request(
        self, client: httpx.AsyncClient, discovery: Discovery, form: dict[str, str]
    ) -> None:
        assert self.client is not None
        info = self.client
        headers = {"Content-Type": "application/x-www-form-urlencoded"}
        if info.auth_method == "client_secret_basic" and info.client_secret is not None:
            pair = f"{quote(info.client_id, safe='')}:{quote(info.client_secret, safe='')}"
            headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
        else:
            form["client_id"] = info.client_id
            if info.auth_method == "client_secret_post" and info.client_secret is not None:
                form["client_secret"] = info.client_secret
        endpoint = str(discovery.metadata["token_endpoint"])
        algorithms = discovery.metadata.get("dpop_signing_alg_values_supported")
        if isinstance(algorithms, list) and DPOP_ALGORITHM in algorithms:
            self._dpop = self._dpop or DPoPKey()  # ask for a token bound to our key
        body = urlencode(form)
        for _attempt in range(2):  # a second time with the server's DPoP nonce
            if self._dpop is not None:
                nonce = self._nonces.get(_origin(endpoint))
                headers["DPoP"] = self._dpop.proof("POST", endpoint, nonce=nonce)
            response = await client.post(endpoint, content=body, headers=headers)
            if response.status_code != 400 or not self._take_nonce(response):
                break
        if response.status_code != 200:
            raise OAuthError(
                f"token request to {endpoint} failed: HTTP {response.status_code} "
                f"{response.text[:200]}"
            )
        data = response.json()
        expires = data.get("expires_in")
        self.tokens = OAuthTokens(
            access_token=str(data["access_token"]),
            refresh_token=data.get("refresh_token")
            or (self.tokens.refresh_token if self.tokens else None),
            expires_at=time.time() + float(expires) if isinstance(expires, int | float) else None,
            scope=data.get("scope"),
            token_type=str(data.get("token_type") or "Bearer"),
        )


class ClientCredentialsProvider(OAuthClientProvider):
    """Machine-to-machine OAuth (the MCP client-credentials extension): no user, no browser;
    the client authenticates with its pre-registered id and secret (HTTP Basic) at the token
    endpoint it discovered, asking for this server as the resource."""

    def __init__(
        self,
        client_id: str,
        client_secret: str,
        *,
        scope: str | None = None,
        client_factory: ClientFactory | None = None,
    ) -> None:
        super().__init__(
            _no_redirect,
            client_id=client_id,
            client_secret=client_secret,
            scope=scope,
            client_factory=client_factory,
        )
        assert self.client is not None
        self.client.auth_method = "client_secret_basic"

    async def _authorize(
        self, client: httpx.AsyncClient, discovery: Discovery, scope: str | None
    ) -> None:
        form = {"grant_type": "client_credentials", "resource": discovery.resource}
        if scope:
            form["scope"] = scope
        await self._token_request(client, discovery, form)


def _application_type(redirect_uri: str) -> str:
    """OIDC `application_type` for dynamic registration (SEP-837): `native` for a loopback or
    private-scheme redirect (a desktop or CLI client), `web` for an HTTPS site."""
    parts = urlsplit(redirect_uri)
    loopback = (parts.hostname or "") in ("localhost", "127.0.0.1", "::1")
    return "web" if parts.scheme == "https" and not loopback else "native"


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


def _expiring(tokens: OAuthTokens) -> bool:
    return tokens.expires_at is not None and tokens.expires_at < time.time() + 30


async def _no_redirect(url: str) -> str:
    raise OAuthError("client-credentials authorization never redirects a user")


def headless_redirect(client_factory: ClientFactory | None = None) -> RedirectHandler:
    """A redirect handler that follows the authorization URL without a browser and returns the
    `Location` it is redirected to: for tests, conformance runs and servers that approve
    automatically."""

    async def follow(url: str) -> str:
        async with client_factory() if client_factory else default_client() as client:
            response = await client.get(url, follow_redirects=False)
        location = response.headers.get("location")
        if not location:
            raise OAuthError(
                f"the authorization endpoint did not redirect (HTTP {response.status_code})"
            )
        return str(location)

    return follow
