"""`toolweave tools list` (what `make run` shows) and the demo tools it lists."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from toolweave.cli import app
from toolweave.tools import ExecutionFailed, InvalidArguments
from toolweave.tools.demo import demo_registry

runner = CliRunner()


def test_tools_list_table() -> None:
    result = runner.invoke(app, ["tools", "list"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    for name in ("calculate", "celsius_to_fahrenheit", "get_weather"):
        assert name in result.output
    assert "expression*, precision" in result.output
    assert "3 tools" in result.output


def test_tools_list_json_is_valid_sorted_and_matches_the_registry() -> None:
    result = runner.invoke(app, ["tools", "list", "--json"])
    assert result.exit_code == 0, result.output
    defs = json.loads(result.output)
    names = [d["name"] for d in defs]
    assert names == sorted(names) == ["calculate", "celsius_to_fahrenheit", "get_weather"]
    assert all(set(d) == {"name", "description", "parameters"} for d in defs)
    expected = [
        {"name": d.name, "description": d.description, "parameters": d.parameters}
        for d in demo_registry().definitions()
    ]
    assert defs == expected
    assert runner.invoke(app, ["tools", "list", "--json"]).output == result.output


async def test_demo_tools_work() -> None:
    registry = demo_registry()
    weather = await registry.invoke("get_weather", {"city": "北京"})
    assert weather.ok and weather.result.structured["conditions"] == "sunny"
    unknown = await registry.invoke("get_weather", {"city": "Atlantis"})
    assert isinstance(unknown.error, ExecutionFailed) and "known cities" in unknown.error.message
    calc = await registry.invoke("calculate", '{"expression": "(3 + 4) * 2 / 7"}')
    assert calc.result.structured == 2.0
    unsafe = await registry.invoke("calculate", {"expression": "__import__('os')"})
    assert isinstance(unsafe.error, ExecutionFailed)
    bad_precision = await registry.invoke("calculate", {"expression": "1/3", "precision": 3})
    assert isinstance(bad_precision.error, InvalidArguments)
    fahrenheit = await registry.invoke("celsius_to_fahrenheit", {"celsius": 100})
    assert fahrenheit.result.structured == 212.0
