"""Hooks with Claude Code semantics: real shell scripts (stdin payload, exit codes, JSON answers,
timeouts), an http hook on loopback, in-process hooks, failClosed and reload on change."""

from __future__ import annotations

import asyncio
import json
import stat
import threading
from collections.abc import AsyncIterator, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from tests.builtins.fake_http import drip
from toolweave.governance.hooks import HookConfigError, Hooks


def script(tmp_path: Path, name: str, body: str) -> str:
    path = tmp_path / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


def pre_tool(command: str, **extra: Any) -> dict[str, Any]:
    return {
        "PreToolUse": [
            {"matcher": "bash", "hooks": [{"type": "command", "command": command, **extra}]}
        ]
    }


PAYLOAD = {
    "session_id": "s1",
    "tool_name": "bash",
    "tool_input": {"command": "rm -rf 中文"},
    "tool_use_id": "c1",
}


async def test_command_hook_reads_the_payload_on_stdin_and_exit_2_blocks(tmp_path: Path) -> None:
    seen = tmp_path / "seen.json"
    hook = script(
        tmp_path, "guard.sh", f'cat > {seen}\necho "rm is not allowed here" >&2\nexit 2\n'
    )
    outcome = await Hooks(pre_tool(hook), cwd=tmp_path).run("PreToolUse", PAYLOAD)
    assert outcome.blocked and outcome.decision == "deny"
    assert outcome.reason == "rm is not allowed here"
    payload = json.loads(seen.read_text())
    assert payload["hook_event_name"] == "PreToolUse"
    assert payload["tool_input"] == {"command": "rm -rf 中文"}
    assert payload["session_id"] == "s1" and payload["cwd"] == str(tmp_path)


async def test_exit_0_passes_and_other_exits_are_non_blocking_errors(tmp_path: Path) -> None:
    ok = script(tmp_path, "ok.sh", "cat >/dev/null\nexit 0\n")
    broken = script(tmp_path, "broken.sh", "echo oops >&2\nexit 1\n")
    outcome = await Hooks(pre_tool(ok)).run("PreToolUse", PAYLOAD)
    assert not outcome.blocked and not outcome.errors
    outcome = await Hooks(pre_tool(broken)).run("PreToolUse", PAYLOAD)
    assert not outcome.blocked
    assert "exited with 1" in outcome.errors[0] and "oops" in outcome.errors[0]


async def test_matcher_selects_tools(tmp_path: Path) -> None:
    hook = script(tmp_path, "block.sh", "exit 2\n")
    config = {"PreToolUse": [{"matcher": "Write|Edit", "hooks": [{"command": hook}]}]}
    hooks = Hooks(config)
    assert not (await hooks.run("PreToolUse", PAYLOAD)).blocked
    assert (await hooks.run("PreToolUse", {**PAYLOAD, "tool_name": "Write"})).blocked
    assert not (await hooks.run("PreToolUse", {**PAYLOAD, "tool_name": "write"})).blocked
    shouting = Hooks({"PreToolUse": [{"matcher": "BASH", "hooks": [{"command": hook}]}]})
    assert not (await shouting.run("PreToolUse", {**PAYLOAD, "tool_name": "bash"})).blocked
    mcp = {"PreToolUse": [{"matcher": "mcp__github__.*", "hooks": [{"command": hook}]}]}
    outcome = await Hooks(mcp).run(
        "PreToolUse", {**PAYLOAD, "tool_name": "gh_create"}, names=("mcp__github__create",)
    )
    assert outcome.blocked


