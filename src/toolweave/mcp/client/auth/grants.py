"""The MCP authorization extensions beyond the code flow: machine clients and enterprise SSO.

- `PrivateKeyJWTProvider` (the client-credentials extension, SEP-1046, with `private_key_jwt`
  client authentication, RFC 7523 section 2.2): no user and no shared secret; the client proves
  who it is with a short-lived JWT it signs with its own key (`iss` = `sub` = its client id,
  `aud` = the authorization server's issuer).
- `CrossAppAccessProvider` (Enterprise-Managed Authorization, SEP-990): the user already signed
  in to the company identity provider; the client exchanges that ID token at the IdP for an
  identity assertion grant (RFC 8693 token exchange, `requested_token_type` ID-JAG) addressed to
  the MCP server's authorization server, then trades the grant for an access token there
  (RFC 7523 JWT bearer grant, with the client's own credentials).

Both reuse `OAuthClientProvider`'s discovery, resource binding, HTTPS rules and token handling;
only how the token is obtained differs. Signing needs the `cryptography` package (the `oauth`
extra), imported only when a JWT is signed.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlencode

import httpx

from toolweave.mcp.client.auth._discovery import Discovery, require_secure
from toolweave.mcp.client.auth._jws import SIGNING_ALGORITHMS, load_private_key, sign
from toolweave.mcp.client.auth.providers import (
    ClientCredentialsProvider,
    ClientFactory,
    OAuthClientProvider,
    _no_redirect,
)
from toolweave.mcp.shared.errors import OAuthError

JWT_BEARER_ASSERTION = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
JWT_BEARER_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer"
TOKEN_EXCHANGE_GRANT = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id_token"
ID_JAG_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id-jag"
ASSERTION_LIFETIME = 300
"""Seconds a signed client assertion stays valid (RFC 7523 wants it short-lived)."""


def sign_jwt(claims: dict[str, Any], private_key_pem: str, algorithm: str = "ES256") -> str:
    """A compact JWS of `claims` signed with a PEM private key (ES256 or RS256)."""
    if algorithm not in SIGNING_ALGORITHMS:
        raise OAuthError(
            f"signing_algorithm must be one of {SIGNING_ALGORITHMS}, not {algorithm!r}"
        )
    return sign({"typ": "JWT"}, claims, load_private_key(private_key_pem), algorithm)


def _audience(discovery: Discovery) -> str:
    """Who an assertion is for: the authorization server's issuer (else its token endpoint)."""
    return str(discovery.metadata.get("issuer") or discovery.metadata["token_endpoint"])


class PrivateKeyJWTProvider(OAuthClientProvider):
    """Client credentials with a signed JWT instead of a secret (`private_key_jwt`)."""

    def __init__(
        self,
        client_id: str,
        private_key_pem: str,
        *,
        signing_algorithm: str = "ES256",
        scope: str | None = None,
        client_factory: ClientFactory | None = None,
    ) -> None:
        if signing_algorithm not in SIGNING_ALGORITHMS:
            raise OAuthError(
                f"signing_algorithm must be one of {SIGNING_ALGORITHMS}, not {signing_algorithm!r}"
            )
        super().__init__(
            _no_redirect, client_id=client_id, scope=scope, client_factory=client_factory
        )
        assert self.client is not None
        self.client.auth_method = "private_key_jwt"
        self.private_key_pem = private_key_pem
        self.signing_algorithm = signing_algorithm

    async def _authorize(
        self, client: httpx.AsyncClient, discovery: Discovery, scope: str | None
    ) -> None:
        assert self.client is not None
        now = int(time.time())
        claims = {
            "iss": self.client.client_id,
            "sub": self.client.client_id,
            "aud": _audience(discovery),
            "iat": now,
            "exp": now + ASSERTION_LIFETIME,
            "jti": secrets.token_urlsafe(16),
        }
        form = {
            "grant_type": "client_credentials",
            "resource": discovery.resource,
            "client_assertion_type": JWT_BEARER_ASSERTION,
            "client_assertion": sign_jwt(claims, self.private_key_pem, self.signing_algorithm),
        }
        if scope:
            form["scope"] = scope
        await self._token_request(client, discovery, form)


IDToken = str | Callable[[], Awaitable[str]]


