"""One spelling for a host, before any rule or allow-list compares it.

A domain rule compared with the text of a URL is evaded by every other spelling that reaches
the same machine: upper case, a trailing dot (`internal.example.`), the ideographic and
full-width full stops (U+3002, U+FF0E, U+FF61) that IDNA maps to `.`, Unicode labels (IDNA,
compared as their `xn--` form), and every form of an IP literal that the resolver accepts:
`[::ffff:127.0.0.1]` (an IPv4-mapped IPv6 address), `2130706433` (one 32-bit number), `0x7f000001`
(hexadecimal), `0177.0.0.1` (octal parts) and `127.1` (fewer than four parts), as `inet_aton`
reads them. `canonical_host` gives the one spelling; `url_host` takes it from a URL the way the
HTTP client will connect to it.
"""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import urlsplit

__all__ = ["canonical_host", "url_host"]

_DOTS = str.maketrans({"\u3002": ".", "\uff0e": ".", "\uff61": "."})
_AUTHORITY = re.compile(r"(?:[A-Za-z][A-Za-z0-9+.-]*:)?//([^/?#]*)")
"""The authority of a URL as RFC 3986 (and httpx) delimit it."""
_IPV4_PART_LIMITS = (0xFFFFFFFF, 0xFFFFFF, 0xFFFF, 0xFF)
"""The largest value of the last part of a 1-, 2-, 3- and 4-part inet_aton address."""


def canonical_host(host: str) -> str:
    """`host` lower case, IDNA-encoded, without a trailing dot, an IP literal in its standard
    form (an IPv4-mapped IPv6 address as the IPv4 address it maps)."""
    text = host.strip().translate(_DOTS)
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    text = text.lower().rstrip(".")
    literal = _ip_literal(text)
    if literal is not None:
        return literal
    try:
        return text.encode("idna").decode("ascii")
    except UnicodeError:  # not a valid IDNA name: compared as written, lower case
        return text


def url_host(url: str) -> str:
    """The canonical host of `url` (or of a bare `host[:port][/path]`)."""
    text = url.strip().translate(_DOTS)
    if "//" not in text:
        text = f"//{text}"
    try:
        netloc = urlsplit(text).netloc.rpartition("@")[2]
    except ValueError:  # a user name NFKC turns into `/`, `@`... (`x\u2100@host`): httpx
        found = _AUTHORITY.match(text)  # still connects to host, so read it as httpx does
        netloc = found.group(1).rpartition("@")[2] if found else ""
    if netloc.startswith("["):
        return canonical_host(netloc[: netloc.find("]") + 1])
    return canonical_host(netloc.partition(":")[0])


def _ip_literal(text: str) -> str | None:
    try:
        ip = ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return _inet_aton(text)
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return str(ip.ipv4_mapped)
    return str(ip)


def _inet_aton(text: str) -> str | None:
    """The dotted quad of an IPv4 address in any form inet_aton accepts, or None."""
    parts = text.split(".")
    if not 1 <= len(parts) <= 4:
        return None
    values: list[int] = []
    for part in parts:
        try:
            if part.startswith(("0x", "0X")):
                values.append(int(part[2:] or "0", 16))
            elif len(part) > 1 and part.startswith("0"):
                values.append(int(part, 8))
            else:
                values.append(int(part, 10) if part.isascii() and part.isdigit() else -1)
        except ValueError:
            return None
    if any(v < 0 for v in values) or any(v > 0xFF for v in values[:-1]):
        return None
    if values[-1] > _IPV4_PART_LIMITS[len(values) - 1]:
        return None
    number = values[-1]
    for index, value in enumerate(values[:-1]):
        number |= value << (24 - 8 * index)
    return str(ipaddress.IPv4Address(number))