@pytest.mark.parametrize(
    ("answer", "decision", "blocked"),
    [
        (
            {
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "deny",
                    "permissionDecisionReason": "不行",
                }
            },
            "deny",
            True,
        ),
        (
            {
                "hookSpecificOutput": {
                    "permissionDecision": "ask",
                    "permissionDecisionReason": "check",
                }
            },
            "ask",
            False,
        ),
        ({"hookSpecificOutput": {"permissionDecision": "allow"}}, "allow", False),
        ({"decision": "block", "reason": "legacy"}, "deny", True),
        ({"decision": "approve"}, "allow", False),
    ],
)
async def test_json_answers(
    tmp_path: Path, answer: dict[str, Any], decision: str, blocked: bool
) -> None:
    hook = script(
        tmp_path,
        "json.sh",
        f"cat >/dev/null\ncat <<'EOF'\n{json.dumps(answer, ensure_ascii=False)}\nEOF\n",
    )
    outcome = await Hooks(pre_tool(hook)).run("PreToolUse", PAYLOAD)
    assert outcome.decision == decision
    assert outcome.blocked is blocked
    if decision == "deny":
        assert outcome.reason in ("不行", "legacy")


async def test_updated_input_context_and_continue_false(tmp_path: Path) -> None:
    answer = {
        "hookSpecificOutput": {"updatedInput": {"command": "ls"}, "additionalContext": "note"},
        "systemMessage": "hi",
    }
    rewrite = script(tmp_path, "rewrite.sh", f"cat <<'EOF'\n{json.dumps(answer)}\nEOF\n")
    seen = tmp_path / "second.json"
    second = script(tmp_path, "second.sh", f"cat > {seen}\n")
    config = {"PreToolUse": [{"hooks": [{"command": rewrite}, {"command": second}]}]}
    outcome = await Hooks(config).run("PreToolUse", PAYLOAD)
    assert outcome.updated_input == {"command": "ls"}
    assert outcome.context == ["note"] and outcome.system_messages == ["hi"]
    assert json.loads(seen.read_text())["tool_input"] == {"command": "ls"}  # later hooks see it
    stop = script(tmp_path, "stop.sh", """echo '{"continue": false, "stopReason": "quota"}'\n""")
    outcome = await Hooks({"Stop": [{"hooks": [{"command": stop}]}]}).run("Stop", {})
    assert outcome.stop and outcome.stop_reason == "quota" and outcome.blocked


async def test_plain_stdout_is_context_for_prompt_and_session_start(tmp_path: Path) -> None:
    hook = script(tmp_path, "ctx.sh", "cat >/dev/null\necho 今天是星期二\n")
    config = {
        "UserPromptSubmit": [{"hooks": [{"command": hook}]}],
        "SessionStart": [{"matcher": "startup", "hooks": [{"command": hook}]}],
    }
    hooks = Hooks(config)
    assert (await hooks.run("UserPromptSubmit", {"prompt": "hi"})).context == ["今天是星期二"]
    assert (await hooks.run("SessionStart", {"source": "startup"})).context == ["今天是星期二"]
    assert (await hooks.run("SessionStart", {"source": "resume"})).context == []
    outcome = await Hooks(pre_tool(hook)).run("PreToolUse", PAYLOAD)
    assert outcome.context == []  # plain stdout is not injected for tool events


async def test_timeout_is_a_non_blocking_error_unless_fail_closed(tmp_path: Path) -> None:
    hang = script(tmp_path, "hang.sh", "exec sleep 30\n")
    outcome = await Hooks(pre_tool(hang, timeout=0.3)).run("PreToolUse", PAYLOAD)
    assert not outcome.blocked and "timed out after 0.3s" in outcome.errors[0]
    outcome = await Hooks(pre_tool(hang, timeout=0.3, failClosed=True)).run("PreToolUse", PAYLOAD)
    assert outcome.blocked and "failClosed" in outcome.reason


@pytest.mark.parametrize("command", ["/no/such/hook.sh", "echo not json", "exit 3"])
async def test_fail_closed_turns_errors_and_non_json_into_a_block(command: str) -> None:
    outcome = await Hooks(pre_tool(command, failClosed=True)).run("PreToolUse", PAYLOAD)
    assert outcome.blocked and outcome.decision == "deny"
    assert not (await Hooks(pre_tool(command)).run("PreToolUse", PAYLOAD)).blocked


