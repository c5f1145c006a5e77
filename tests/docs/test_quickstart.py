"""docs/quickstart.md runs as written: every Python block, in order, with `mcp.json` written
from its JSON block, against a loopback OpenAI-compatible server standing in for the provider
(the real `OpenAIChatModel` speaks to it over HTTP) and the repository's weather MCP server
started over stdio from that `mcp.json`."""

from __future__ import annotations

import os
import re
import runpy
import shutil
import sys
from pathlib import Path

import pytest

from tests.agent.fake_openai import FakeOpenAI, Reply

ROOT = Path(__file__).resolve().parents[2]
TEXT = (ROOT / "docs" / "quickstart.md").read_text(encoding="utf-8")
PYTHON = re.findall(r"```python\n(.*?)```", TEXT, re.DOTALL)
JSON = re.findall(r"```json\n(.*?)```", TEXT, re.DOTALL)


def test_the_quickstart_has_its_four_steps() -> None:
    assert len(PYTHON) == 3 and len(JSON) == 1
    assert "pip install './toolweave[cli]'" in TEXT and "make dist" in TEXT  # not on PyPI


def test_every_block_runs_against_a_loopback_provider(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "examples").mkdir()
    shutil.copy(ROOT / "examples" / "weather_server.py", tmp_path / "examples")
    (tmp_path / "mcp.json").write_text(JSON[0], encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    # `python` in mcp.json is this interpreter, as it would be in the user's virtualenv.
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    replies = [
        Reply(None, [("call_1", "get_weather", {"city": "Beijing"})]),
        Reply("Beijing is sunny at 30°C."),
        Reply(None, [("call_2", "weather__get_weather", {"city": "北京"})]),
        Reply("北京今天晴, 30°C。"),
    ]
    with FakeOpenAI(replies) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        outputs = []
        for index, block in enumerate(PYTHON):
            script = tmp_path / f"quickstart_{index}.py"
            script.write_text(block, encoding="utf-8")
            runpy.run_path(str(script), run_name="__main__")
            outputs.append(capsys.readouterr().out.splitlines())
    assert outputs[0] == ['The city name, e.g. "Beijing" or "北京".', "晴, 30°C"]
    assert outputs[1] == ["Beijing is sunny at 30°C.", "['get_weather']"]
    assert outputs[2] == ["北京今天晴, 30°C。", "['weather__get_weather']"]
    # The MCP tool really ran: its result reached the model in the last request.
    tool_messages = [m for m in server.requests[-1]["messages"] if m["role"] == "tool"]
    assert "晴" in tool_messages[-1]["content"]
    assert server.requests[0]["model"] == "gpt-4o-mini"
