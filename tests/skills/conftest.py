"""Fixtures of the skills tests."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture
def host_dir() -> Iterator[Path]:
    """A directory a sandboxed script can read: on the host filesystem, not under /tmp (which
    the sandbox replaces with a private, empty one)."""
    path = Path(tempfile.mkdtemp(prefix="toolweave-skills-", dir="/var/tmp"))
    try:
        yield path
    finally:
        shutil.rmtree(path)
