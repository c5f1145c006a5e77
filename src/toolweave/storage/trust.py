"""Files a person has trusted, recorded by path and content hash, as editors trust workspaces.

Some files are instructions the host follows: a `toolweave.toml` starts the commands of its
`[mcpServers]` and hooks; a skill's `allowed-tools` pre-approve tool calls. A cloned folder, or
a folder a sandboxed command can write, may hold such a file that nobody chose. `toolweave
trust PATH` records the file's real path and the SHA-256 of its content in
`~/.toolweave/trusted.json` (mode 0600); `is_trusted(path)` holds only while the content is
still exactly what was trusted, so an edit after the trust needs a new one.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path

from toolweave.storage.files import atomic_write

__all__ = [
    "DEFAULT_TRUST_FILE",
    "content_digest",
    "exposed",
    "is_trusted",
    "is_trusted_digest",
    "trust",
    "trust_digest",
]

DEFAULT_TRUST_FILE = "~/.toolweave/trusted.json"
"""Where trusted files are recorded, unless a caller names another store."""
_PRIVATE = 0o600


def _store(store: str | os.PathLike[str] | None) -> Path:
    return Path(store or DEFAULT_TRUST_FILE).expanduser()


def content_digest(path: str | os.PathLike[str]) -> str | None:
    """The SHA-256 of the file's content, or None when it cannot be read."""
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None


def _entries(store: Path) -> dict[str, str]:
    try:
        data = json.loads(store.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    found = data.get("trusted") if isinstance(data, dict) else None
    return {k: v for k, v in found.items() if isinstance(v, str)} if isinstance(found, dict) else {}


def trust(path: str | os.PathLike[str], *, store: str | os.PathLike[str] | None = None) -> str:
    """Record `path` (its real path and the hash of its content now) as trusted; returns the
    hash. `FileNotFoundError` when it cannot be read."""
    real = os.path.realpath(path)
    digest = content_digest(real)
    if digest is None:
        raise FileNotFoundError(f"cannot read {real} to trust it")
    trust_digest(real, digest, store=store)
    return digest


def trust_digest(key: str, digest: str, *, store: str | os.PathLike[str] | None = None) -> None:
    """Record `key` (something that is not a local file, e.g. a remote skill's
    `mcp-skill:<server>:<uri>`) as trusted while its content hashes to `digest` (hex)."""
    where = _store(store)
    entries = _entries(where)
    entries[key] = digest
    where.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    text = json.dumps({"trusted": dict(sorted(entries.items()))}, indent=2)
    atomic_write(where, text + "\n", new_mode=_PRIVATE)


def is_trusted_digest(
    key: str, digest: str, *, store: str | os.PathLike[str] | None = None
) -> bool:
    """Whether a person trusted `key` with exactly the content hashing to `digest`."""
    return _entries(_store(store)).get(key) == digest


def is_trusted(
    path: str | os.PathLike[str],
    *,
    store: str | os.PathLike[str] | None = None,
    content: bytes | None = None,
) -> bool:
    """Whether a person trusted `path` with exactly the content it has now; pass the `content`
    the caller read and will use, so what is checked is what is used (the file is not read a
    second time, when it may have changed in between)."""
    real = os.path.realpath(path)
    recorded = _entries(_store(store)).get(real)
    digest = hashlib.sha256(content).hexdigest() if content is not None else content_digest(real)
    return recorded is not None and recorded == digest


def exposed(path: str | os.PathLike[str], writable: Iterable[str]) -> bool:
    """Whether `path` (its real path) lies in one of the `writable` folders (real paths): a file
    there is one a sandboxed tool may have written, so it counts only once trusted."""
    where = os.path.realpath(path)
    return any(where == w or where.startswith(w.rstrip("/") + "/") for w in writable)
