"""The stdio transport in real processes: protocol on stdout only, logs and prints on stderr,
piped input answered before exit, and a cold-start path that imports nothing heavy."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"

NOISY_SERVER = """
import logging, sys
from toolweave.mcp import MCPServer

logging.basicConfig(level=logging.INFO, stream=sys.stdout)  # a careless server logs to stdout
server = MCPServer("noisy")


@server.tool
def chatty(text: str) -> str:
    print("debug print from a tool")
    logging.getLogger("chatty").warning("a log line")
    sys.stdout.write("raw write to sys.stdout\\n")
    return text.upper()


server.run()
"""


def test_tool_prints_and_logs_never_reach_the_protocol_stream(tmp_path: Path) -> None:
    script = tmp_path / "noisy.py"
    script.write_text(NOISY_SERVER)
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "chatty", "arguments": {"text": "hi"}},
    }
    out = subprocess.run(
        [sys.executable, str(script)],
        input=(json.dumps(call) + "\n").encode(),
        capture_output=True,
        timeout=60,
        check=True,
    )
    lines = out.stdout.decode().splitlines()
    answers = [json.loads(line) for line in lines]  # every stdout line is a JSON-RPC message
    assert answers == [
        {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "HI"}]}}
    ]
    stderr = out.stderr.decode()
    assert "debug print from a tool" in stderr and "a log line" in stderr
    assert "raw write to sys.stdout" in stderr


def test_server_import_stays_light() -> None:
    code = (
        "import sys, toolweave.mcp.server;"
        "heavy = [m for m in ('pydantic', 'starlette', 'uvicorn', 'httpx') if m in sys.modules];"
        "print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_stdio_answers_piped_requests_then_exits(tmp_path: Path) -> None:
    requests = tmp_path / "requests.jsonl"
    calls = [
        {
            "jsonrpc": "2.0",
            "id": i,
            "method": "tools/call",
            "params": {"name": name, "arguments": a},
        }
        for i, (name, a) in enumerate(
            [("celsius_to_fahrenheit", {"celsius": 0}), ("get_weather", {"city": "上海"})], 1
        )
    ]
    requests.write_text("\n".join(json.dumps(c) for c in calls) + "\nnot json\n")
    with requests.open("rb") as stdin:
        out = subprocess.run(
            [sys.executable, str(EXAMPLES / "weather_server.py")],
            stdin=stdin,
            capture_output=True,
            timeout=60,
            check=True,
        )
    answers = {m["id"]: m for m in map(json.loads, out.stdout.decode().splitlines())}
    assert answers[1]["result"]["structuredContent"] == {"result": 32.0}
    assert answers[2]["result"]["structuredContent"]["city"] == "上海"
    assert answers[None]["error"]["code"] == -32700


BIG_SERVER = """
from toolweave.mcp import MCPServer

server = MCPServer("big")


@server.tool
def big(n: int) -> str:
    return "x" * n


server.run()
"""


def test_large_answers_survive_a_non_blocking_stdout_pipe(tmp_path: Path) -> None:
    script = tmp_path / "big.py"
    script.write_text(BIG_SERVER)
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)  # some hosts hand servers a non-blocking pipe
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "big", "arguments": {"n": 2_000_000}},  # far beyond a pipe's 64 KiB
    }
    proc = subprocess.Popen(
        [sys.executable, str(script)],
        stdin=subprocess.PIPE,
        stdout=write_end,
        stderr=subprocess.DEVNULL,
    )
    os.close(write_end)
    assert proc.stdin is not None
    proc.stdin.write((json.dumps(call) + "\n").encode())
    proc.stdin.close()
    with os.fdopen(read_end, "rb") as stdout:
        data = stdout.read()
    assert proc.wait(timeout=60) == 0
    (answer,) = [json.loads(line) for line in data.splitlines()]
    assert answer["result"]["content"][0]["text"] == "x" * 2_000_000


def oversize_then_valid(limit: int) -> bytes:
    big = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "get_weather", "arguments": {"city": "北" * limit}},
    }
    fine = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "get_weather", "arguments": {"city": "上海"}},
    }
    return (json.dumps(big) + "\n" + json.dumps(fine) + "\n").encode()


@pytest.mark.parametrize("through", ["pipe", "file"])
def test_a_line_over_the_limit_fails_alone_and_the_server_goes_on(
    tmp_path: Path, through: str
) -> None:
    toolweave = Path(sys.executable).with_name("toolweave")
    (tmp_path / "toolweave.toml").write_text(
        f'[serve]\nproviders = ["demo"]\nmax_body_bytes = 4096\ndata_dir = "{tmp_path / "d"}"\n'
    )
    data = oversize_then_valid(4096)
    command = [str(toolweave), "serve", "--stdio", "-c", "toolweave.toml"]
    if through == "pipe":
        out = subprocess.run(command, input=data, capture_output=True, timeout=60, cwd=tmp_path)
    else:
        (tmp_path / "in.jsonl").write_bytes(data)
        with (tmp_path / "in.jsonl").open("rb") as stdin:
            out = subprocess.run(
                command, stdin=stdin, capture_output=True, timeout=60, cwd=tmp_path
            )
    assert out.returncode == 0, out.stderr.decode()[-500:]
    answers = {m["id"]: m for m in map(json.loads, out.stdout.decode().splitlines())}
    assert answers[None]["error"]["code"] == -32600
    assert "larger than max_line_bytes (4096 bytes)" in answers[None]["error"]["message"]
    assert 1 not in answers
    assert answers[2]["result"]["structuredContent"]["city"] == "上海"
