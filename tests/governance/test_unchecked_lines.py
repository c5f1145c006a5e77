"""Deny rules in `bypassPermissions` and `dontAsk`: a line the parser cannot check is refused.

The attack of the second review: with `Bash(rm:*)` denied and the built-in `DEFAULT_DENY`, a
line that could not be checked became a question, and `bypassPermissions` answered yes, so the
folder went. Each evasion is replayed through governance and, had it been cleared, the real
sandboxed shell; the folder must still be there.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from toolweave.builtins import shell_tool
from toolweave.governance import CallBlocked, GateContext, Governance, PermissionMode, Rules
from toolweave.tools import ToolContext

EVASIONS = [
    # the eight the review listed
    "[[ 1 ]] && rm -rf V",
    "case x in x) rm -rf V;; esac",
    "X=r; ${X}m -rf V",
    "/bin/r? -rf V",
    "env - rm -rf V",
    "env -iS'rm -rf V'",
    "trap 'rm -rf V' EXIT",
    "hash -p /bin/rm r; r -rf V",
    # and more of their kind
    "env -i -S 'rm -rf V'",
    "env -vS'rm -rf V'",
    "env -u HOME - rm -rf V",
    "X=/bin; ${X}/rm -rf V",
    "$(echo rm) -rf V",
    "`echo rm` -rf V",
    "/???/rm -rf V",
    "/bin/[r]m -rf V",
    'a=(rm -rf V); "${a[@]}"',
    "trap -- 'rm -rf V' EXIT; true",
    "shopt -s expand_aliases\nalias r='rm -rf'\nr V",
    "while true; do rm -rf V; break; done",
    "f() { rm -rf V; }; f",
    "sudo -Eu root rm -rf V",
    "nice -n5 rm -rf V",
    "timeout -k5 10 rm -rf V",
    "if [[ -d V ]]; then rm -rf V; fi",
    "$R -rf V",
    "${R:-rm} -rf V",
]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "V").mkdir()
    (tmp_path / "V" / "keep.txt").write_text("still here")
    return tmp_path


async def replay(project: Path, command: str, mode: PermissionMode) -> CallBlocked | None:
    """One call as the agent loop runs it; the refusal, or None after the tool ran."""
    bash = shell_tool(project)  # DEFAULT_DENY
    gov = Governance(rules=Rules(deny=["Bash(rm:*)"], cwd=project))
    gate = GateContext(session_id="s", mode=mode)
    try:
        args = (await gov.clear("bash", "c", {"command": command}, bash, gate)).args
    except CallBlocked as blocked:
        return blocked
    await bash.execute(args, ToolContext(tool_call_cleared=True))
    return None


@pytest.mark.parametrize("mode", ["bypassPermissions", "dontAsk"])
@pytest.mark.parametrize("command", EVASIONS)
async def test_each_evasion_is_refused_without_a_person(
    command: str, mode: PermissionMode, project: Path
) -> None:
    blocked = await replay(project, command, mode)
    assert blocked is not None and blocked.stage in ("rules", "approval"), command
    assert (project / "V" / "keep.txt").read_text() == "still here"


@pytest.mark.parametrize("command", EVASIONS[:8])
async def test_bypass_names_the_rule_and_why(command: str, project: Path) -> None:
    blocked = await replay(project, command, "bypassPermissions")
    assert blocked is not None and blocked.stage == "rules"
    assert "denied by" in blocked.message or "cannot be checked" in blocked.message


def test_the_peeled_and_expanded_forms_meet_the_deny_rule_in_every_mode() -> None:
    rules = Rules(deny=["Bash(rm:*)"])
    for command in (
        "env - rm -rf V", "env -iS'rm -rf V'", "X=r; ${X}m -rf V", "trap 'rm -rf V' EXIT",
        "hash -p /bin/rm r; r -rf V", "alias r=rm\nr -rf V", "X=/bin; ${X}/rm -rf V",
    ):  # fmt: skip
        assert rules.decide("bash", {"command": command}) == "deny", command


def test_an_unchecked_line_still_asks_in_the_default_mode() -> None:
    rules = Rules(deny=["Bash(rm:*)"])
    explanation = rules.explain("bash", {"command": "/bin/r? -rf V"})
    assert explanation.decision == "ask" and not explanation.checked
    assert "computes the command's name" in explanation.reason
    parsed = rules.explain("bash", {"command": "[[ 1 ]] && ls"})
    assert parsed.decision == "ask" and not parsed.checked
    assert rules.explain("bash", {"command": "[ -d V ] && ls"}).checked  # `[` is a command


async def test_checked_lines_still_run_in_bypass(project: Path) -> None:
    assert await replay(project, "echo ok > out.txt && ls V", "bypassPermissions") is None
    assert (project / "out.txt").read_text() == "ok\n"


def test_without_any_deny_rule_bypass_keeps_its_meaning() -> None:
    rules = Rules(allow=["Bash(ls:*)"])
    explanation = rules.explain("bash", {"command": "[[ 1 ]] && ls"})
    kept = rules.unchecked_refused(explanation, "bash", None, "bypassPermissions")
    assert kept.decision == "ask"  # the pipeline's bypass answers it
    denied = Rules(deny=["Bash(rm:*)"]).unchecked_refused(
        explanation, "bash", None, "bypassPermissions"
    )
    assert denied.decision == "deny" and "Bash(rm:*)" in denied.reason
