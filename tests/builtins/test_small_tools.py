"""time, todo_write, http_api_tool, web_search_tool and the configuration tools."""

from __future__ import annotations

import json
import sys
from datetime import datetime
from pathlib import Path

import pytest

from tests.builtins.fake_http import FakeServer
from toolweave.builtins import (
    AgentConfig,
    ConfigKey,
    TodoStore,
    config_tools,
    http_api_tool,
    time_tool,
    todo_tool,
    web_search_tool,
)
from toolweave.tools import InvalidArguments, ToolContext


async def test_time_in_utc_and_named_zones() -> None:
    tool = time_tool()
    utc = (await tool.execute({}, ToolContext())).structured
    shanghai = (await tool.execute({"timezone": "Asia/Shanghai"}, ToolContext())).structured
    assert utc["iso"].endswith("+00:00") and shanghai["iso"].endswith("+08:00")
    assert datetime.fromisoformat(shanghai["iso"]).strftime("%A") == shanghai["weekday"]
    with pytest.raises(InvalidArguments, match="not an IANA time zone"):
        await tool.execute({"timezone": "Mars/Olympus"}, ToolContext())


@pytest.mark.parametrize("zone", ["x" * 300, "America", "Asia/", "../../etc/passwd", "a\x00b"])
async def test_a_bad_time_zone_names_no_host_path(zone: str) -> None:
    """Issue 32, item 21: a too long name or a folder of the zone database made an OSError
    whose text named the interpreter's tzdata path."""
    with pytest.raises(InvalidArguments) as info:
        await time_tool().execute({"timezone": zone}, ToolContext())
    message = str(info.value)
    assert "not an IANA time zone" in message and len(message) < 300
    assert sys.prefix not in message and "zoneinfo" not in message
    assert "site-packages" not in message


async def test_todo_write_replaces_per_session_and_validates() -> None:
    store = TodoStore()
    tool = todo_tool(store, max_items=3, max_item_chars=20)
    alice, bob = ToolContext(session_id="alice"), ToolContext(session_id="bob")
    items = [
        {"content": "写测试 write tests", "status": "in_progress"},
        {"content": "Run ruff", "status": "pending"},
    ]
    saved = await tool.execute({"todos": items}, alice)
    assert "2 items, 0 completed" in saved.text and "[in_progress] 写测试 write tests" in saved.text
    await tool.execute({"todos": [{"content": "other", "status": "completed"}]}, bob)
    snapshot = store.get("alice")
    assert [i.content for i in snapshot.unfinished] == ["写测试 write tests", "Run ruff"]
    assert store.get("bob").unfinished == ()
    too_busy = [
        {"content": "a", "status": "in_progress"},
        {"content": "b", "status": "in_progress"},
    ]
    for todos, why in [
        (too_busy, "mark exactly one in_progress"),
        ([{"content": "x", "status": "pending"}] * 4, "at most 3"),
        ([{"content": "x" * 21, "status": "pending"}], "at most 20"),
        ([{"content": "   ", "status": "pending"}], "content is empty"),
        ([{"content": "x", "status": "done"}], "status"),
    ]:
        with pytest.raises(InvalidArguments, match=why):
            await tool.execute({"todos": todos}, alice)
    assert len(store.get("alice").items) == 2  # a refused call changes nothing
    cleared = await tool.execute({"todos": []}, alice)
    assert cleared.text == "todo list cleared" and store.get("alice").items == ()


MEME_ANSWER = {
    "data": [
        {"images": {"fixed_width": {"url": "https://media.example/1.gif"}}},
        {"images": {"fixed_width": {"url": "https://media.example/2.gif"}}},
        {"images": {}},
    ]
}


async def test_http_api_tool_fills_the_template_and_extracts(http_server: FakeServer) -> None:
    http_server.route("/v1/stickers/search", MEME_ANSWER)
    template = f"{http_server.url}/v1/stickers/search?api_key=${{key}}&q=${{msg}}&limit=${{num}}"
    meme = http_api_tool(
        "meme", "Find sticker GIFs", template, "data", "images.fixed_width.url", api_key="k&1"
    )
    result = await meme.execute({"msg": "开心 happy", "num": 2}, ToolContext())
    assert "https://media.example/1.gif\nhttps://media.example/2.gif" in result.text
    sent = http_server.requests[0].target
    assert "api_key=k%261" in sent and "q=%E5%BC%80%E5%BF%83%20happy" in sent and "limit=2" in sent
    assert meme.name == "meme" and meme.description == "Find sticker GIFs"


async def test_http_api_tool_without_its_key_gives_an_instruction(http_server: FakeServer) -> None:
    http_server.route("/search", MEME_ANSWER)
    meme = http_api_tool(
        "meme",
        "Find stickers",
        f"{http_server.url}/search?key=${{key}}&q=${{msg}}",
        "data",
        "images.fixed_width.url",
        key_setting="[builtins.meme].api_key",
    )
    result = await meme.execute({"msg": "cat"}, ToolContext())
    assert result.is_error and "[builtins.meme].api_key" in result.text
    assert http_server.requests == []  # never sent upstream for a bare 401
    with pytest.raises(ValueError, match=r"\$\{msg\}"):
        http_api_tool("x", "x", "https://api.example/?q=1", "data", "url")


