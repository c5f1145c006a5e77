"""The jail against what a check-then-open cannot stop: a folder swapped for a link to outside
while the tools loop over it, FIFOs and other non-regular files, and error messages that must
not show host paths. The swap runs in a real thread; each loop runs a bounded number of
iterations (never a time), with both resolvers: the kernel's openat2 and the descriptor walk."""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from toolweave.builtins import _jail, filesystem_tools
from toolweave.tools import PermissionDenied, Tool, ToolContext, ToolError

SECRET = "OUTSIDE-机密"
_LIBC = ctypes.CDLL(None, use_errno=True)
_AT_FDCWD, _RENAME_EXCHANGE = -100, 2
ITERATIONS = 3000


@pytest.fixture(params=["openat2", "walk"])
def resolver(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    if request.param == "walk":
        monkeypatch.setattr(_jail, "openat2_works", False)
    else:
        assert _jail.openat2_works is not False, "this kernel has no openat2"
    yield request.param


def fs(root: Path) -> dict[str, Tool]:
    return {t.name: t for t in filesystem_tools(root)}


class Swapper:
    """Flips `root/racedir` between a real folder and a link to `outside` until stopped, with
    one atomic exchange of two names per flip (renameat2 RENAME_EXCHANGE), so `racedir` always
    exists: the tools never see it missing (where `write_file` would make the folder)."""

    def __init__(self, root: Path, outside: Path) -> None:
        self.racedir, self.link = root / "racedir", root / "link"
        self.racedir.mkdir()
        (self.racedir / "x").write_text("inside")
        self.link.symlink_to(outside, target_is_directory=True)
        self.stop = threading.Event()
        self.swaps = 0
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        old, new = os.fsencode(self.racedir), os.fsencode(self.link)
        while not self.stop.is_set():
            if _LIBC.renameat2(_AT_FDCWD, old, _AT_FDCWD, new, _RENAME_EXCHANGE) != 0:
                raise OSError(ctypes.get_errno(), "renameat2 failed")
            self.swaps += 1

    def __enter__(self) -> Swapper:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()


@pytest.fixture
def places(tmp_path: Path) -> tuple[Path, Path]:
    root, outside = tmp_path / "jail", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "x").write_text(SECRET)
    return root, outside


async def race(root: Path, outside: Path, name: str, args: dict[str, str]) -> list[str]:
    """The texts of the calls that succeeded over ITERATIONS calls while racedir flips."""
    tool, texts = fs(root)[name], []
    with Swapper(root, outside) as swapper:
        for _ in range(ITERATIONS):
            with contextlib.suppress(ToolError, OSError):
                texts.append((await tool.execute(args, ToolContext())).text)
    assert swapper.swaps > 0
    return texts


async def test_a_swapped_folder_never_leaks_a_read(
    places: tuple[Path, Path], resolver: str
) -> None:
    texts = await race(*places, "read_file", {"path": "racedir/x"})
    assert not [t for t in texts if SECRET in t]
    assert [t for t in texts if "inside" in t]  # the race really ran both ways


async def test_a_swapped_folder_never_takes_a_write(
    places: tuple[Path, Path], resolver: str
) -> None:
    _, outside = places
    texts = await race(*places, "write_file", {"path": "racedir/new.txt", "content": "n"})
    assert sorted(p.name for p in outside.iterdir()) == ["x"]  # nothing created outside
    assert (outside / "x").read_text() == SECRET and texts


async def test_fifos_are_refused_before_any_read(places: tuple[Path, Path], resolver: str) -> None:
    root, _ = places
    for n in range(10):
        os.mkfifo(root / f"管道{n}")
    os.symlink(root / "管道0", root / "to_fifo")
    tools = fs(root)
    calls = [tools["read_file"].execute({"path": f"管道{n}"}, ToolContext()) for n in range(10)]
    calls.append(tools["read_file"].execute({"path": "to_fifo"}, ToolContext()))
    edit = {"path": "管道1", "old_text": "a", "new_text": "b"}
    calls.append(tools["edit_file"].execute(edit, ToolContext()))
    outcomes = await asyncio.wait_for(asyncio.gather(*calls, return_exceptions=True), 60)
    assert all(isinstance(o, PermissionDenied) for o in outcomes), outcomes
    assert all("not a regular file (other)" in str(o) for o in outcomes)
    (root / "ok.md").write_text("fine")
    assert "fine" in (await tools["read_file"].execute({"path": "ok.md"}, ToolContext())).text
    found = await tools["search_files"].execute({"contains": "fine"}, ToolContext())
    assert "ok.md:1: fine" in found.text  # the FIFOs were skipped, not opened


async def test_missing_files_are_named_relative_to_the_jail(
    places: tuple[Path, Path], resolver: str
) -> None:
    root, _ = places
    tools = fs(root)
    (root / "docs").mkdir()
    for path in ("hello.md", str(root / "hello.md"), "docs/../hello.md"):
        with pytest.raises(ToolError) as caught:
            await tools["read_file"].execute({"path": path}, ToolContext())
        assert str(caught.value).endswith("no such file: hello.md"), str(caught.value)
    with pytest.raises(ToolError, match=r"no such file: docs/缺失/a\.md"):
        await tools["file_info"].execute({"path": "docs/缺失/a.md"}, ToolContext())
