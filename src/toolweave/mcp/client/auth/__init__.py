"""Authorization for protected MCP servers: OAuth 2.1 providers that are `httpx.Auth` classes.

`OAuthClientProvider` (authorization code + PKCE), `ClientCredentialsProvider`,
`PrivateKeyJWTProvider` (client credentials with a signed assertion, the `oauth` extra) and
`CrossAppAccessProvider` (an enterprise ID token exchanged for an ID-JAG) and
`JWTBearerProvider` (a workload's own JWT as the grant). Discovery of the
protected resource and its authorization server is shared, in `_discovery`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolweave._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "ClientCredentialsProvider": "toolweave.mcp.client.auth.providers",
    "OAuthClientInfo": "toolweave.mcp.client.auth.providers",
    "OAuthClientProvider": "toolweave.mcp.client.auth.providers",
    "OAuthTokens": "toolweave.mcp.client.auth.providers",
    "headless_redirect": "toolweave.mcp.client.auth.providers",
    "pkce_pair": "toolweave.mcp.client.auth.providers",
    "CrossAppAccessProvider": "toolweave.mcp.client.auth.grants",
    "JWTBearerProvider": "toolweave.mcp.client.auth.grants",
    "PrivateKeyJWTProvider": "toolweave.mcp.client.auth.grants",
    "sign_jwt": "toolweave.mcp.client.auth.grants",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:
    from toolweave.mcp.client.auth.grants import (
        CrossAppAccessProvider,
        JWTBearerProvider,
        PrivateKeyJWTProvider,
        sign_jwt,
    )
    from toolweave.mcp.client.auth.providers import (
        ClientCredentialsProvider,
        OAuthClientInfo,
        OAuthClientProvider,
        OAuthTokens,
        headless_redirect,
        pkce_pair,
    )

__all__ = [
    "ClientCredentialsProvider",
    "CrossAppAccessProvider",
    "JWTBearerProvider",
    "OAuthClientInfo",
    "OAuthClientProvider",
    "OAuthTokens",
    "PrivateKeyJWTProvider",
    "headless_redirect",
    "pkce_pair",
    "sign_jwt",
]
