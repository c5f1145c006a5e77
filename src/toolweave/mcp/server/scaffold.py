"""`toolweave mcp new NAME`: a ready MCP server project from the bundled template.

The template (in `template/`) holds what a new server needs on day one:
a src-layout package with one example tool, a test through the in-memory client, a README
with the Claude Desktop and Claude Code snippets, and CI. Python files are stored as `.tmpl`
so this repository's linters and type checker never mistake them for its own code.

toolweave is not on a package index, so the project's dependency on it names where it comes
from (`source`): a wheel is copied into the project's `wheels/` and referenced relative to the
project (so its CI installs it from the repository), a checkout by its absolute `file:` URL (this
machine only), and `INDEX_SOURCE` asks the index for `toolweave>=VERSION`.
`running_source()` finds the checkout or wheel the running toolweave came from.
"""

from __future__ import annotations

import json
import shutil
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote, urlparse

from toolweave.mcp.server.validators import check_slug
from toolweave.version import __version__

TEMPLATE = Path(__file__).with_name("template")
_RENAMES = {"gitignore": ".gitignore"}
INDEX_SOURCE = "index"
"""The `source` that depends on toolweave from the package index."""
WHEELS = "wheels"
"""The project folder a wheel `source` is copied to (commit it: CI installs from it)."""


def running_source() -> Path | None:
    """The checkout (a folder with `pyproject.toml` above `src/toolweave`) or the local wheel
    or folder the running toolweave was installed from; None for an install from an index."""
    package = Path(__file__).resolve().parents[2]  # toolweave/mcp/server/scaffold.py
    root = package.parent.parent
    if package.parent.name == "src" and (root / "pyproject.toml").is_file():
        return root
    try:
        direct = metadata.distribution("toolweave").read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        return None
    url = urlparse(json.loads(direct).get("url", "")) if direct else None
    if url is None or url.scheme != "file":
        return None
    path = Path(unquote(url.path))
    return path if path.exists() else None


def check_source(source: str | Path) -> str | Path:
    """`source` if it names a usable toolweave: `INDEX_SOURCE`, a `.whl` file or a checkout."""
    if source == INDEX_SOURCE:
        return source
    path = Path(source).expanduser().resolve()
    if path.is_file() and path.suffix == ".whl" and path.name.startswith("toolweave-"):
        return path
    if path.is_dir() and (path / "pyproject.toml").is_file() and (path / "src/toolweave").is_dir():
        return path
    raise ValueError(
        f"toolweave source {str(source)!r} is neither a toolweave wheel (toolweave-*.whl, built "
        f"by make dist), a toolweave checkout nor {INDEX_SOURCE!r}; pass one of those"
    )


def _requirements(source: str | Path) -> tuple[str, str]:
    """The project's requirement on toolweave, and on toolweave with its server extra."""
    if source == INDEX_SOURCE:
        return f"toolweave>={__version__}", f"toolweave[server]>={__version__}"
    path = Path(source)
    where = f"{{root:uri}}/{WHEELS}/{path.name}" if path.is_file() else path.as_uri()
    return f"toolweave @ {where}", f"toolweave[server] @ {where}"


def scaffold(
    name: str, directory: str | Path | None = None, source: str | Path = INDEX_SOURCE
) -> Path:
    """Create the project `name` in `directory` (default `./name`), depending on toolweave
    from `source` (see the module docstring); returns its path."""
    source = check_source(source)
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
    requirement, server_requirement = _requirements(source)
    values = {
        "__PROJECT__": name,
        "__PACKAGE__": package,
        "__TOOLWEAVE_REQUIREMENT__": requirement,
        "__TOOLWEAVE_SERVER_REQUIREMENT__": server_requirement,
    }
    for template in sorted(TEMPLATE.rglob("*")):
        if not template.is_file() or "__pycache__" in template.parts:
            continue
        relative = template.relative_to(TEMPLATE).as_posix()
        for key, value in values.items():
            relative = relative.replace(key, value)
        relative = relative.removesuffix(".tmpl")
        head, _, tail = relative.rpartition("/")
        relative = f"{head}/{_RENAMES.get(tail, tail)}" if head else _RENAMES.get(tail, tail)
        text = template.read_text(encoding="utf-8")
        for key, value in values.items():
            text = text.replace(key, value)
        destination = target / relative
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_text(text, encoding="utf-8")
    if isinstance(source, Path) and source.is_file():
        (target / WHEELS).mkdir()
        shutil.copy2(source, target / WHEELS / source.name)
    return target
