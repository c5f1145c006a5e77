"""Where an outbound request may go: public addresses only (unless opted out), listed domains.

A model steered by a web page must not reach the cloud metadata endpoint (169.254.169.254), a
router's admin page or a database on localhost. So the host is resolved once, every address
it resolves to must be public, and the request is then sent to that checked address (with the
original Host header and TLS server name), so a DNS answer that changes between the check and
the connection (DNS rebinding) cannot redirect it. Every redirect hop is checked the same way.

"Public" means globally routable unicast: multicast (224.0.0.1, ff0e::1) is refused, and every
IPv6 form that carries an IPv4 address inside it (IPv4-compatible `::a.b.c.d`, mapped
`::ffff:a.b.c.d`, translated `::ffff:0:a.b.c.d`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`, Teredo)
is public only if the address it carries is; the local-use NAT64 prefix `64:ff9b:1::/48` is
never public. Python's `is_global` alone calls `[::127.0.0.1]` and `[2002:a9fe:a9fe::1]` global.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from dataclasses import dataclass

import httpx

from toolweave.errors import ConfigError
from toolweave.tools.errors import PermissionDenied
from toolweave.tools.hosts import canonical_host

_IPV4_COMPATIBLE = ipaddress.IPv6Network("::/96")
_IPV4_TRANSLATED = ipaddress.IPv6Network("::ffff:0:0:0/96")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.IPv6Network("64:ff9b:1::/48")


def embedded_ipv4(ip: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """Every IPv4 address `ip` carries: mapped, compatible, translated, NAT64, 6to4, Teredo."""
    found: list[ipaddress.IPv4Address] = []
    if ip.ipv4_mapped is not None:
        found.append(ip.ipv4_mapped)
    if any(ip in net for net in (_IPV4_COMPATIBLE, _IPV4_TRANSLATED, _NAT64)):
        found.append(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
    if ip.sixtofour is not None:
        found.append(ip.sixtofour)
    if ip.teredo is not None:
        found.extend(ip.teredo)
    return found


def is_public_address(address: str) -> bool:
    """True for a globally routable unicast address whose embedded IPv4 (if any) is one too."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if ip.is_multicast or not ip.is_global:
        return False
    if isinstance(ip, ipaddress.IPv6Address):
        if ip in _NAT64_LOCAL:
            return False
        return all(is_public_address(str(v4)) for v4 in embedded_ipv4(ip))
    return True


@dataclass(frozen=True, slots=True)
class Target:
    """A checked request target: the URL to send to (host replaced by the checked address),
    the Host header, and the TLS server name."""

    url: httpx.URL
    host_header: str
    server_name: str


def domain_allowed(host: str, allow_domains: frozenset[str] | None) -> bool:
    """True when no allow-list is set or `host` is a listed domain or a subdomain of one, both
    in one spelling (`toolweave.tools.hosts`)."""
    if allow_domains is None:
        return True
    host = canonical_host(host)
    return any(host == d or host.endswith("." + d) for d in allow_domains)


def normalise_domains(domains: list[str] | None) -> frozenset[str] | None:
    if domains is None:
        return None
    cleaned = frozenset(canonical_host(d) for d in domains if d.strip())
    if not cleaned:
        raise ConfigError(
            "allow_domains is empty: list domains such as ['example.com'] or pass None"
        )
    return cleaned


def _refuse(message: str) -> PermissionDenied:
    error = PermissionDenied(message, permission="network")
    error.recoverable = True  # the model can try another URL
    return error


def redirect_refused(url: str) -> PermissionDenied:
    """A redirect hop the rules that cleared the first URL refuse."""
    return _refuse(
        f"the server redirected to {url}, which the permission rules refuse (a domain rule "
        "holds for every redirect hop); fetch that URL only if a rule allows it"
    )


async def check_url(
    url: str | httpx.URL, allow_domains: frozenset[str] | None, allow_private: bool
) -> Target:
    """Resolve and check `url`; PermissionDenied names why it may not be fetched."""
    parsed = httpx.URL(url)
    if parsed.scheme not in ("http", "https"):
        raise _refuse(f"{str(parsed)!r}: only http and https URLs can be fetched")
    host = parsed.host
    if not host:
        raise _refuse(f"{str(parsed)!r} has no host")
    if not domain_allowed(host, allow_domains):
        listed = ", ".join(sorted(allow_domains or ()))
        raise _refuse(f"domain {host!r} is not in allow_domains ({listed})")
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise _refuse(f"host {host!r} does not resolve: {exc}") from None
    addresses = sorted({str(info[4][0]) for info in infos})
    if not allow_private:
        for address in addresses:
            if not is_public_address(address):
                raise _refuse(
                    f"host {host!r} resolves to {address}, a private, loopback or reserved "
                    "address (or multicast, or an IPv6 form embedding such an IPv4 address); "
                    "fetch only reaches public unicast addresses (allow_private is off)"
                )
    pinned = addresses[0]
    host_header = host if parsed.port is None else f"{host}:{parsed.port}"
    return Target(parsed.copy_with(host=pinned), host_header, host)
