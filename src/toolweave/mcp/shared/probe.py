"""The one definition of "is this tools/call a forge permission probe", for client and server.

A probe asks a tool which permission patterns a call would need instead of running it. Reading
the request key loosely fails open: a server that only honours `true` while a client (or a
gateway) counts any truthy value as a probe would run the tool for real on `1` or `"yes"`. So
both sides use `probe_requested`: the key absent means a real call, exactly `true` a probe, and
anything else is refused with invalid params before anything runs or is sent.
"""

from __future__ import annotations

from typing import Any

from toolweave.mcp.shared.constants import PROBE_REQUEST
from toolweave.mcp.shared.errors import INVALID_PARAMS, JSONRPCError


def probe_requested(meta: dict[str, Any] | None) -> bool:
    """True for a probe, False for a real call; `JSONRPCError(INVALID_PARAMS)` otherwise."""
    if not meta or PROBE_REQUEST not in meta:
        return False
    value = meta[PROBE_REQUEST]
    if value is True:
        return True
    raise JSONRPCError(
        INVALID_PARAMS,
        f"_meta[{PROBE_REQUEST!r}] must be exactly true to ask for permission patterns (got "
        f"{value!r:.60}); leave the key out to call the tool",
    )
