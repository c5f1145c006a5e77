"""The web console: the host's overview, usage, query log and pending approvals, served
beside `/mcp` by `toolweave serve`."""
