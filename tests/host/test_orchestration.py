"""`toolweave serve`: query-log rows, daily call quotas and slash commands as prompts, driven by
the official MCP SDK client over stdio; `toolweave log` prints what was served."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from toolweave.host import ToolHost, parse_config

TOOLWEAVE = Path(sys.executable).with_name("toolweave")
SOURCE = {"PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
"""The served process runs this checkout's code, whichever one the venv's script points at."""


def write_config(tmp_path: Path) -> Path:
    commands = tmp_path / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "weather.md").write_text(
        "---\ndescription: Weather report\nargument-hint: <city>\n---\n"
        "Report the weather in $ARGUMENTS, in Celsius and Fahrenheit.\n",
        encoding="utf-8",
    )
    (commands / "translate.md").write_text("把下面的话翻译成英文：$args", encoding="utf-8")
    (commands / "总结.md").write_text("总结：$args", encoding="utf-8")  # not an MCP name
    config = tmp_path / "toolweave.toml"
    config.write_text(
        "[serve]\n"
        'providers = ["demo"]\n'
        f'data_dir = "{tmp_path / "data"}"\n'
        "daily_calls_per_client = 2\n"
        f'commands = "{commands}"\n',
        encoding="utf-8",
    )
    return config


def toolweave_log(*args: str) -> str:
    out = subprocess.run(
        [str(TOOLWEAVE), "log", *args], capture_output=True, text=True, timeout=60, check=True
    )
    return out.stdout


async def test_served_calls_are_logged_capped_and_commands_are_prompts(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    params = StdioServerParameters(
        command=str(TOOLWEAVE), args=["serve", "--stdio", "-c", str(config)], cwd=tmp_path
    )
    async with Client(params, mode="auto") as client:
        first = await client.call_tool("calculate", {"expression": "6 * 7"})
        second = await client.call_tool("get_weather", {"city": "北京"})
        refused = await client.call_tool("calculate", {"expression": "1 + 1"})
        prompts = sorted(p.name for p in (await client.list_prompts()).prompts)
        weather = await client.get_prompt("weather", {"arguments": "Paris"})
        chinese = await client.get_prompt("translate", {"arguments": "早上好"})
    assert first.structured_content == {"result": 42.0} and not second.is_error
    assert refused.is_error
    text = refused.content[0].text  # type: ignore[union-attr]
    assert "daily calls quota exceeded" in text and "resets at" in text
    assert "(raise [serve].daily_calls_per_client in toolweave.toml to allow more)" in text
    assert prompts == ["translate", "weather"]
    message = weather.messages[0].content.text  # type: ignore[union-attr]
    assert message == "Report the weather in Paris, in Celsius and Fahrenheit."
    assert chinese.messages[0].content.text == "把下面的话翻译成英文：早上好"  # type: ignore[union-attr]

    out = await asyncio.to_thread(toolweave_log, "-c", str(config), "--json", "-n", "10")
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["status"] for r in rows] == ["stopped", "success", "success"]
    assert rows[0]["tools"] == ["calculate"] and "quota" in rows[0]["error"]
    assert rows[1]["input"].startswith("get_weather ") and "北京" in rows[1]["input"]
    assert {r["kind"] for r in rows} == {"tool"}
    assert len({r["session_id"] for r in rows}) == 1  # one client

    table = await asyncio.to_thread(toolweave_log, "-c", str(config))
    assert "get_weather" in table and "refused:quota" in table  # the outcome names the stage
    assert [r["outcome"] for r in rows] == ["refused:quota", "ran", "ran"]


async def test_namespaced_commands_are_prompts_with_dots(tmp_path: Path) -> None:
    commands = tmp_path / ".claude" / "commands"
    for folder, name, body in [
        ("a", "deploy", "Deploy app A to $ARGUMENTS."),
        ("b", "deploy", "Deploy app B to $ARGUMENTS."),
        ("c/d", "deploy", "Deploy C/D."),
        ("dev", "code-review", "---\ndescription: Review\n---\nReview $ARGUMENTS."),
        ("a.b", "deploy", "Deploy from a.b/."),  # `a.b:deploy` and `a:b:deploy` meet
        ("a/b", "deploy", "Deploy from a/b/."),
        ("部署", "deploy", "部署到 $ARGUMENTS。"),
    ]:
        (commands / folder).mkdir(parents=True, exist_ok=True)
        (commands / folder / f"{name}.md").write_text(body, encoding="utf-8")
    config = tmp_path / "toolweave.toml"
    config.write_text(
        f'[serve]\nproviders = ["demo"]\ndata_dir = "{tmp_path / "data"}"\n'
        f'commands = "{commands}"\n',
        encoding="utf-8",
    )
    params = StdioServerParameters(
        command=str(TOOLWEAVE),
        args=["serve", "--stdio", "-c", str(config)],
        cwd=tmp_path,
        env=SOURCE,
    )
    async with Client(params, mode="auto") as client:
        listed = (await client.list_prompts()).prompts
        a = await client.get_prompt("a.deploy", {"arguments": "生产环境"})
        nested = await client.get_prompt("c.d.deploy", {})
        met = await client.get_prompt("a.b.deploy", {})
    # `/a:deploy` is `a.deploy` (the spec has no `:`); of `/a.b:deploy` and `/a:b:deploy` the
    # first in name order is served; `/部署:deploy` is not an MCP name and is not served.
    assert sorted(p.name for p in listed) == [
        "a.b.deploy",
        "a.deploy",
        "b.deploy",
        "c.d.deploy",
        "code-review",
    ]
    assert a.messages[0].content.text == "Deploy app A to 生产环境."  # type: ignore[union-attr]
    assert nested.messages[0].content.text == "Deploy C/D."  # type: ignore[union-attr]
    assert met.messages[0].content.text == "Deploy from a.b/."  # type: ignore[union-attr]
    described = {p.name: p.description for p in listed}
    assert described["a.deploy"] == "The /a:deploy command."


def test_orchestration_keys_are_validated(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"\[serve\].daily_calls: Input should be greater than or"):
        parse_config({"serve": {"daily_calls": -1}})
    with pytest.raises(ValueError, match=r"\[serve\].query_log: Input should be a valid boolean"):
        parse_config({"serve": {"query_log": "yes"}})
    with pytest.raises(ValueError, match=r"\[serve\].commands: .* is neither a file"):
        ToolHost(parse_config({"serve": {"commands": str(tmp_path / "missing")}}))


def test_log_without_a_log_says_so(tmp_path: Path) -> None:
    config = tmp_path / "toolweave.toml"
    config.write_text(f'[serve]\ndata_dir = "{tmp_path / "empty"}"\n', encoding="utf-8")
    out = subprocess.run(
        [str(TOOLWEAVE), "log", "-c", str(config)], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0 and "no query log yet" in out.stdout
