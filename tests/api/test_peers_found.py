"""The npm peers are found where `make peers` installs them: a wrong path skips every peer test
silently (each says "no Node 22+"), which is how the whole peer suite once went unrun."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.mcp.client.mcp_peers import PEERS

INSTALLED = Path(__file__).resolve().parents[1] / "peers" / "node_modules"


def test_the_peer_tests_look_where_make_peers_installs() -> None:
    assert os.path.abspath(PEERS) == os.path.abspath(INSTALLED)


@pytest.mark.skipif(not INSTALLED.is_dir(), reason="`make peers` has not run (needs npm)")
def test_installed_peers_give_node() -> None:
    from tests.mcp.client.mcp_peers import _NODE

    assert _NODE is not None
