"""What a client declared (its protocol version, its capabilities) and the errors naming what it
lacks.

A leaf of `mcp/server/`: the session, the HTTP guards, the call context and the task runner all
check these, so they live below every one of them.
"""

from __future__ import annotations

from typing import Any

from toolweave.mcp.shared.constants import (
    SUPPORTED_VERSIONS,
    TASKS_EXTENSION,
    UNSUPPORTED_PROTOCOL_VERSION,
)
from toolweave.mcp.shared.errors import MISSING_CLIENT_CAPABILITY, JSONRPCError


def unsupported_version(requested: Any) -> JSONRPCError:
    return JSONRPCError(
        UNSUPPORTED_PROTOCOL_VERSION,
        "Unsupported protocol version",
        {"supported": list(SUPPORTED_VERSIONS), "requested": requested},
    )


def tasks_declared(capabilities: dict[str, Any]) -> bool:
    extensions = capabilities.get("extensions")
    return isinstance(extensions, dict) and isinstance(extensions.get(TASKS_EXTENSION), dict)


def tasks_required(what: str) -> JSONRPCError:
    return JSONRPCError(
        MISSING_CLIENT_CAPABILITY,
        f"{what} needs the {TASKS_EXTENSION} extension: declare it under "
        "clientCapabilities.extensions",
        {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}},
    )