class CrossAppAccessProvider(ClientCredentialsProvider):
    """Enterprise-managed authorization: an IdP ID token -> ID-JAG -> an access token.

    `id_token` is the user's ID token from the company IdP (or an async callable returning a
    fresh one); `idp_token_endpoint` is where the IdP exchanges it; `client_id` and
    `client_secret` are this client's credentials at the MCP server's authorization server
    (sent with HTTP Basic on the JWT bearer grant); `idp_client_id` identifies the client at the
    IdP when it wants that.
    """

    def __init__(
        self,
        client_id: str,
        client_secret: str,
        *,
        id_token: IDToken,
        idp_token_endpoint: str,
        idp_client_id: str | None = None,
        scope: str | None = None,
        client_factory: ClientFactory | None = None,
    ) -> None:
        # The client authenticates as a client-credentials one does (HTTP Basic, no redirect);
        # only the grant it presents differs (`_authorize`).
        super().__init__(client_id, client_secret, scope=scope, client_factory=client_factory)
        self.id_token = id_token
        self.idp_token_endpoint = require_secure(idp_token_endpoint, "the IdP token endpoint")
        self.idp_client_id = idp_client_id

    async def _authorize(
        self, client: httpx.AsyncClient, discovery: Discovery, scope: str | None
    ) -> None:
        grant = await self._identity_assertion(client, discovery, scope)
        form = {"grant_type": JWT_BEARER_GRANT, "assertion": grant}
        if scope:
            form["scope"] = scope
        await self._token_request(client, discovery, form)

    async def _identity_assertion(
        self, client: httpx.AsyncClient, discovery: Discovery, scope: str | None
    ) -> str:
        """RFC 8693 token exchange at the IdP: the ID token for an ID-JAG for this server."""
        subject = self.id_token if isinstance(self.id_token, str) else await self.id_token()
        form = {
            "grant_type": TOKEN_EXCHANGE_GRANT,
            "subject_token": subject,
            "subject_token_type": ID_TOKEN_TYPE,
            "requested_token_type": ID_JAG_TOKEN_TYPE,
            "audience": _audience(discovery),
            "resource": discovery.resource,
        }
        if self.idp_client_id:
            form["client_id"] = self.idp_client_id
        if scope:
            form["scope"] = scope
        response = await client.post(
            self.idp_token_endpoint,
            content=urlencode(form),
            headers={"Content-Type": "application/x-www-form-urlencoded"},
        )
        if response.status_code != 200:
            raise OAuthError(
                f"token exchange at the IdP ({self.idp_token_endpoint}) failed: HTTP "
                f"{response.status_code} {response.text[:200]}"
            )
        data = response.json()
        if data.get("issued_token_type") != ID_JAG_TOKEN_TYPE or not data.get("access_token"):
            raise OAuthError(
                "the IdP's token exchange did not return an identity assertion grant "
                f"(issued_token_type {data.get('issued_token_type')!r})"
            )
        return str(data["access_token"])


Assertion = str | Callable[[], Awaitable[str]]


class JWTBearerProvider(OAuthClientProvider):
    """Workload identity federation (SEP-1933): a JWT the platform issued to this workload
    (a Kubernetes service-account token, a cloud identity token) is the grant itself, traded
    at the authorization server for an access token (RFC 7523 section 2.1). No user, no
    secret; `assertion` is the JWT, or an async callable returning a fresh one. A refused
    grant raises `OAuthError` at once: no retry, no other grant type."""

    def __init__(
        self,
        client_id: str,
        assertion: Assertion,
        *,
        scope: str | None = None,
        client_factory: ClientFactory | None = None,
    ) -> None:
        super().__init__(
            _no_redirect, client_id=client_id, scope=scope, client_factory=client_factory
        )
        assert self.client is not None
        self.client.auth_method = "none"
        self.assertion = assertion

    async def _authorize(
        self, client: httpx.AsyncClient, discovery: Discovery, scope: str | None
    ) -> None:
        jwt = self.assertion if isinstance(self.assertion, str) else await self.assertion()
        form = {"grant_type": JWT_BEARER_GRANT, "assertion": jwt, "resource": discovery.resource}
        if scope:
            form["scope"] = scope
        await self._token_request(client, discovery, form)
