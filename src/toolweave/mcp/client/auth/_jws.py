"""Compact JWS signing for the OAuth client: client assertions (RFC 7523) and DPoP proofs
(RFC 9449), ES256 and RS256 over the `cryptography` package (the `oauth` extra), imported only
when something is signed.

`DPoPKey` is one proof-of-possession key pair: an ephemeral P-256 key made per provider, whose
public half travels in every proof's header (`jwk`) and whose thumbprint the authorization
server binds the access token to (`cnf.jkt`). A proof names the request it is for (`htm`,
`htu` without query or fragment), is fresh each time (`jti`, `iat`), carries the server's
nonce when it asked for one and, on a resource request, the access token's hash (`ath`).
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import time
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from toolweave.mcp.shared.errors import OAuthError

SIGNING_ALGORITHMS = ("ES256", "RS256")
#: The one DPoP proof algorithm this client signs with (every DPoP server must accept one
#: it lists in `dpop_signing_alg_values_supported`; ES256 is the common one).
DPOP_ALGORITHM = "ES256"


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _crypto() -> Any:
    try:
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa, utils
    except ModuleNotFoundError:
        raise OAuthError(
            "signing a JWT (a client assertion or a DPoP proof) needs the cryptography "
            "package: pip install 'toolweave[oauth]'"
        ) from None
    return hashes, serialization, ec, padding, rsa, utils


def sign(header: dict[str, Any], claims: dict[str, Any], key: Any, algorithm: str) -> str:
    """A compact JWS of `claims` with `header` (its `alg` set here), signed by `key`."""
    hashes, _serialization, ec, padding, rsa, utils = _crypto()
    signing_input = ".".join(
        b64url(json.dumps(part, separators=(",", ":")).encode())
        for part in ({**header, "alg": algorithm}, claims)
    ).encode()
    if algorithm == "ES256":
        if not isinstance(key, ec.EllipticCurvePrivateKey):
            raise OAuthError("ES256 needs an EC (P-256) private key")
        r, s = utils.decode_dss_signature(key.sign(signing_input, ec.ECDSA(hashes.SHA256())))
        signature = r.to_bytes(32, "big") + s.to_bytes(32, "big")
    elif algorithm == "RS256":
        if not isinstance(key, rsa.RSAPrivateKey):
            raise OAuthError("RS256 needs an RSA private key")
        signature = key.sign(signing_input, padding.PKCS1v15(), hashes.SHA256())
    else:
        raise OAuthError(
            f"signing_algorithm must be one of {SIGNING_ALGORITHMS}, not {algorithm!r}"
        )
    return f"{signing_input.decode()}.{b64url(signature)}"


def load_private_key(pem: str) -> Any:
    _hashes, serialization, *_rest = _crypto()
    return serialization.load_pem_private_key(pem.encode(), password=None)


class DPoPKey:
    """An ephemeral P-256 key that signs DPoP proofs."""

    def __init__(self) -> None:
        _hashes, _serialization, ec, *_rest = _crypto()
        self._key = ec.generate_private_key(ec.SECP256R1())
        numbers = self._key.public_key().public_numbers()
        self.jwk = {
            "crv": "P-256",
            "kty": "EC",
            "x": b64url(numbers.x.to_bytes(32, "big")),
            "y": b64url(numbers.y.to_bytes(32, "big")),
        }

    def proof(
        self, method: str, url: str, *, nonce: str | None = None, access_token: str | None = None
    ) -> str:
        """A fresh proof for one request (`ath` when presenting `access_token`)."""
        parts = urlsplit(url)
        claims: dict[str, Any] = {
            "jti": secrets.token_urlsafe(16),
            "htm": method.upper(),
            "htu": urlunsplit((parts.scheme, parts.netloc, parts.path, "", "")),
            "iat": int(time.time()),
        }
        if nonce is not None:
            claims["nonce"] = nonce
        if access_token is not None:
            claims["ath"] = b64url(hashlib.sha256(access_token.encode("ascii")).digest())
        return sign({"typ": "dpop+jwt", "jwk": self.jwk}, claims, self._key, DPOP_ALGORITHM)
