"""The forge permission-pattern probe's `_meta` keys, shared by our MCP client and server.

The contract (the seed's wire contract): a server marks probe-able tools in tools/list; a host
may then call such a tool with the request key set and read the patterns from the result's
`_meta` instead of running it. One definition keeps both sides speaking the same keys.
"""

from __future__ import annotations

#: `_meta` key on a tools/call request asking for permission patterns instead of a run.
PROBE_REQUEST = "forge.permission_patterns"
#: `_meta` flag in tools/list marking a tool that answers probes.
PROBE_SUPPORTED = "forge.supports_permission_patterns"
#: `_meta` keys of a probe answer: argument-dependent patterns and always-on patterns.
PROBE_PATTERNS = "forge.patterns"
PROBE_ALWAYS = "forge.always"
