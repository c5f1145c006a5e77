"""Environment overrides of `toolweave.toml`: `TOOLWEAVE_<TABLE>__<KEY>`, read as TOML values.

Kept apart from the config model (`host/config.py`) because it only rewrites the raw tables
before they are validated: each variable names a table path and a value, and the path is
recorded so an error about the value can name the variable it came from.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from toolweave.errors import ConfigError

if TYPE_CHECKING:
    from toolweave.host.sections import ConfigSource

ENV_PREFIX = "TOOLWEAVE_"
ENV_SEPARATOR = "__"
MCP_SERVERS = "mcpServers"


def merge_env(raw: dict[str, Any], env: Mapping[str, str], origin: ConfigSource) -> dict[str, Any]:
    """`raw` with every `TOOLWEAVE_<TABLE>__<KEY>` variable applied (a deep copy of the
    tables it touches); records each variable in `origin.env` for error messages."""
    data = dict(raw)
    for variable in sorted(env):
        if not variable.startswith(ENV_PREFIX) or ENV_SEPARATOR not in variable:
            continue
        path = tuple(p.lower() for p in variable[len(ENV_PREFIX) :].split(ENV_SEPARATOR))
        if not all(path) or path[0] == MCP_SERVERS.lower():
            raise ConfigError(
                f"environment variable {variable}: expected TOOLWEAVE_<TABLE>__<KEY> such as "
                "TOOLWEAVE_SERVE__PORT ([mcpServers] is set in the file only)"
            )
        table = data
        for part in path[:-1]:
            child = table.get(part, {})
            table[part] = dict(child) if isinstance(child, dict) else child
            table = table[part]
            if not isinstance(table, dict):
                raise ConfigError(f"environment variable {variable}: {part} is not a table")
        table[path[-1]] = _env_value(env[variable])
        origin.env[path] = variable
    return data


def _env_value(text: str) -> Any:
    try:
        return tomllib.loads(f"value = {text}")["value"]
    except tomllib.TOMLDecodeError:
        return text