async def test_a_block_short_circuits_later_hooks_and_in_process_runs_first(tmp_path: Path) -> None:
    ran = tmp_path / "ran"
    later = script(tmp_path, "later.sh", f"touch {ran}\n")
    hooks = Hooks(pre_tool(later))
    order: list[str] = []

    @hooks.on("PreToolUse", matcher="bash")
    async def veto(payload: dict[str, Any]) -> dict[str, Any] | None:
        order.append(payload["tool_input"]["command"])
        return {
            "hookSpecificOutput": {
                "permissionDecision": "deny",
                "permissionDecisionReason": "in-process",
            }
        }

    outcome = await hooks.run("PreToolUse", PAYLOAD)
    assert outcome.blocked and outcome.reason == "in-process"
    assert order == ["rm -rf 中文"] and not ran.exists()


async def test_in_process_hook_errors_are_non_blocking() -> None:
    hooks = Hooks()

    @hooks.on("PostToolUse")
    async def crash(payload: dict[str, Any]) -> dict[str, Any] | None:
        raise RuntimeError("boom")

    outcome = await hooks.run("PostToolUse", PAYLOAD)
    assert not outcome.blocked and "boom" in outcome.errors[0]


class _HookServer(BaseHTTPRequestHandler):
    received: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).received.append({"body": body, "auth": self.headers.get("Authorization")})
        if self.path == "/fail":
            self.send_response(500)
            self.end_headers()
            return
        command = body["tool_input"]["command"]
        decision = "deny" if "rm" in command else "allow"
        data = json.dumps(
            {
                "hookSpecificOutput": {
                    "permissionDecision": decision,
                    "permissionDecisionReason": f"http says {decision}",
                }
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def hook_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _HookServer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


async def test_http_hook_on_loopback(hook_server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOOK_TOKEN", "secret")
    config = {
        "PreToolUse": [
            {
                "hooks": [
                    {
                        "type": "http",
                        "url": f"{hook_server}/hook",
                        "headers": {"Authorization": "Bearer $HOOK_TOKEN"},
                    }
                ]
            }
        ]
    }
    hooks = Hooks(config)
    outcome = await hooks.run("PreToolUse", PAYLOAD)
    assert outcome.blocked and outcome.reason == "http says deny"
    outcome = await hooks.run("PreToolUse", {**PAYLOAD, "tool_input": {"command": "ls"}})
    assert outcome.decision == "allow" and not outcome.blocked
    assert _HookServer.received[-1]["auth"] == "Bearer secret"
    assert _HookServer.received[-1]["body"]["hook_event_name"] == "PreToolUse"
    failing = {"PreToolUse": [{"hooks": [{"type": "http", "url": f"{hook_server}/fail"}]}]}
    outcome = await Hooks(failing).run("PreToolUse", PAYLOAD)
    assert not outcome.blocked and "HTTP 500" in outcome.errors[0]
    failing["PreToolUse"][0]["hooks"][0]["failClosed"] = True  # type: ignore[index]
    assert (await Hooks(failing).run("PreToolUse", PAYLOAD)).blocked


async def test_file_reloads_when_its_content_changes(tmp_path: Path) -> None:
    block = script(tmp_path, "block.sh", "echo first >&2\nexit 2\n")
    file = tmp_path / "hooks.json"
    file.write_text(json.dumps({"hooks": pre_tool(block)}))
    hooks = Hooks.from_file(file)
    assert (await hooks.run("PreToolUse", PAYLOAD)).reason == "first"
    file.write_text(json.dumps({"hooks": {}}))
    assert not (await hooks.run("PreToolUse", PAYLOAD)).blocked
    file.write_text("{broken")  # a broken edit keeps the last good hooks
    assert not (await hooks.run("PreToolUse", PAYLOAD)).blocked
    file.write_text(json.dumps({"hooks": pre_tool(block)}))
    assert (await hooks.run("PreToolUse", PAYLOAD)).blocked


async def test_settings_file_and_child_inheritance(tmp_path: Path) -> None:
    block = script(tmp_path, "block.sh", "echo parent >&2\nexit 2\n")
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"permissions": {"allow": []}, "hooks": pre_tool(block)}))
    parent = Hooks.from_settings(settings)
    child = parent.narrow(Hooks())
    outcome = await child.run(
        "PreToolUse", {**PAYLOAD, "agent_id": "sub-1", "agent_type": "researcher"}
    )
    assert outcome.blocked and outcome.reason == "parent"
    no_hooks = tmp_path / "plain.json"
    no_hooks.write_text(json.dumps({"permissions": {}}))
    assert not Hooks.from_settings(no_hooks).has("PreToolUse")


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"PreToolUse": [{"matcher": "(", "hooks": []}]}, "not a valid regex"),
        (
            {"PreToolUse": [{"hooks": [{"command": "x", "timeout": -1}]}]},
            "timeout must be a positive",
        ),
        ({"PreToolUse": [{"hooks": [{"type": "http", "url": "ftp://x"}]}]}, "needs `url`"),
        ({"PreToolUse": {"hooks": []}}, "must be a list of matcher groups"),
    ],
)
def test_bad_configuration_names_the_key(config: dict[str, Any], message: str) -> None:
    with pytest.raises(HookConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        Hooks(config)


def test_timeout_is_capped_at_60_seconds() -> None:
    hooks = Hooks(pre_tool("true", timeout=600))
    configured = hooks._configured["PreToolUse"][0].hooks[0]
    assert configured.spec.timeout == 60.0


@pytest.fixture
async def hostile_hook_server() -> AsyncIterator[str]:
    """`/big` answers 3 MB of JSON; `/drip` answers a valid allow, one byte every 0.1 s."""
    allow = json.dumps({"hookSpecificOutput": {"permissionDecision": "allow"}}).encode()

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
        await reader.readexactly(length)
        body = b'{"padding": "' + b"x" * 3_000_000 + b'"}' if b" /big " in head else allow
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n")
        writer.write(b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body))
        if b" /drip " in head:
            await drip(writer, body)
            return
        writer.write(body)
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    async with server:
        yield f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"


