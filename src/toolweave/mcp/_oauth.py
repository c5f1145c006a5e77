"""OAuth 2.1 for protected Streamable HTTP servers, as the MCP authorization spec lays it out.

On a 401 the provider discovers the protected-resource metadata (the `resource_metadata` URL of
the `WWW-Authenticate` challenge, else the well-known paths), checks that the advertised
resource really is this server (RFC 8707 / RFC 9728), finds the authorization server's metadata
(RFC 8414 and OpenID discovery, falling back to the 2025-03-26 defaults), gets a client id
(pre-registered, a client-ID metadata document URL, or dynamic registration), runs the
authorization-code flow with PKCE S256 and a resource indicator, and keeps the tokens. A 403
`insufficient_scope` asks again with the wider scope (the transport allows two authorizations
per request, so a server that never accepts cannot loop us). The browser step
is a callback (`redirect_handler`) so tests and headless hosts can drive it.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import re
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, quote, urlencode, urlsplit, urlunsplit

from .errors import McpError

if TYPE_CHECKING:
    import httpx

logger = logging.getLogger("toolweave.mcp.oauth")

RedirectHandler = Callable[[str], Awaitable[str]]
_CHALLENGE_PARAM = re.compile(r'(\w+)=(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))')


class OAuthError(McpError):
    """Authorization against a protected MCP server failed; the message says at which step."""


def parse_challenge(header: str) -> dict[str, str]:
    """The parameters of a `WWW-Authenticate: Bearer ...` challenge."""
    return {
        m.group(1): m.group(2) if m.group(2) is not None else m.group(3)
        for m in _CHALLENGE_PARAM.finditer(header)
    }


def canonical_resource(url: str) -> str:
    """The RFC 8707 resource identifier of an MCP endpoint: no fragment, lower-case host."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path, parts.query, ""))


def resource_allowed(requested: str, advertised: str) -> bool:
    """Does the advertised resource cover the server we talk to (same origin, path prefix)?"""
    a, b = urlsplit(requested), urlsplit(advertised)
    if (a.scheme.lower(), a.netloc.lower()) != (b.scheme.lower(), b.netloc.lower()):
        return False
    prefix = b.path.rstrip("/")
    return a.path == b.path or a.path.rstrip("/") == prefix or a.path.startswith(prefix + "/")


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


@dataclass(slots=True)
class OAuthClientInfo:
    client_id: str
    client_secret: str | None = None
    auth_method: str | None = None


@dataclass(slots=True)
class _Discovery:
    resource: str
    metadata: dict[str, Any] = field(default_factory=dict)
    scopes_supported: list[str] | None = None


