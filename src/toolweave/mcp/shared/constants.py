"""Protocol versions, eras, `_meta` keys, the forge probe keys and the default limits, each
defined once.

MCP has two eras. Up to 2025-11-25 a connection starts with an `initialize` handshake (and,
over HTTP, a session); from 2026-07-28 every request is stateless and carries the version, the
client's identity and capabilities in `_meta`. The client and the server both read these names
from here, so the two sides can never disagree on a key or on the order of a version list.
This module imports nothing.
"""

from __future__ import annotations

#: Handshake-era (`initialize`) versions, oldest first.
HANDSHAKE_VERSIONS: tuple[str, ...] = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
#: Stateless-era versions, oldest first.
MODERN_VERSIONS: tuple[str, ...] = ("2026-07-28",)
LATEST_HANDSHAKE = HANDSHAKE_VERSIONS[-1]
LATEST_MODERN = MODERN_VERSIONS[-1]
#: Every version we speak, newest first (the order servers advertise them in).
SUPPORTED_VERSIONS: tuple[str, ...] = (*MODERN_VERSIONS[::-1], *HANDSHAKE_VERSIONS[::-1])

#: JSON-RPC error code for a request in a protocol version the peer does not speak.
UNSUPPORTED_PROTOCOL_VERSION = -32022

#: The HTTP header carrying the protocol version on every request after the first.
PROTOCOL_VERSION_HEADER = "MCP-Protocol-Version"

META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
META_LOG_LEVEL = "io.modelcontextprotocol/logLevel"
META_SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
#: The tasks extension (SEP-2663): declared under `capabilities.extensions` by both sides.
TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
#: The skills extension (SEP-2640): a server that declares it serves `skills/list`, `skills/get`
#: and each skill's files as `skill://<name>/<path>` resources.
SKILLS_EXTENSION = "io.modelcontextprotocol/skills"
#: The body field the `Mcp-Name` header mirrors, per method (SEP-2243; SEP-2663 adds the task
#: methods): the client sets the header from it and the server checks the header against it.
NAME_PARAMS = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    "tasks/get": "taskId",
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
}
#: Methods of the handshake era that 2026-07-28 removed: a modern request for one is -32601.
HANDSHAKE_ONLY_METHODS = frozenset(
    {"initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"}
)

# The forge permission-pattern probe (a wire contract with forge-built hosts, so the key names
# are fixed): a server marks probe-able tools
# in tools/list; a host may then call such a tool with the request key set and read the patterns
# from the result's `_meta` instead of running it.
#: `_meta` key on a tools/call request asking for permission patterns instead of a run.
PROBE_REQUEST = "forge.permission_patterns"
#: `_meta` flag in tools/list marking a tool that answers probes.
PROBE_SUPPORTED = "forge.supports_permission_patterns"
#: `_meta` keys of a probe answer: argument-dependent patterns and always-on patterns.
PROBE_PATTERNS = "forge.patterns"
PROBE_ALWAYS = "forge.always"

#: Host names that are loopback; a server bound to one accepts only these in `Host`.
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "[::1]", "::1")

# List-change notifications, sent by servers and acted on by clients and the gateway.
CALLER_EXTRA = "mcp_ask_caller"
"""The `ToolContext.extras` key of a served call's `ask_caller(method, params)`: what a proxied
tool forwards its downstream server's questions to (`toolweave.mcp.client.upstream`)."""

TOOLS_CHANGED = "notifications/tools/list_changed"
PROMPTS_CHANGED = "notifications/prompts/list_changed"
RESOURCES_CHANGED = "notifications/resources/list_changed"
RESOURCE_UPDATED = "notifications/resources/updated"
#: SEP-2663: a followed task changed; its params are the task as `tasks/get` returns it.
TASK_STATUS = "notifications/tasks"

# Limits on what a peer controls (client and server both read them from here).
#: Deepest JSON nesting a message may have; deeper ones are parse errors (-32700) on decode.
MAX_JSON_DEPTH = 128
#: Default largest HTTP request body the server reads (`max_body_bytes`); larger gets 413.
DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024
#: Default most live Streamable HTTP sessions (`max_sessions`); past it a new one gets 429.
DEFAULT_MAX_SESSIONS = 1000
#: Default seconds a client has to send a whole HTTP request body (`body_read_timeout`); 408 past.
DEFAULT_BODY_READ_TIMEOUT = 30.0
#: Default seconds an HTTP session may sit unused before it is closed (`session_idle_timeout`).
DEFAULT_SESSION_IDLE_TIMEOUT = 600.0
#: `_meta` key of a 2026-era `tools/call` naming the call, so a retry with the same key runs it
#: at most once (the server answers the recorded response, or refuses).
META_IDEMPOTENCY_KEY = "io.toolweave/idempotency-key"
#: Default seconds a server keeps an idempotency key and its response (`idempotency_ttl`).
DEFAULT_IDEMPOTENCY_TTL = 86400.0
#: Default most keys one process keeps without a shared store (`max_idempotency_keys`).
DEFAULT_MAX_IDEMPOTENCY_KEYS = 100_000
#: Longest idempotency key a server accepts (characters); longer ones are refused.
MAX_IDEMPOTENCY_KEY_CHARS = 200
