"""OAuth discovery for MCP servers: challenges, resource indicators and metadata documents.

Split from `providers.py` (the flows and tokens) because this half only reads public documents and
decides whom credentials may go to: the protected-resource metadata (RFC 9728) must name a
resource that covers the server, the authorization server's metadata (RFC 8414, OpenID) comes
from its well-known paths (else the 2025-03-26 default endpoints), and every endpoint that will
receive a secret must be HTTPS or loopback.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from toolweave.mcp.shared.constants import LATEST_HANDSHAKE, PROTOCOL_VERSION_HEADER
from toolweave.mcp.shared.errors import OAuthError

if TYPE_CHECKING:
    import httpx

logger = logging.getLogger("toolweave.mcp.oauth")

_CHALLENGE_PARAM = re.compile(r'(\w+)=(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))')


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


def require_secure(url: str, what: str) -> str:
    """`url` if it is HTTPS or loopback HTTP; credentials never travel in clear to anyone else."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    loopback = host in ("localhost", "127.0.0.1", "::1") or host.endswith(".localhost")
    if parts.scheme == "https" or (parts.scheme == "http" and loopback):
        return url
    raise OAuthError(f"the {what} {url!r} is not HTTPS; refusing to send credentials to it")


@dataclass(slots=True)
class Discovery:
    """What discovery found: the resource to ask for, the authorization server's metadata."""

    resource: str
    metadata: dict[str, Any] = field(default_factory=dict)
    #: The authorization server's issuer identifier, as recorded (compared exactly with `iss`).
    issuer: str = ""
    scopes_supported: list[str] | None = None
    #: False when the metadata is the 2025-03-26 default endpoints, not a fetched document.
    discovered: bool = True


async def get_json(client: httpx.AsyncClient, url: str) -> dict[str, Any] | None:
    try:
        response = await client.get(url, headers={PROTOCOL_VERSION_HEADER: LATEST_HANDSHAKE})
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


async def discover(
    client: httpx.AsyncClient, server_url: str, challenge: dict[str, str]
) -> Discovery:
    """Where and how to authorize for the MCP endpoint `server_url` after its 401 `challenge`."""
    server = urlsplit(server_url)
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
        prm = await get_json(client, url)
        if prm is not None:
            break
    resource = canonical_resource(server_url)
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
    metadata = await as_metadata(client, str(issuer), check_issuer=prm is not None)
    discovered = metadata is not None
    if metadata is None:
        base = str(issuer).rstrip("/")
        metadata = {
            "authorization_endpoint": f"{base}/authorize",
            "token_endpoint": f"{base}/token",
            "registration_endpoint": f"{base}/register",
        }
    for key in ("authorization_endpoint", "token_endpoint", "registration_endpoint"):
        if isinstance(metadata.get(key), str):
            require_secure(metadata[key], key.replace("_", " "))
    recorded = metadata.get("issuer") if isinstance(metadata.get("issuer"), str) else issuer
    return Discovery(resource, metadata, str(recorded), scopes, discovered)


async def as_metadata(
    client: httpx.AsyncClient, issuer: str, *, check_issuer: bool = True
) -> dict[str, Any] | None:
    """The authorization server's metadata from its well-known paths; with `check_issuer` a
    document naming another `issuer` is refused (RFC 8414 section 3.3: it could send our code to
    an impostor). 2025-03-26 servers without resource metadata only have an origin to start
    from, so their documents are taken as they are."""
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
        metadata = await get_json(client, url)
        if metadata is not None and "token_endpoint" in metadata:
            named = metadata.get("issuer")
            if check_issuer and isinstance(named, str) and named.rstrip("/") != issuer.rstrip("/"):
                raise OAuthError(
                    f"the authorization server metadata at {url} names issuer {named!r}, not "
                    f"{issuer!r}; refusing to use it"
                )
            return metadata
    return None


def check_iss(discovery: Discovery, iss: str | None) -> None:
    """RFC 9207 on an authorization response: a present `iss` must equal the recorded issuer
    exactly (no case folding, port or trailing-slash normalisation), and a server that
    advertises `authorization_response_iss_parameter_supported` must send one (SEP-2468)."""
    if iss is not None and iss != discovery.issuer:
        raise OAuthError(
            f"the authorization response names issuer {iss!r}, not {discovery.issuer!r} (the "
            "server this client asked): a mix-up attack or a misconfigured server; aborting"
        )
    if iss is None and discovery.metadata.get("authorization_response_iss_parameter_supported"):
        raise OAuthError(
            f"the authorization server {discovery.issuer!r} advertises the iss parameter but "
            "its authorization response has none; aborting"
        )
