"""Argument validators for tool authors: paths inside a root, URLs, identifiers.

Schemas check types; these check meaning. Each returns the normalised value or raises
`ValueError` with a message written for the model (what was wrong and what to send instead), so
a tool can turn it straight into `error_result(str(exc))`.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import urlsplit

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_SLUG = re.compile(r"^[a-z0-9]+(?:[-_][a-z0-9]+)*$")
MAX_PATH_CHARS = 4096


def safe_path(root: str | Path, path: str, *, must_exist: bool = False) -> Path:
    """Resolve `path` against `root` and refuse anything that escapes it.

    Symlinks are resolved first, so a link pointing outside the root is refused too.
    """
    if not path or "\x00" in path or len(path) > MAX_PATH_CHARS:
        raise ValueError(
            f"invalid path {path[:80]!r}: send a non-empty relative path without NUL bytes"
        )
    base = Path(root).resolve()
    target = (base / path).resolve()
    if target != base and base not in target.parents:
        raise ValueError(
            f"path {path!r} is outside the allowed directory; send a path relative to it "
            "without '..' or absolute components"
        )
    if must_exist and not target.exists():
        raise ValueError(f"path {path!r} does not exist")
    return target


def check_url(
    url: str,
    *,
    schemes: Iterable[str] = ("http", "https"),
    allow_private: bool = False,
) -> str:
    """Accept an absolute URL with an allowed scheme and host.

    Unless `allow_private`, literal loopback, private and link-local addresses (and
    `localhost`) are refused, the usual server-side request forgery guard.
    """
    allowed = tuple(schemes)
    parts = urlsplit(url.strip())
    if parts.scheme not in allowed:
        raise ValueError(f"URL {url!r} must start with {' or '.join(s + '://' for s in allowed)}")
    host = parts.hostname
    if not host:
        raise ValueError(f"URL {url!r} has no host; send an absolute URL like https://example.com")
    if not allow_private:
        if host == "localhost" or host.endswith(".localhost"):
            raise ValueError(f"URL {url!r} points at this machine; use a public address")
        address = _literal_address(host)
        if address is not None and (
            address.is_private
            or address.is_loopback
            or address.is_link_local
            or address.is_reserved
            or address.is_multicast
            or address.is_unspecified
        ):
            raise ValueError(f"URL {url!r} points at a private or reserved address")
    return parts.geturl()


def _literal_address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """`host` as an IP address, including the legacy IPv4 spellings HTTP clients still resolve
    (`2130706433`, `0x7f.1`, `127.1`), so they cannot smuggle loopback past the check."""
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    try:
        return ipaddress.IPv4Address(socket.inet_aton(host))
    except OSError:
        return None


def check_identifier(value: str, *, kind: str = "identifier", max_length: int = 64) -> str:
    """Accept a programming-style identifier (letters, digits, `_`; not starting with a digit)."""
    if not value or len(value) > max_length or not _IDENTIFIER.match(value):
        raise ValueError(
            f"{kind} {value[:80]!r} is invalid: use 1-{max_length} letters, digits or '_', "
            "starting with a letter or '_'"
        )
    return value


def check_slug(value: str, *, kind: str = "name", max_length: int = 64) -> str:
    """Accept a lowercase slug such as `my-server` or `notes_2024`."""
    if not value or len(value) > max_length or not _SLUG.match(value):
        raise ValueError(
            f"{kind} {value[:80]!r} is invalid: use lowercase letters and digits separated by "
            f"single '-' or '_' (at most {max_length} characters), e.g. 'my-server'"
        )
    return value
