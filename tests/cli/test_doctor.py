"""`toolweave doctor` against real pieces: the weather example started as a stdio MCP server,
a server whose command fails, a loopback OpenAI-compatible endpoint and a closed port."""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.agent.fake_openai import FakeOpenAI, Reply
from toolweave.cli import app
from toolweave.host.doctor import diagnose
from toolweave.tools import sandbox as sandbox_module

EXAMPLES = Path(__file__).parents[2] / "examples"


def _config(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "toolweave.toml"
    path.write_text(body, encoding="utf-8")
    return path


def _servers(**servers: list[str]) -> str:
    lines = []
    for name, command in servers.items():
        lines += [f"[mcpServers.{name}]", f"command = {json.dumps(command[0])}"]
        lines.append(f"args = {json.dumps(command[1:])}")
    return "\n".join(lines) + "\n"


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_a_healthy_setup_passes(tmp_path: Path) -> None:
    weather = [sys.executable, str(EXAMPLES / "weather_server.py")]
    serve = f'[serve]\nname = "诊断"\ndata_dir = "{tmp_path / "data"}"\n'
    path = _config(tmp_path, serve + _servers(weather=weather))
    with FakeOpenAI([Reply("hi")]) as server:
        findings = await diagnose(path, model=f"openai-compat:{server.base_url}#fake")
    by = {f.check: f for f in findings}
    assert by["python"].status == "ok"
    assert by["config"].status == "ok" and str(path) in by["config"].detail
    assert by["mcp weather"].status == "ok"
    assert "celsius_to_fahrenheit" in by["mcp weather"].detail
    assert "get_weather" in by["mcp weather"].detail
    assert by["model"].status == "ok" and server.base_url in by["model"].detail
    assert by["extra otel"].status == "ok"
    for provider in ("builtins", "memory", "kb", "notes", "skills"):  # what serve offers
        assert by[f"provider {provider}"].status == "ok"
    assert by["embedder"].status == "ok" and "256 dims" in by["embedder"].detail  # WordLlama
    assert by["sandbox"].status == "ok" and "bubblewrap" in by["sandbox"].detail
    assert by["extra memory"].status == "ok" and by["extra kb"].status == "ok"
    for kind in ("docx", "html", "pdf"):  # documents the doctor made itself, text intact
        assert by[f"conversion {kind}"].status == "ok", by[f"conversion {kind}"]
    assert not [f for f in findings if f.status == "fail"]
    assert not (tmp_path / "data").exists()  # the doctor created nothing in the data dir


async def test_a_damaged_store_fails_its_provider_in_one_line(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "kb.db").write_bytes(b"not a database\n" * 100)
    (data / "query_log.db").write_bytes(b"not a database\n" * 100)
    path = _config(tmp_path, f'[serve]\ndata_dir = "{data}"\n')
    by = {f.check: f for f in await diagnose(path)}
    kb = by["provider kb"]
    assert kb.status == "fail" and f"{data / 'kb.db'} is damaged" in kb.detail
    assert "mv " in kb.detail and "\n" not in kb.detail
    assert by["provider memory"].status == "ok"
    assert by["query log"].status == "warn" and "query_log.db is damaged" in by["query log"].detail
    assert sorted(p.name for p in data.iterdir()) == ["kb.db", "query_log.db"]


async def test_a_missing_sandbox_fails_when_the_shell_is_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = (str(tmp_path / "bwrap"),)  # bwrap is found at fixed paths, never on PATH
    monkeypatch.setattr(sandbox_module, "BWRAP_PATHS", missing)
    shell_on = _config(tmp_path, "[builtins]\nshell = true\n")
    by = {f.check: f for f in await diagnose(shell_on)}
    assert by["sandbox"].status == "fail" and "apt-get install bubblewrap" in by["sandbox"].detail
    off = _config(tmp_path, '[builtins]\nshell = true\nsandbox = "off"\n')
    by = {f.check: f for f in await diagnose(off)}
    assert by["sandbox"].status == "warn" and "unsandboxed" in by["sandbox"].detail


async def test_failures_say_what_to_fix(tmp_path: Path) -> None:
    crash = [sys.executable, "-c", "import sys; sys.exit(3)"]
    path = _config(tmp_path, '[serve]\nproviders = ["demo", "nope"]\n' + _servers(broken=crash))
    findings = await diagnose(
        path, model=f"openai-compat:http://127.0.0.1:{_closed_port()}/v1#m", timeout=10
    )
    by = {f.check: f for f in findings}
    assert by["mcp broken"].status == "fail"
    assert "[mcpServers.broken]" in by["mcp broken"].fix
    assert by["model"].status == "fail" and "unreachable" in by["model"].detail
    assert "URL" in by["model"].fix
    assert by["provider demo"].status == "ok"
    assert (
        by["provider nope"].status == "fail"
        and "unknown provider 'nope'" in by["provider nope"].detail
    )


def test_the_command_prints_fixes_and_exits_non_zero(tmp_path: Path) -> None:
    path = _config(tmp_path, "[serve]\nport = 70000\n")
    ran = CliRunner().invoke(app, ["doctor", "--config", str(path)], env={"COLUMNS": "200"})
    assert ran.exit_code == 1, ran.output
    assert f"{path}:2: [serve].port" in ran.output
    assert "fix: correct the key named above" in ran.output
    assert "1 failure(s)" in ran.output
    fine = _config(tmp_path, "[serve]\nport = 9000\n")
    ran = CliRunner().invoke(app, ["doctor", "-c", str(fine)], env={"COLUMNS": "200"})
    assert ran.exit_code == 0, ran.output
    assert "0 failure(s)" in ran.output and "no model given" in ran.output


async def test_the_model_check_sends_the_adapters_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """A loopback endpoint that wants a key: the right key passes, a wrong one is named."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            return

        def do_GET(self) -> None:
            ok = self.headers.get("authorization") == "Bearer " + "钥匙-k1".encode().hex()
            self.send_response(200 if ok and self.path == "/v1/models" else 401)
            self.send_header("content-length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    model = f"openai-compat:http://127.0.0.1:{server.server_address[1]}/v1#m"
    try:
        monkeypatch.setenv("OPENAI_COMPAT_API_KEY", "钥匙-k1".encode().hex())
        good = {f.check: f for f in await diagnose(None, model=model)}["model"]
        monkeypatch.setenv("OPENAI_COMPAT_API_KEY", "wrong")
        bad = {f.check: f for f in await diagnose(None, model=model)}["model"]
    finally:
        server.shutdown()
        server.server_close()
    assert good.status == "ok" and "HTTP 200" in good.detail
    assert bad.status == "fail" and "rejected the API key (HTTP 401)" in bad.detail
