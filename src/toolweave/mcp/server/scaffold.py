"""`toolweave mcp new NAME`: a ready MCP server project from the bundled template.

The template (in `template/`) holds what a new server needs on day one:
a src-layout package with one example tool, a test through the in-memory client, a README
with the Claude Desktop and Claude Code snippets, and CI. Python files are stored as `.tmpl`
so this repository's linters and type checker never mistake them for its own code.
"""

from __future__ import annotations

from pathlib import Path

from toolweave.mcp.server.validators import check_slug
from toolweave.version import __version__

TEMPLATE = Path(__file__).with_name("template")
_RENAMES = {"gitignore": ".gitignore"}


def scaffold(name: str, directory: str | Path | None = None) -> Path:
    """Create the project `name` in `directory` (default `./name`); returns its path."""
    check_slug(name, kind="project name")
    package = name.replace("-", "_")
    if not package.isidentifier():  # `2048-tools` is a fine slug but not an importable package
        raise ValueError(
            f"project name {name!r} must start with a letter: its package {package!r} has to be "
            "a Python identifier, e.g. 'tools-2048'"
        )
    target = Path(directory) if directory is not None else Path(name)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise FileExistsError(f"{target} already exists and is not empty; pick another --dir")
    values = {
        "__PROJECT__": name,
        "__PACKAGE__": package,
        "__TOOLWEAVE_VERSION__": __version__,
    }
    for source in sorted(TEMPLATE.rglob("*")):
        if not source.is_file() or "__pycache__" in source.parts:
            continue
        relative = source.relative_to(TEMPLATE).as_posix()
        for key, value in values.items():
            relative = relative.replace(key, value)
        relative = relative.removesuffix(".tmpl")
        head, _, tail = relative.rpartition("/")
        relative = f"{head}/{_RENAMES.get(tail, tail)}" if head else _RENAMES.get(tail, tail)
        text = source.read_text(encoding="utf-8")
        for key, value in values.items():
            text = text.replace(key, value)
        destination = target / relative
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_text(text, encoding="utf-8")
    return target
