"""Capability providers: one module each for what `toolweave serve` can expose (demo, builtins,
memory, kb, notes, skills, the MCP gateway), registered by name in `PROVIDERS`."""
