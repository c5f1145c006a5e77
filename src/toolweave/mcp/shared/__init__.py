"""The MCP core both sides share: JSON-RPC, errors, protocol versions and `_meta` keys.

Laid out as the official SDK's `mcp.shared`: the client (`toolweave.mcp.client`) and the server
toolkit (`toolweave.mcp.server`) import from here and never from each other. Each constant is
defined once, in `constants`. Importing this package is cheap (it imports nothing), so a stdio
server's cold start does not pay for it.
"""
