"""The package version, defined once: `pyproject.toml` reads it from here, and every module
that reports a version (the MCP client's clientInfo, served serverInfo) imports it from here
rather than from the root `toolweave` package, which no layer may import."""

__version__ = "0.1.0"
