"""The agent-facing MCP toolset: a server's tools as toolweave `Tool`s, and tools about servers.

`bridge` (`MCPTool`, `as_tools`, the permission-pattern probe), `lazy` (`mcp_discover` and
`mcp_load`: load a server's tools on demand) and `self_tools` (`mcp_list`, `mcp_add`,
`mcp_remove`, `mcp_reconnect`). It sits on the client (`toolweave.mcp.client`) and reads a
manager's servers through `client.servers.ManagedServers`; the public names are exported from
`toolweave.mcp`.
"""
