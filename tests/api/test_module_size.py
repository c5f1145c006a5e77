"""No module is over `MAX_MODULE_LINES`: past that a file holds more than one responsibility and
is split by them (as the SQLite index's keyword ranking and the loop's stream reading were)."""

from __future__ import annotations

from tests.api.source_tree import modules

MAX_MODULE_LINES = 500


def test_no_module_is_over_five_hundred_lines() -> None:
    sizes = {
        name: len(module.path.read_text(encoding="utf-8").splitlines())
        for name, module in modules().items()
    }
    assert {name: n for name, n in sizes.items() if n > MAX_MODULE_LINES} == {}
