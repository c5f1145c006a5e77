"""Checks a Streamable HTTP request must pass before any handler sees it.

Kept apart from the transport so the security-relevant rules read in one place: Origin and Host
validation (DNS-rebinding protection), the bearer token (compared in constant time), and the
2026-07-28 rule that headers mirrored from the body (`MCP-Protocol-Version`, `Mcp-Method`,
`Mcp-Name`) must match it, so a proxy routing on headers and the server agree on the request.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import Response

from toolweave.mcp.server._declared import unsupported_version
from toolweave.mcp.shared.constants import (
    LOOPBACK_HOSTS,
    META_CLIENT_CAPABILITIES,
    META_PROTOCOL_VERSION,
    MODERN_VERSIONS,
    NAME_PARAMS,
)
from toolweave.mcp.shared.errors import (
    HEADER_MISMATCH,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    MISSING_CLIENT_CAPABILITY,
)
from toolweave.mcp.shared.jsonrpc import encode

#: 2026-07-28: the HTTP status of a JSON error answer (an unimplemented method is a 404, which
#: tells a modern server apart; a capability the request did not declare is a 400).
MODERN_ERROR_STATUS = {METHOD_NOT_FOUND: 404, MISSING_CLIENT_CAPABILITY: 400}


def error_response(status: int, code: int, message: str, request_id: Any = None) -> Response:
    body = {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
    return Response(encode(body), status_code=status, media_type="application/json")


def decode_header(value: str) -> str | None:
    """A header value with the `=?base64?...?=` sentinel decoded; None if it is malformed."""
    if value.startswith("=?base64?") and value.endswith("?="):
        try:
            return base64.b64decode(value[9:-2], validate=True).decode("utf-8")
        except ValueError:  # binascii.Error and UnicodeDecodeError are ValueErrors
            return None
    return value


def token_principal(token: str) -> str:
    """The identity of a bearer token's holder: a fingerprint, safe to log and to key on."""
    return "token:" + hashlib.sha256(token.encode()).hexdigest()[:12]


def client_principal(name: str) -> str:
    """The identity of the holder of the `[serve.tokens]` token named `name`."""
    return f"client:{name}"


class AccessGuard:
    """Origin, Host and bearer-token checks; `check` returns the refusal or None.

    `auth_token` is one token for every client (its holder's principal is the token's
    fingerprint); `tokens` maps a client's name to its own token, so each client is its own
    principal (`client:<name>`): its own quota and its own memory. Either kind is accepted."""

    def __init__(
        self,
        allowed_origins: Sequence[str],
        allowed_hosts: Sequence[str] | None,
        auth_token: str | None,
        tokens: Mapping[str, str] | None = None,
    ) -> None:
        self.allowed_origins = set(allowed_origins)
        self.allowed_hosts = None if allowed_hosts is None else {h.lower() for h in allowed_hosts}
        self._tokens = dict(tokens or {})
        accepted = [(f"Bearer {t}".encode(), client_principal(n)) for n, t in self._tokens.items()]
        if auth_token is not None:
            accepted.append((f"Bearer {auth_token}".encode(), token_principal(auth_token)))
        self._accepted = accepted

    def without_token(self) -> AccessGuard:
        """The same Origin and Host checks without the bearer token (for a page a browser opens,
        which cannot send the header)."""
        hosts = None if self.allowed_hosts is None else sorted(self.allowed_hosts)
        return AccessGuard(sorted(self.allowed_origins), hosts, None)

    def principal_of(self, request: Request) -> str | None:
        """Who sent `request` (the principal of the token it carries), or None without tokens.
        Every accepted token is compared, in constant time each, whichever matches."""
        given = request.headers.get("authorization", "").encode()
        found = None
        for expected, principal in self._accepted:
            if hmac.compare_digest(given, expected):
                found = principal
        return found

    def check(self, request: Request) -> Response | None:
        origin = request.headers.get("origin")
        if origin is not None and not self._origin_ok(origin):
            return error_response(
                403, INVALID_PARAMS, f"Forbidden: origin {origin!r} is not allowed"
            )
        if self.allowed_hosts is not None:
            host = (request.headers.get("host") or "").lower()
            name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
            if host not in self.allowed_hosts and name not in self.allowed_hosts:
                message = f"Forbidden: host {host!r} is not allowed"
                return error_response(403, INVALID_PARAMS, message)
        if self._accepted and self.principal_of(request) is None:
            response = error_response(401, INVALID_PARAMS, "Unauthorized: send a bearer token")
            response.headers["WWW-Authenticate"] = "Bearer"
            return response
        return None

    def _origin_ok(self, origin: str) -> bool:
        if "*" in self.allowed_origins or origin in self.allowed_origins:
            return True
        hostname = (urlsplit(origin).hostname or "").lower()
        return hostname in LOOPBACK_HOSTS


def _header(request: Request, name: str) -> str | None:
    """A header's value without the optional whitespace around it (RFC 9110 section 5.5)."""
    value = request.headers.get(name)
    return None if value is None else value.strip(" \t")


def check_modern_request(
    request: Request, request_id: Any, method: str, params: dict[str, Any], meta: dict[str, Any]
) -> Response | None:
    """The 2026-07-28 header/body agreement and required `_meta`; the refusal or None."""
    version = meta.get(META_PROTOCOL_VERSION)
    headers = request.headers
    if _header(request, "mcp-protocol-version") != version:
        return error_response(
            400,
            HEADER_MISMATCH,
            f"Header mismatch: MCP-Protocol-Version {headers.get('mcp-protocol-version')!r} "
            f"must equal _meta protocolVersion {version!r}",
            request_id,
        )
    if version not in MODERN_VERSIONS:
        error = unsupported_version(version)
        body = {"jsonrpc": "2.0", "id": request_id, "error": error.to_dict()}
        return Response(encode(body), status_code=400, media_type="application/json")
    if _header(request, "mcp-method") != method:
        return error_response(
            400,
            HEADER_MISMATCH,
            f"Header mismatch: Mcp-Method {headers.get('mcp-method')!r} must equal {method!r}",
            request_id,
        )
    name_field = NAME_PARAMS.get(method)
    if name_field is not None:
        raw = _header(request, "mcp-name")
        if raw is None or decode_header(raw) != params.get(name_field):
            return error_response(
                400,
                HEADER_MISMATCH,
                f"Header mismatch: Mcp-Name {raw!r} must equal params.{name_field}",
                request_id,
            )
    if not isinstance(meta.get(META_CLIENT_CAPABILITIES), dict):
        return error_response(
            400,
            INVALID_PARAMS,
            f"_meta[{META_CLIENT_CAPABILITIES!r}] is required (an object)",
            request_id,
        )
    return None
