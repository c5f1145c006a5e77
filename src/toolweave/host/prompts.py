"""`[serve].commands`: slash commands served as MCP prompts.

Each command becomes a prompt of the same name with one optional `arguments` argument (what a
user would type after `/name`); prompts/get returns the expanded template as one user message,
so MCP hosts that show prompts as slash commands (Claude Code, Claude Desktop) offer the same
commands a toolweave chat does. The definitions are re-read when their file changes, so an
edited template is served at once; a command added later appears after a restart (prompt
names are registered at start-up).

Prompt names follow the MCP spec's rule for names (1-128 of `A-Z a-z 0-9 _ - .`, as for tools,
SEP-986), which has no `:`. A command reachable only by its namespaced spelling (`a/deploy.md`
beside `b/deploy.md` is `/a:deploy`) is served with each `:` written `.` (`a.deploy`, and
`c.d.deploy` for `c/d/deploy.md`): the dot is the spec's namespace separator, and Claude Code
already uses `:` between the server and the prompt (`/toolweave:a.deploy`). A command name has
no `.`, so the mapping is one-to-one and each prompt is bound to its command: `prompts/get
a.deploy` renders `/a:deploy`. Two spellings that still meet (folders `a.b/` and `a/b/`) serve
the first in name order and warn about the other; a command named in another script (`/翻译`)
is not served either, with a warning, and stays usable in chats.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from toolweave.agent.orchestration.command_files import NAMESPACE_SEPARATOR
from toolweave.agent.orchestration.slash_commands import Commands
from toolweave.errors import ConfigError
from toolweave.mcp.server import MCPServer

logger = logging.getLogger("toolweave.host")


def serve_commands(server: MCPServer, path: Path) -> Commands:
    """Register every command in `path` on `server` as a prompt; returns the live set."""
    try:
        commands = Commands.load(path)
    except ConfigError as exc:
        raise ConfigError(f"[serve].{exc}") from None
    for command in commands.list():
        name = command.name
        hint = f" Arguments: {command.argument_hint}" if command.argument_hint else ""
        summary = command.help_description if command.description else f"The /{name} command."
        description = summary + hint
        served = prompt_name(name)
        try:
            server.prompt(name=served, description=description)(_renderer(commands, name, path))
        except ValueError as exc:  # the server's own name rule, defined once there
            logger.warning("[serve].commands: /%s not served: %s", name, exc)
    return commands


def prompt_name(command: str) -> str:
    """The MCP prompt name of the command `/command`: each namespace `:` written `.`."""
    return command.replace(NAMESPACE_SEPARATOR, ".")


def _renderer(commands: Commands, name: str, path: Path) -> Callable[[str], str]:
    def render(arguments: str = "") -> str:
        """Args:
        arguments: What follows the command name, as a user would type it.
        """
        current = commands.get(name)
        if current is None:
            raise ConfigError(f"command /{name} was removed from {path}")
        return current.expand(arguments)

    return render
