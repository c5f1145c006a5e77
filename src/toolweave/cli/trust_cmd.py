"""`toolweave trust PATH`: record a file a person reviewed, by path and content hash.

`toolweave serve` runs a `toolweave.toml` found in the current folder only once it is trusted
(it can start programs), `toolweave run`/`chat` take a model from `./.env` only once it is
(it picks where conversations go), and a skill or a slash command file in a folder the agent's
own tools can write pre-approves its `allowed-tools` only once its SKILL.md or the command file
is. The record
(`~/.toolweave/trusted.json`) holds the real path and the SHA-256 of the content, so an edit
after the trust needs a new one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def trust_command(
    path: Annotated[
        Path | None,
        typer.Argument(
            help="A toolweave.toml (default: the one here), ./.env, a command file, or a skill "
            "folder or its SKILL.md."
        ),
    ] = None,
) -> None:
    """Trust a config or a skill you reviewed, exactly as it is now."""
    from toolweave.host.config import DEFAULT_CONFIG_FILE
    from toolweave.skills.skill import SKILL_FILE
    from toolweave.storage.trust import trust

    path = path if path is not None else Path(DEFAULT_CONFIG_FILE)
    target = path / SKILL_FILE if path.is_dir() else path
    try:
        digest = trust(target)
    except FileNotFoundError:
        typer.echo(f"error: {target} cannot be read; name a toolweave.toml or a skill", err=True)
        raise typer.Exit(2) from None
    typer.echo(f"trusted {target.resolve()} (sha256 {digest[:12]}); an edit needs a new trust")