def http_pre_tool(url: str, **extra: Any) -> dict[str, Any]:
    return {"PreToolUse": [{"hooks": [{"type": "http", "url": url, **extra}]}]}


async def test_an_http_hook_has_one_deadline(hostile_hook_server: str) -> None:
    drip = http_pre_tool(f"{hostile_hook_server}/drip", timeout=0.5, failClosed=True)
    outcome = await Hooks(drip).run("PreToolUse", PAYLOAD)
    assert outcome.blocked and "timed out after 0.5s" in outcome.reason


async def test_an_http_hook_answering_too_much_has_failed(hostile_hook_server: str) -> None:
    big = http_pre_tool(f"{hostile_hook_server}/big")
    outcome = await Hooks(big).run("PreToolUse", PAYLOAD)
    assert not outcome.blocked and "more than 1000000 bytes" in outcome.errors[0]
    closed = http_pre_tool(f"{hostile_hook_server}/big", failClosed=True)
    outcome = await Hooks(closed).run("PreToolUse", PAYLOAD)
    assert outcome.blocked and "more than 1000000 bytes" in outcome.reason


@pytest.mark.parametrize("stream", ["stdout", "stderr"])
async def test_a_command_hook_printing_too_much_has_failed(tmp_path: Path, stream: str) -> None:
    redirect = " >&2" if stream == "stderr" else ""
    hook = script(tmp_path, "loud.sh", f"head -c 3000000 /dev/zero{redirect}\nexit 0\n")
    outcome = await Hooks(pre_tool(hook)).run("PreToolUse", PAYLOAD)
    assert not outcome.blocked
    assert f"more than 1000000 bytes on {stream}" in outcome.errors[0]
    outcome = await Hooks(pre_tool(hook, failClosed=True)).run("PreToolUse", PAYLOAD)
    assert outcome.blocked and "MAX_OUTPUT_BYTES" in outcome.reason
