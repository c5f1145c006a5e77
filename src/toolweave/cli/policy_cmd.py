"""`toolweave policy explain 'bash(rm -rf build)'`: which rule, from which file, decides a call.

Most "my deny rule does not work" reports are people unable to see why a rule did not apply; this
prints the Claude Code tool name the call was matched as (`read_file` is `Read`, `bash` is
`Bash`), the decision, the deciding rule and its file, and every subcommand that was checked.
With `--config`, the built-in shell's `[builtins] shell_allow` / `shell_deny` lists join the
rules, as they do in `toolweave serve`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from toolweave.governance.rules import Rules
    from toolweave.host.config import HostConfig

policy_app = typer.Typer(help="Inspect permission rules.", no_args_is_help=True)

_CALL = re.compile(r"^\s*([A-Za-z0-9_.\-]+)\s*(?:\((.*)\))?\s*$", re.DOTALL)
_SHELL_TOOLS = {"bash", "shell", "sh", "powershell"}
_PATH_TOOLS = {"read", "edit", "write", "multiedit", "notebookedit", "glob", "grep", "ls"}
_URL_TOOLS = {"webfetch", "fetch", "websearch"}


def discovered_settings(cwd: Path) -> list[Path]:
    """Claude Code's settings files that exist, lowest precedence first (user, project, local)."""
    candidates = [
        Path("~/.claude/settings.json").expanduser(),
        cwd / ".claude" / "settings.json",
        cwd / ".claude" / "settings.local.json",
    ]
    return [p for p in candidates if p.is_file()]


def call_arguments(call: str, arg: str | None) -> tuple[str, dict[str, str]]:
    """`'bash(rm -rf build)'` -> ("bash", {"command": "rm -rf build"})."""
    match = _CALL.match(call)
    if match is None:
        raise typer.BadParameter(
            f"{call!r} is not a call: write `tool(argument)`, e.g. 'bash(rm -rf build)' or "
            "'read(./.env)'",
            param_hint="CALL",
        )
    name, value = match.group(1), match.group(2)
    if value is None:
        return name, {}
    from toolweave.tools.claude_names import claude_code_name

    folded = claude_code_name(name).lower().replace("_", "")
    if arg is None:
        if folded in _SHELL_TOOLS:
            arg = "command"
        elif folded in _PATH_TOOLS:
            arg = "path"
        elif folded in _URL_TOOLS:
            arg = "url"
        else:
            arg = "value"
    return name, {arg: value}


_CALL_ARG = typer.Argument(..., help="The call, as `tool(argument)`: 'bash(rm -rf build)'.")
_SETTINGS = typer.Option(
    [],
    "--settings",
    "-s",
    help="A Claude Code settings.json to read (repeatable). Default: ~/.claude/settings.json, "
    ".claude/settings.json and .claude/settings.local.json where they exist.",
)
_CONFIG = typer.Option(
    None,
    "--config",
    "-c",
    help="Explain toolweave.toml's [serve.rules] (what `toolweave serve` applies) instead.",
)
_ARG = typer.Option(
    None, "--arg", help="The argument name the value is for (default: guessed from the tool)."
)
_DEFAULT = typer.Option("ask", "--default", help="Rules(default=...): allow, ask or deny.")


@policy_app.command("explain")
def explain(
    call: str = _CALL_ARG,
    settings: list[Path] = _SETTINGS,
    config: Path | None = _CONFIG,
    arg: str | None = _ARG,
    default: str = _DEFAULT,
) -> None:
    """Say whether a call is allowed, denied or asked, and which rule from which file decided."""
    from toolweave.governance.rules import Rules

    try:
        if config is not None:
            from toolweave.host.config import load_host_config

            host = load_host_config(config)
            root = str(config.resolve().parent)
            rules = Rules.from_mapping(host.rules, source=f"{config} [serve.rules]", root=root)
            origin = f"{config} [serve.rules]"
            shell = _shell_lists(host, root)
            if shell is not None:
                rules = rules.including(shell)
                origin += " and [builtins] shell_allow / shell_deny"
        else:
            files = list(settings) or discovered_settings(Path.cwd())
            rules = Rules.from_settings(*files, default=default)  # type: ignore[arg-type]
            origin = ", ".join(map(str, files)) or "no settings file"
    except ValueError as exc:  # RuleSyntaxError and every configuration error
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    name, args = call_arguments(call, arg)
    explanation = rules.explain(name, args)
    typer.echo(f"rules from: {origin}")
    typer.echo(f"matched as: {explanation.tool}")
    typer.echo(str(explanation))


def _shell_lists(host: HostConfig, root: str) -> Rules | None:
    """The built-in shell's own rules when `[builtins] shell = true`, as `serve` adds them."""
    from toolweave.builtins.shell import DEFAULT_DENY, shell_rules
    from toolweave.governance.rules import Rules
    from toolweave.host.providers.builtins import BuiltinsSection

    settings = host.section("builtins", BuiltinsSection)
    if not settings.shell:
        return None
    deny = shell_rules(DEFAULT_DENY if settings.shell_deny is None else settings.shell_deny,
                       "[builtins] shell_deny")  # fmt: skip
    allow = shell_rules(settings.shell_allow, "[builtins] shell_allow")
    return Rules(allow, deny, source="[builtins] shell_allow / shell_deny", root=root)
