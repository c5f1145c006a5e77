"""`toolweave skills`: list, show, validate, install, remove and trust Agent Skills.

Roots default to the usual places (project `.agents/skills`, `.claude/skills`, then the
user's); `--root` (repeatable) replaces them. `validate` exits 1 when any skill deviates from
the Agent Skills spec, so it can guard a repository in CI. `list --mcp FILE` adds the skills the
servers of an mcp.json serve (MCP skills extension) as `<server>__<skill>`; `trust NAME --mcp
FILE` lets such a remote skill's `allowed-tools` pre-approve, as listed now.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from toolweave.cli.literal_help import LiteralHelpTyper

if TYPE_CHECKING:
    from toolweave.skills import SkillLibrary

skills_app = LiteralHelpTyper(
    help="Agent Skills: list, show, validate, install, remove, trust.", no_args_is_help=True
)

RootsOption = Annotated[
    list[Path] | None,
    typer.Option("--root", "-r", help="A skill root (repeatable); default: the usual places."),
]


def _library(roots: list[Path] | None) -> SkillLibrary:
    from toolweave.skills import SkillLibrary

    library = SkillLibrary(roots or None)
    for warning in library.warnings:
        typer.echo(f"warning: {warning}", err=True)
    return library


def _fail(message: str) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(2)


@skills_app.command("list")
def list_skills(
    roots: RootsOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    mcp: Annotated[
        Path | None,
        typer.Option(
            "--mcp",
            help="An mcp.json: also list the skills its servers serve (MCP skills extension), "
            "named <server>__<skill>; nothing but the catalog is read.",
        ),
    ] = None,
) -> None:
    """List the skills found under the roots (and, with --mcp, its servers'), sorted by name."""
    library = _library(roots)
    rows = [
        {
            "name": s.name,
            "description": s.description,
            "allowed_tools": s.allowed_tools,
            "dir": str(s.dir),
            "model_invocable": not s.disable_model_invocation,
            "user_invocable": s.user_invocable,
        }
        for s in library.skills.values()
    ]
    if mcp is not None:
        rows.extend(_remote_rows(library, mcp))
        rows.sort(key=lambda row: str(row["name"]))
    if as_json:
        typer.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    if not rows:
        typer.echo(_none_found(library.roots))
        return
    from rich.markup import escape
    from rich.table import Table

    from toolweave.cli.console import make_console

    table = Table(title=f"{len(rows)} skills")
    table.add_column("name", style="bold cyan", no_wrap=True)
    table.add_column("description")
    table.add_column("allowed tools")
    for row in rows:
        description = " ".join(str(row["description"]).split())
        tools = ", ".join(row["allowed_tools"]) or "-"  # type: ignore[arg-type]
        table.add_row(*(escape(cell) for cell in (str(row["name"]), description, tools)))
    make_console().print(table)


def _remote_rows(library: SkillLibrary, mcp: Path) -> list[dict[str, object]]:
    """The remote skills of `mcp`'s servers, as `list` rows (`uri` in place of `dir`)."""
    _list_remote(library, mcp)
    return [
        {
            "name": s.name,
            "description": s.description,
            "allowed_tools": s.allowed_tools,
            "uri": s.info.uri,
            "server": s.server,
            "model_invocable": not s.disable_model_invocation,
            "user_invocable": False,
            "trusted": s.trusted(),
        }
        for s in library.remote.values()
    ]


def _list_remote(library: SkillLibrary, mcp: Path) -> None:
    """Join the skills `mcp`'s servers serve to `library` (their catalogs only)."""
    import asyncio

    from toolweave.cli.agent_tools import ask_input
    from toolweave.errors import ConfigError
    from toolweave.mcp.client.manager import MCPManager

    async def listed() -> None:
        async with MCPManager.from_config(mcp, ask=ask_input) as manager:
            for name, error in manager.errors.items():
                typer.echo(f"warning: MCP server {name!r} is unavailable: {error}", err=True)
            library.add_remote(manager)
            await library.refresh_remote()

    try:
        asyncio.run(listed())
    except ConfigError as exc:
        raise _fail(str(exc)) from None


@skills_app.command("trust")
def trust(
    name: Annotated[str, typer.Argument(help="The remote skill, <server>__<skill>.")],
    mcp: Annotated[Path, typer.Option("--mcp", help="The mcp.json whose server serves the skill.")],
) -> None:
    """Trust a remote skill you reviewed, as its server lists it now: its allowed-tools then
    pre-approve in an agent's run, until the server lists another SKILL.md. (Local skills:
    `toolweave trust FOLDER`.)"""
    from toolweave.skills import SkillLibrary

    library = SkillLibrary(roots=[])
    _list_remote(library, mcp)
    skill = library.remote.get(name)
    if skill is None:
        listed = ", ".join(library.remote) or "none"
        raise _fail(f"no remote skill named {name!r} in {mcp}; its servers serve: {listed}")
    skill.trust()
    typer.echo(
        f"trusted {name} ({skill.info.uri} on MCP server {skill.server!r}, sha256 "
        f"{(skill.listed_digest or '')[:12]}); a changed SKILL.md needs a new trust"
    )


def _none_found(roots: list[Path]) -> str:
    """What `skills list` says when no root holds a skill: the folders it searched."""
    searched = [f"  {root}{'' if root.is_dir() else ' (does not exist)'}" for root in roots]
    return "\n".join(
        [
            "no skills found; searched:",
            *searched,
            "a skill is a folder with a SKILL.md; add one there or pass --root",
        ]
    )


@skills_app.command("show")
def show(
    name: Annotated[str, typer.Argument(help="The skill to show.")],
    roots: RootsOption = None,
) -> None:
    """Print a skill's metadata, its files and its instructions."""
    from toolweave.skills import SkillError

    library = _library(roots)
    try:
        skill = library.get(name)
        body = skill.body()
    except SkillError as exc:
        raise _fail(exc.message) from None
    typer.echo(f"name: {skill.name}\ndir: {skill.dir}\ndescription: {skill.description}")
    if skill.allowed_tools:
        typer.echo(f"allowed-tools: {' '.join(skill.allowed_tools)}")
    if skill.argument_hint:
        typer.echo(f"argument-hint: {skill.argument_hint}")
    for rel in skill.resources():
        typer.echo(f"file: {rel}")
    typer.echo(f"\n{body}")


@skills_app.command("validate")
def validate(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(help="Skill folders or roots to check (default: every loaded skill)."),
    ] = None,
    roots: RootsOption = None,
) -> None:
    """Report every deviation from the Agent Skills spec; exit 1 if any is an error. Errors
    are what the official validator (skills-ref) refuses; warnings mark where toolweave is
    deliberately more lenient (fields outside the spec, flow-style YAML, `skill.md`)."""
    from toolweave.skills import validate_skill

    folders: list[Path] = []
    for path in paths or []:
        if (path / "SKILL.md").is_file() or (path / "skill.md").is_file():
            folders.append(path)
        elif path.is_dir():
            found = {p.parent for name in ("SKILL.md", "skill.md") for p in path.glob(f"*/{name}")}
            if not found:
                raise _fail(
                    f"{path} holds no skill: no SKILL.md in it or in its subfolders; pass a "
                    "skill folder or a folder of skills"
                )
            folders.extend(sorted(found))
        else:
            raise _fail(f"{path} is neither a skill folder nor a folder of skills")
    if not paths:
        library = _library(roots)
        folders = [s.dir for s in library.skills.values()]
        if not folders:
            searched = ", ".join(str(r) for r in library.roots) or "no folder"
            raise _fail(f"no skills found to validate (searched {searched}); pass a skill folder")
    errors = 0
    for folder in folders:
        issues = validate_skill(folder)
        errors += sum(issue.severity == "error" for issue in issues)
        for issue in issues:
            typer.echo(str(issue))
    typer.echo(f"{len(folders)} skill(s) checked, {errors} error(s)")
    if errors:
        raise typer.Exit(1)


