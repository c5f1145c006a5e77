"""Every example runs as a script: offline (its ScriptedModel reads the real tool results) and
against the loopback OpenAI-compatible server through the real `OpenAIChatModel`, where the
requests prove the tool results went back to the model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.agent.fake_openai import FakeOpenAI, Reply

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
AGENTS = {
    "weather_function_tools.py": "",
    "weather_langchain_style.py": "",
    "weather_mcp_agent.py": "weather__",
}
MEMBERS = [{"name": "研究员", "role": "调研要点。"}, {"name": "writer", "role": "Write it."}]
ANSWER = "北京现在 30°C（86°F），建议穿短袖，注意防晒。"


def _run(script: str, **env: str) -> str:
    environment = {k: v for k, v in os.environ.items() if k != "TOOLWEAVE_MODEL"} | env
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / script)],
        capture_output=True,
        text=True,
        timeout=120,
        env=environment,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("script", sorted(AGENTS))
def test_example_runs_offline(script: str) -> None:
    out = _run(script)
    assert out.strip().splitlines()[-1] == ANSWER
    if script == "weather_langchain_style.py":
        assert "get_weather - 查询指定城市的演示天气信息" in out
        assert '"celsius": {"description": "摄氏温度数值，例如 30.0。", "type": "number"}' in out


@pytest.mark.parametrize("script", sorted(AGENTS))
def test_example_runs_against_an_openai_compatible_server(script: str) -> None:
    prefix = AGENTS[script]
    replies = [
        Reply(None, [("call_1", f"{prefix}get_weather", {"city": "北京"})]),
        Reply(None, [("call_2", f"{prefix}celsius_to_fahrenheit", {"celsius": 30})]),
        Reply("30°C / 86°F: 穿短袖。"),
    ]
    with FakeOpenAI(replies) as server:
        out = _run(script, TOOLWEAVE_MODEL=f"openai-compat:{server.base_url}#fake")
    assert out.strip().splitlines()[-1] == "30°C / 86°F: 穿短袖。"
    sent = [t["function"]["name"] for t in server.requests[0]["tools"]]
    expected = [f"{prefix}celsius_to_fahrenheit", f"{prefix}get_weather", "read_result"]
    assert sent == sorted(expected)  # read_result: the agent's pager of long results
    tool_messages = [m for m in server.requests[2]["messages"] if m["role"] == "tool"]
    weather, converted = (m["content"] for m in tool_messages)
    assert "晴" in weather and "86" in converted
    assert json.dumps(server.requests[0]["messages"][-1]["content"], ensure_ascii=False).count(
        "北京"
    )


def test_weather_server_example_lists_its_tools_to_the_official_client() -> None:
    import asyncio

    from mcp.client import Client
    from mcp.client.stdio import StdioServerParameters

    async def listed() -> list[str]:
        params = StdioServerParameters(
            command=sys.executable, args=[str(EXAMPLES / "weather_server.py")]
        )
        async with Client(params, mode="auto") as client:
            return sorted(t.name for t in (await client.list_tools()).tools)

    assert asyncio.run(listed()) == ["celsius_to_fahrenheit", "get_weather"]


def test_skills_research_agent_offline() -> None:
    out = _run("skills_research_agent.py")
    lines = out.strip().splitlines()
    assert lines[0] == "tools: ['skill_read', 'skill_data', 'tavily_search']"
    assert "(https://langchain-ai.github.io/langgraph/)" in out
    assert lines[-1].startswith("uncertainty: 演示数据")


def test_skills_research_agent_against_an_openai_compatible_server() -> None:
    report = {
        "question": "LangGraph?",
        "findings": [{"claim": "状态化多智能体", "source": "https://example.org/langgraph"}],
        "uncertainty": "未核对日期",
    }
    replies = [
        Reply(None, [("c1", "skill_read", {"name": "web-research"})]),
        Reply(None, [("c2", "tavily_search", {"query": "LangGraph"})]),
        Reply(json.dumps(report, ensure_ascii=False)),  # native structured output
    ]
    with FakeOpenAI(replies) as server:
        out = _run("skills_research_agent.py", TOOLWEAVE_MODEL=f"openai-compat:{server.base_url}#m")
    assert "- 状态化多智能体 (https://example.org/langgraph)" in out
    first = sorted(t["function"]["name"] for t in server.requests[0]["tools"])
    after = sorted(t["function"]["name"] for t in server.requests[1]["tools"])
    assert "tavily_search" in first and "skill_read" in first
    # Once web-research is active its allowed-tools are pre-approved; nothing is hidden.
    assert after == first
    assert "web-research" in json.dumps(server.requests[0]["messages"], ensure_ascii=False)
    assert server.requests[2]["response_format"]["type"] == "json_schema"


def test_gated_shell_agent_offline() -> None:
    out = _run("gated_shell_agent.py")
    assert "ok 'ls': exit code 0" in out
    # The sandbox lists its read-only placeholders (`HEAD`: a workspace without .git cannot be
    # made a repository the user's git would later trust) beside what the command made.
    made = next(line for line in out.splitlines() if line.startswith("ok 'touch notes.md && ls'"))
    assert "exit code 0" in made and "notes.md" in made
    assert "blocked {'command': 'rm -rf .'}: Tool 'bash' was blocked (rules)" in out
    assert "asked the approver about: ['touch notes.md && ls']" in out
    assert "files: ['notes.md']" in out


def test_gated_shell_agent_against_an_openai_compatible_server() -> None:
    replies = [
        Reply(None, [("c1", "bash", {"command": "touch a.txt"})]),
        Reply(None, [("c2", "bash", {"command": "rm -r ."})]),
        Reply("完成。"),
    ]
    with FakeOpenAI(replies) as server:
        out = _run("gated_shell_agent.py", TOOLWEAVE_MODEL=f"openai-compat:{server.base_url}#m")
    assert "files: ['a.txt']" in out and out.strip().endswith("完成。")
    tool_messages = [m for m in server.requests[2]["messages"] if m["role"] == "tool"]
    assert "denied by 'Bash(rm -r *)'" in tool_messages[-1]["content"]  # the model reads why


def test_memory_agent_offline() -> None:
    out = _run("memory_agent.py")
    assert "第一次: 好的，我记住了。" in out
    assert "第二次: 给张三准备乌龙茶（不加糖），并避开花生。" in out  # recalled, not retold
    assert "'semantic': {'count': 1" in out


def test_memory_agent_against_an_openai_compatible_server() -> None:
    fact = {"action": "add", "content": "张三喜欢乌龙茶", "memory_type": "semantic"}
    replies = [Reply(None, [("m1", "memory", fact)]), Reply("记住了。"), Reply("准备乌龙茶。")]
    with FakeOpenAI(replies) as server:
        out = _run("memory_agent.py", TOOLWEAVE_MODEL=f"openai-compat:{server.base_url}#m")
    assert "第二次: 准备乌龙茶。" in out
    second_run = json.dumps(server.requests[2]["messages"], ensure_ascii=False)
    assert "张三喜欢乌龙茶" in second_run  # memory_context put the stored fact in the prompt


def test_kb_qa_agent_offline() -> None:
    out = _run("kb_qa_agent.py")
    assert out.strip() == "默认端口是 8765。来源：服务手册 > toolweave 服务手册 > 端口"


def test_kb_qa_agent_against_an_openai_compatible_server() -> None:
    replies = [
        Reply(None, [("k1", "kb_search", {"query": "默认端口", "k": 2})]),
        Reply("8765（服务手册 > 端口）"),
    ]
    with FakeOpenAI(replies) as server:
        out = _run("kb_qa_agent.py", TOOLWEAVE_MODEL=f"openai-compat:{server.base_url}#m")
    assert out.strip() == "8765（服务手册 > 端口）"
    (passages,) = [m for m in server.requests[1]["messages"] if m["role"] == "tool"]
    assert "8765" in passages["content"] and "端口" in passages["content"]


def test_subagent_and_schedule_offline() -> None:
    out = _run("subagent_and_schedule.py")
    assert "subagent: [subagent task: success," in out and "北京晴，12°C。" in out
    assert "main: 已汇总。" in out
    assert "delivered: [('chat-42', '今日没有未处理的事故。')]" in out  # fired once, at 09:30
    assert "runs: ['success']" in out


def test_subagent_and_schedule_against_an_openai_compatible_server() -> None:
    replies = [
        Reply(None, [("s1", "subagent_run", {"task": "查北京天气"})]),  # the main agent
        Reply(None, [("w1", "get_weather", {"city": "北京"})]),  # the subagent
        Reply("晴，12°C。"),  # the subagent's answer
        Reply("北京晴。"),  # the main agent's answer
        Reply("无事故。"),  # the scheduled run
    ]
    with FakeOpenAI(replies) as server:
        out = _run("subagent_and_schedule.py", TOOLWEAVE_MODEL=f"openai-compat:{server.base_url}#m")
    assert "晴，12°C。" in out and "main: 北京晴。" in out
    assert "delivered: [('chat-42', '无事故。')]" in out
    subagent_first = server.requests[1]["messages"]
    assert not any("请让助手" in json.dumps(m, ensure_ascii=False) for m in subagent_first)


def test_team_run_offline() -> None:
    out = _run("team_run.py")
    assert "Team results (2 members):" in out
    assert "member 研究员 (success): 要点：支持全国城市；结果含温度与穿衣建议。" in out
    assert (
        "member writer (success): 天气查询现已上线，支持全国城市。查询结果附带温度和穿衣建议。"
        in out
    )
    assert out.index("member 研究员") < out.index("member writer")  # in the order given
    assert out.strip().splitlines()[-1].startswith("final: 发布说明：")


def test_team_run_against_an_openai_compatible_server() -> None:
    replies = [
        Reply(None, [("t1", "team_run", {"task": "写发布说明", "members": MEMBERS})]),  # lead
        Reply("要点 A。"),  # the two members run at once: either may get either answer
        Reply("要点 B。"),
        Reply("发布说明已完成。"),  # the lead's answer
    ]
    with FakeOpenAI(replies) as server:
        out = _run("team_run.py", TOOLWEAVE_MODEL=f"openai-compat:{server.base_url}#m")
    members = [line for line in out.splitlines() if line.startswith("member ")]
    assert [line.split(" (")[0] for line in members] == ["member 研究员", "member writer"]
    assert sorted(line.split(": ", 1)[1] for line in members) == ["要点 A。", "要点 B。"]
    assert out.strip().splitlines()[-1] == "final: 发布说明已完成。"
    member_requests = [json.dumps(r["messages"], ensure_ascii=False) for r in server.requests[1:3]]
    assert all("写发布说明" in m and "请组一个" not in m for m in member_requests)  # no history
    assert sorted("as 研究员:" in m for m in member_requests) == [False, True]  # each its role


def test_gated_shell_agent_when_bash_is_called_without_a_command() -> None:
    replies = [Reply(None, [("c1", "bash", {})]), Reply("没有命令。")]
    with FakeOpenAI(replies) as server:
        out = _run("gated_shell_agent.py", TOOLWEAVE_MODEL=f"openai-compat:{server.base_url}#m")
    assert ("error None:" in out or "blocked {}:" in out) and out.strip().endswith("没有命令。")
    assert "Traceback" not in out