async def test_http_api_tool_reports_a_wrong_list_path(http_server: FakeServer) -> None:
    http_server.route("/search", {"results": []})
    tool = http_api_tool("find", "d", f"{http_server.url}/search?q=${{msg}}", "data", "url")
    with pytest.raises(Exception, match="no list at 'data'"):
        await tool.execute({"msg": "x"}, ToolContext())


async def test_web_search_tavily_and_jina_styles(http_server: FakeServer) -> None:
    http_server.route(
        "/search",
        {"results": [{"title": "通义千问 Qwen", "url": "https://qwen.example", "content": "LLM"}]},
    )
    http_server.route(
        "/",
        {"data": [{"title": "Jina", "url": "https://jina.example", "description": "搜索"}]},
    )
    tavily = web_search_tool("tavily", "tv-key", base_url=http_server.url)
    jina = web_search_tool("jina", "jn-key", base_url=http_server.url)
    first = await tavily.execute({"query": "千问", "count": 3}, ToolContext())
    second = await jina.execute({"query": "jina 搜索"}, ToolContext())
    assert "通义千问 Qwen\nhttps://qwen.example\nLLM" in first.text
    assert "Jina\nhttps://jina.example\n搜索" in second.text
    post, get = http_server.requests
    assert post.method == "POST" and json.loads(post.body) == {"query": "千问", "max_results": 3}
    assert post.headers["authorization"] == "Bearer tv-key"
    assert get.method == "GET" and get.headers["authorization"] == "Bearer jn-key"
    missing = await web_search_tool("tavily").execute({"query": "x"}, ToolContext())
    assert missing.is_error and "api_key" in missing.text


@pytest.fixture
def agent_config(tmp_path: Path) -> AgentConfig:
    return AgentConfig(
        tmp_path / "settings.json",
        [
            ConfigKey("model", "Model name", default="openai:gpt-4o"),
            ConfigKey("max_turns", "Turns per run", default=10, kind=int),
            ConfigKey("api_key", "Provider key", sensitive=True),
        ],
        reloaders={"hooks.json": lambda path: reloaded.append(path.name)},
    )


reloaded: list[str] = []


async def test_config_get_set_masks_and_refuses_unknown_keys(
    agent_config: AgentConfig, tmp_path: Path
) -> None:
    get, set_, _, _ = {t.name: t for t in config_tools(agent_config)}.values()
    listing = await get.execute({}, ToolContext())
    assert (
        "max_turns = 10  # Turns per run" in listing.text and "api_key = (not set)" in listing.text
    )
    await set_.execute({"key": "api_key", "value": "sk-secret"}, ToolContext())
    shown = await set_.execute({"key": "max_turns", "value": "25"}, ToolContext())
    assert "max_turns = 25 saved" in shown.text and "restart" in shown.text
    assert "sk-secret" not in (await get.execute({"key": "api_key"}, ToolContext())).text
    assert json.loads((tmp_path / "settings.json").read_text())["api_key"] == "sk-secret"
    with pytest.raises(InvalidArguments, match="not a registered setting"):
        await set_.execute({"key": "shell", "value": "true"}, ToolContext())
    with pytest.raises(InvalidArguments, match="must be JSON of a int"):
        await set_.execute({"key": "max_turns", "value": "many"}, ToolContext())
    assert agent_config.get("max_turns") == 25


async def test_config_files_validate_json_write_atomically_and_reload(
    agent_config: AgentConfig, tmp_path: Path
) -> None:
    tools = {t.name: t for t in config_tools(agent_config)}
    hooks = json.dumps({"hooks": {"PreToolUse": []}, "说明": "中文"}, ensure_ascii=False)
    saved = await tools["config_file_set"].execute(
        {"file": "hooks.json", "content": hooks}, ToolContext()
    )
    assert "reloaded" in saved.text and reloaded[-1] == "hooks.json"
    later = await tools["config_file_set"].execute(
        {"file": "mcp.json", "content": '{"mcpServers": {}}'}, ToolContext()
    )
    assert "restarts" in later.text
    with pytest.raises(InvalidArguments, match="not valid JSON"):
        await tools["config_file_set"].execute(
            {"file": "hooks.json", "content": '{"hooks": '}, ToolContext()
        )
    assert (tmp_path / "hooks.json").read_text(encoding="utf-8") == hooks  # left unchanged
    with pytest.raises(InvalidArguments, match="not an extension file"):
        await tools["config_file_get"].execute({"file": "../settings.json"}, ToolContext())
    read = await tools["config_file_get"].execute({"file": "hooks.json"}, ToolContext())
    assert "中文" in read.text
    assert names(tmp_path) == ["hooks.json", "mcp.json"]  # no temporary file left behind


def names(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())