@skills_app.command("install")
def install(
    source: Annotated[
        str,
        typer.Argument(
            help="A skill folder or .zip, a zip or SKILL.md URL, a GitHub path "
            "(github.com/OWNER/REPO/tree/REF/PATH), or - for SKILL.md text on stdin."
        ),
    ],
    into: Annotated[
        Path | None, typer.Option("--into", help="Root to install into (default: the first root).")
    ] = None,
    roots: RootsOption = None,
    allow_domain: Annotated[
        list[str] | None,
        typer.Option("--allow-domain", help="Download only from this domain (repeatable)."),
    ] = None,
    allow_private: Annotated[
        bool,
        typer.Option("--allow-private", help="Let downloads reach private and loopback hosts."),
    ] = False,
    github_base: Annotated[
        str | None,
        typer.Option("--github-base", help="Where GitHub archives come from (github.com)."),
    ] = None,
    max_bytes: Annotated[
        int | None,
        typer.Option("--max-bytes", min=1, help="Largest download, bytes (MAX_INSTALL_BYTES)."),
    ] = None,
    timeout: Annotated[
        float | None,
        typer.Option("--timeout", min=0.001, help="Seconds a download may take (60)."),
    ] = None,
) -> None:
    """Install a skill (checked before anything is written; recorded in skills.lock with its
    source). URLs are downloaded under the fetch tool's rules: public hosts only (unless
    --allow-private), --allow-domain, every redirect checked, at most --max-bytes."""
    import asyncio
    import sys

    from toolweave.builtins.fetch import downloader
    from toolweave.errors import ToolweaveError
    from toolweave.skills.install import MAX_INSTALL_BYTES
    from toolweave.skills.sources import DEFAULT_DOWNLOAD_TIMEOUT, DEFAULT_GITHUB_BASE

    library = _library(roots)
    text = sys.stdin.read() if source == "-" else source
    get = downloader(
        allow_domain,
        allow_private=allow_private,
        timeout=timeout or DEFAULT_DOWNLOAD_TIMEOUT,
        max_bytes=max_bytes or MAX_INSTALL_BYTES,
        tool="skills install",
    )
    base = github_base or DEFAULT_GITHUB_BASE
    try:
        report = asyncio.run(library.install_from(text, download=get, into=into, github_base=base))
    except ToolweaveError as exc:
        raise _fail(str(exc)) from None
    typer.echo(f"installed {report.name} into {report.path} (sha256 {report.sha256[:12]})")
    for script in report.scripts:
        typer.echo(f"bundled script (runs only through skill_run): {script}")
    for issue in report.issues:
        typer.echo(f"spec: {issue}")


@skills_app.command("remove")
def remove(
    name: Annotated[str, typer.Argument(help="The skill to delete.")],
    roots: RootsOption = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
) -> None:
    """Delete an installed skill's folder."""
    from toolweave.skills import SkillError

    library = _library(roots)
    try:
        skill = library.get(name)
        if not yes:
            typer.confirm(f"Delete {skill.dir}?", abort=True)
        removed = library.remove(name)
    except SkillError as exc:
        raise _fail(exc.message) from None
    typer.echo(f"removed {removed}")
