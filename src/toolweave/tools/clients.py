"""Who a call comes from: the one client key every per-client bound of the host uses.

Daily call quotas (`toolweave.accounting`), the console's approvals waiting per client and the
gateway's downstream calls held per client (`toolweave.mcp.client.upstream`) all count by this
key. It is the authenticated identity where there is one, never the client's self-declared
name (a client rotates that at will).
"""

from __future__ import annotations

import ipaddress

from toolweave.tools.context import ToolContext

__all__ = ["client_key"]


def client_key(ctx: ToolContext) -> str:
    """The key of a call's client (an MCP server `Context` has the attributes read here): its
    principal (a `[serve.tokens]` client, a shared token's fingerprint), else its network
    address with the whole loopback range one client (any `127.x.y.z` and `::1` are the same
    machine), else "stdio"."""
    principal = getattr(ctx, "principal", None)
    if isinstance(principal, str) and principal:
        return f"principal:{principal}"
    address = getattr(ctx, "remote_address", None)
    if isinstance(address, str) and address:
        return "address:loopback" if _loopback(address) else f"address:{address}"
    return "stdio"


def _loopback(address: str) -> bool:
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    mapped = ip.ipv4_mapped if isinstance(ip, ipaddress.IPv6Address) else None
    return ip.is_loopback or (mapped is not None and mapped.is_loopback)
