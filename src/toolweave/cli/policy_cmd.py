"""`toolweave policy explain 'bash(rm -rf build)'`: which rule, from which file, decides a call.

Most "my deny rule does not work" reports are people unable to see why a rule did not apply; this
prints the Claude Code tool name the call was matched as (`read_file` is `Read`, `bash` is
`Bash`), the decision, the deciding rule and its file, and every subcommand that was checked.
With `--config`, the built-in shell's `[builtins] shell_allow` / `shell_deny` lists join the
rules, as they do in `toolweave serve`. With neither `--config` nor a Claude Code settings file
(given or found), the answer is what `toolweave serve` does with its own default config
(`./toolweave.toml` when present): read-only and own-store calls run, a tool it does not serve
is an unknown tool, and a Claude Code name (`Read`) is matched to the served tool (`read_file`).
With `--grant`, a skill's or a slash command's
`allowed-tools` join them as they do while it is active (below every deny and ask rule), and
the explanation names the grant.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from toolweave.cli.literal_help import LiteralHelpTyper

if TYPE_CHECKING:
    from toolweave.governance.rules import Explanation, Rules

policy_app = LiteralHelpTyper(help="Inspect permission rules.", no_args_is_help=True)

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
_GRANT = typer.Option(
    [],
    "--grant",
    "-g",
    help="A skill folder (its SKILL.md) or a slash-command .md file whose allowed-tools are "
    "pre-approved, as while it is active (repeatable).",
)


@policy_app.command("explain")
def explain(
    call: str = _CALL_ARG,
    settings: list[Path] = _SETTINGS,
    config: Path | None = _CONFIG,
    arg: str | None = _ARG,
    default: str = _DEFAULT,
    grant: list[Path] = _GRANT,
) -> None:
    """Say whether a call is allowed, denied or asked, and which rule from which file decided."""
    from toolweave.governance.rules import Rules

    name, args = call_arguments(call, arg)
    if grant and config is not None:
        raise typer.BadParameter("use --grant with settings files, not --config")
    files = list(settings) or discovered_settings(Path.cwd())
    if config is not None or not (files or grant):
        served = _served_decision(config, name, args)
        where = str(config) if config is not None else "toolweave serve's config (default)"
        typer.echo(f"rules from: {where} [serve.rules] and [builtins] shell_allow / shell_deny")
        typer.echo(f"matched as: {served.tool}")
        typer.echo(str(served))
        return
    try:
        rules = Rules.from_settings(*files, default=default)  # type: ignore[arg-type]
        granted = _granted(grant)
    except ValueError as exc:  # RuleSyntaxError and every configuration error
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    if granted is not None:
        rules = rules.including(granted)
    explanation = rules.explain(name, args)
    typer.echo(f"rules from: {', '.join(map(str, files)) or 'no settings file'}")
    if grant:
        typer.echo(f"pre-approved by: {', '.join(map(str, grant))}")
    typer.echo(f"matched as: {explanation.tool}")
    typer.echo(str(explanation))


def _granted(paths: list[Path]) -> Rules | None:
    """The allow rules the `allowed-tools` of these skills or command files grant."""
    from toolweave.agent.orchestration.command_files import command_meta
    from toolweave.governance.grants import command_grant, preapproved, skill_grant

    grants: list[tuple[str, tuple[str, ...]]] = []
    for path in paths:
        file = path
        if path.is_dir():
            file = next((path / n for n in ("SKILL.md", "skill.md") if (path / n).is_file()), path)
        try:
            meta, _ = command_meta(file.read_text(encoding="utf-8"), str(file))
        except OSError as exc:
            raise ValueError(f"--grant {path}: cannot read it ({exc})") from None
        skill = file.name.lower() == "skill.md"
        source = skill_grant(file.parent.name) if skill else command_grant(file.stem)
        grants.append((source, meta.allowed_tools))
    return preapproved(grants, None)


def _served_decision(config: Path | None, name: str, args: dict[str, str]) -> Explanation:
    """What `toolweave serve --config` (or serve with its default config) does with this call:
    the host's tool of that name (or of that Claude Code name) judged by the host's own
    `HostGovernance.explain` (the decision its pipeline acts on)."""
    import asyncio

    from toolweave.governance.rules import Explanation, Rules
    from toolweave.host import ToolHost, load_host_config
    from toolweave.host.governed import unwrapped
    from toolweave.tools.claude_names import claude_code_name

    async def decide() -> Explanation:
        host = ToolHost(load_host_config(config))
        try:
            await host.server.load_tool_sources()
            entry = host.server.tool_entry(name)
            if entry is None:  # a Claude Code name (`Read`) for a served tool (`read_file`)
                for tool_name in host.server.tool_names():
                    candidate = host.server.tool_entry(tool_name)
                    inner = getattr(candidate.tool(), "inner", None) if candidate else None
                    if claude_code_name(tool_name, inner) == name:
                        entry, name_served = candidate, tool_name
                        break
            else:
                name_served = name
            if entry is None and config is None:
                return Explanation(
                    "deny", f"serve has no tool {name!r}: a client calling it gets an unknown-"
                    "tool error (see `toolweave tools` for what is served)", tool=name,
                )  # fmt: skip
            if entry is None:  # e.g. a downstream tool not connected: the rules alone decide
                typer.echo(f"({config} serves no tool {name!r} now: the rules alone decide)")
                return (host.governance.governance.rules or Rules()).explain(name, args)
            served = entry.tool()
            tool = unwrapped(served)
            key, given = tool.primary_arg, dict(args)
            if key is not None and len(given) == 1 and key not in given:
                given = {key: next(iter(given.values()))}  # `tool(value)` names the primary arg
            return host.governance.explain(name_served, tool, given)
        finally:
            await host.close()

    try:
        return asyncio.run(decide())
    except ValueError as exc:  # every configuration error
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