class OAuthClientProvider:
    """Authentication for `McpClient.http(url, auth=OAuthClientProvider(...))`.

    `redirect_handler(authorization_url)` must return the URL the authorization server
    redirected the browser to (it carries `code` and `state`). `client_id`/`client_secret` are
    pre-registered credentials; `client_metadata_url` enables client-ID metadata documents;
    otherwise the client registers itself dynamically.
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
    ) -> None:
        self.redirect_handler = redirect_handler
        self.redirect_uri = redirect_uri
        self.client_name = client_name
        self.client_metadata_url = client_metadata_url
        self.scope = scope
        self.client: OAuthClientInfo | None = (
            OAuthClientInfo(client_id, client_secret) if client_id else None
        )
        self.tokens: OAuthTokens | None = None
        self.server_url: str | None = None
        self._discovery: _Discovery | None = None

    # -- what the transport calls ---------------------------------------------------------------

    async def headers(self, client: httpx.AsyncClient) -> dict[str, str]:
        tokens = self.tokens
        if tokens is None:
            return {}
        if tokens.expires_at is not None and tokens.expires_at < time.time() + 30:
            if not await self._refresh(client):
                return {}
            tokens = self.tokens
            assert tokens is not None
        return {"Authorization": f"Bearer {tokens.access_token}"}

    async def handle_challenge(self, response: httpx.Response, client: httpx.AsyncClient) -> bool:
        """Authorize after a 401 (or a 403 asking for more scope); True means retry now."""
        self.server_url = str(response.request.url)
        challenge = parse_challenge(response.headers.get("www-authenticate", ""))
        if response.status_code == 403 and challenge.get("error") != "insufficient_scope":
            return False
        refreshable = self.tokens is not None and self.tokens.refresh_token is not None
        if response.status_code == 401 and refreshable and await self._refresh(client):
            return True
        discovery = await self._discover(client, challenge)
        scope = challenge.get("scope") or self.scope
        if scope is None and discovery.scopes_supported:
            scope = " ".join(discovery.scopes_supported)
        await self._register(client, discovery)
        await self._authorize(client, discovery, scope)
        return True

    # -- discovery ------------------------------------------------------------------------------

    async def _get_json(self, client: httpx.AsyncClient, url: str) -> dict[str, Any] | None:
        try:
            response = await client.get(url, headers={"MCP-Protocol-Version": "2025-11-25"})
        except Exception as exc:
            logger.debug("GET %s failed: %r", url, exc)
            return None
        if response.status_code != 200:
            return None
        try:
            data = response.json()
        except ValueError:
            return None
        return data if isinstance(data, dict) else None

    async def _discover(self, client: httpx.AsyncClient, challenge: dict[str, str]) -> _Discovery:
        if self._discovery is not None:
            return self._discovery
        assert self.server_url is not None
        server = urlsplit(self.server_url)
        origin = f"{server.scheme}://{server.netloc}"
        candidates = []
        if challenge.get("resource_metadata"):
            candidates.append(challenge["resource_metadata"])
        path = server.path.rstrip("/")
        if path:
            candidates.append(f"{origin}/.well-known/oauth-protected-resource{path}")
        candidates.append(f"{origin}/.well-known/oauth-protected-resource")
        prm: dict[str, Any] | None = None
        for url in candidates:
            prm = await self._get_json(client, url)
            if prm is not None:
                break
        resource = canonical_resource(self.server_url)
        scopes: list[str] | None = None
        if prm is not None:
            advertised = prm.get("resource")
            if isinstance(advertised, str):
                if not resource_allowed(resource, advertised):
                    raise OAuthError(
                        f"the protected-resource metadata names resource {advertised!r}, which "
                        f"does not cover {resource!r}; refusing to send credentials for it"
                    )
                resource = advertised
            servers = prm.get("authorization_servers")
            issuer = servers[0] if isinstance(servers, list) and servers else origin
            supported = prm.get("scopes_supported")
            scopes = [str(s) for s in supported] if isinstance(supported, list) else None
        else:
            issuer = origin  # 2025-03-26: the MCP server's origin is the authorization server
        metadata = await self._as_metadata(client, str(issuer))
        if metadata is None:
            base = str(issuer).rstrip("/")
            metadata = {
                "authorization_endpoint": f"{base}/authorize",
                "token_endpoint": f"{base}/token",
                "registration_endpoint": f"{base}/register",
            }
        self._discovery = _Discovery(resource, metadata, scopes)
        return self._discovery

    async def _as_metadata(self, client: httpx.AsyncClient, issuer: str) -> dict[str, Any] | None:
        parts = urlsplit(issuer)
        origin = f"{parts.scheme}://{parts.netloc}"
        path = parts.path.rstrip("/")
        if path:
            urls = [
                f"{origin}/.well-known/oauth-authorization-server{path}",
                f"{origin}/.well-known/openid-configuration{path}",
                f"{origin}{path}/.well-known/openid-configuration",
            ]
        else:
            urls = [
                f"{origin}/.well-known/oauth-authorization-server",
                f"{origin}/.well-known/openid-configuration",
            ]
        for url in urls:
            metadata = await self._get_json(client, url)
            if metadata is not None and "token_endpoint" in metadata:
                return metadata
        return None

    # -- registration ---------------------------------------------------------------------------

    def _auth_method(self, metadata: dict[str, Any], has_secret: bool) -> str:
        supported = metadata.get("token_endpoint_auth_methods_supported")
        if not isinstance(supported, list):
            return "client_secret_basic" if has_secret else "none"
        for method in ("client_secret_basic", "client_secret_post", "none"):
            if method in supported and (has_secret or method == "none"):
                return method
        return "none"

    async def _register(self, client: httpx.AsyncClient, discovery: _Discovery) -> None:
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

    # -- authorization and tokens ---------------------------------------------------------------

    async def _authorize(
        self, client: httpx.AsyncClient, discovery: _Discovery, scope: str | None
    ) -> None:
        assert self.client is not None
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
        self, client: httpx.AsyncClient, discovery: _Discovery, form: dict[str, str]
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
        response = await client.post(endpoint, content=urlencode(form), headers=headers)
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
        )


class ClientCredentialsProvider(OAuthClientProvider):
    """Machine-to-machine OAuth (the MCP client-credentials extension): no user, no browser;
    the client authenticates with its pre-registered id and secret (HTTP Basic) at the token
    endpoint it discovered, asking for this server as the resource."""

    def __init__(self, client_id: str, client_secret: str, *, scope: str | None = None) -> None:
        super().__init__(
            _no_redirect, client_id=client_id, client_secret=client_secret, scope=scope
        )
        assert self.client is not None
        self.client.auth_method = "client_secret_basic"

    async def _authorize(
        self, client: httpx.AsyncClient, discovery: _Discovery, scope: str | None
    ) -> None:
        form = {"grant_type": "client_credentials", "resource": discovery.resource}
        if scope:
            form["scope"] = scope
        await self._token_request(client, discovery, form)


async def _no_redirect(url: str) -> str:
    raise OAuthError("client-credentials authorization never redirects a user")


def headless_redirect(
    client_factory: Callable[[], httpx.AsyncClient] | None = None,
) -> RedirectHandler:
    """A redirect handler that follows the authorization URL without a browser and returns the
    `Location` it is redirected to: for tests, conformance runs and servers that approve
    automatically."""

    async def follow(url: str) -> str:
        import httpx

        async with client_factory() if client_factory else httpx.AsyncClient() as client:
            response = await client.get(url, follow_redirects=False)
        location = response.headers.get("location")
        if not location:
            raise OAuthError(
                f"the authorization endpoint did not redirect (HTTP {response.status_code})"
            )
        return str(location)

    return follow
