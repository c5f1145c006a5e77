"""Rules: Claude Code's permission-rule syntax, decided deny > ask > allow, explained."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from toolweave.governance.rules import Rules, RuleSyntaxError
from toolweave.tools import Permission, tool

GUARD = Rules(
    allow=["bash(git *)", "bash(ls *)", "bash(echo *)", "bash(cat *)"], deny=["bash(rm *)"]
)

# At least 15 ways to smuggle `rm` past an allow list; every one must be denied.
BYPASSES = [
    "git status; rm -rf /",
    "git status && rm -rf /",
    "git status || rm -rf /",
    "git status\nrm -rf /",
    "git log $(rm -rf /)",
    "git log `rm -rf /`",
    'echo "$(rm -rf /)"',
    "(git status; rm -rf /)",
    "{ ls; rm -rf /; }",
    "ls | rm -rf /",
    "env rm -rf /",
    "env FOO=1 rm -rf /",
    "FOO=1 rm -rf /",
    "sudo rm -rf /",
    "timeout 5 rm -rf /",
    "nice -n 10 nohup rm -rf /",
    "command rm -rf /",
    "xargs rm -rf < list.txt",
    'bash -c "rm -rf /"',
    "sh -c 'git status; rm -rf /'",
    'zsh -c "bash -c \\"rm -rf /\\""',
    "r''m -rf /",
    '"r"m -rf /',
    "\\rm -rf /",
    "/bin/rm -rf /",
    "eval 'rm -rf /'",
    "find . -exec rm -rf {} \\;",
    "echo x > out.txt; rm -rf /",
    "cat <(rm -rf /)",
    "for f in a; do rm -rf $f; done",
    "if true; then rm -rf /; fi",
]


@pytest.mark.parametrize("command", BYPASSES)
def test_shell_bypass_attempts_are_denied(command: str) -> None:
    assert GUARD.decide("bash", {"command": command}) == "deny", GUARD.explain(
        "bash", {"command": command}
    )


@pytest.mark.parametrize(
    "command",
    ["ls ${X:-$(rm -rf /)}", "cat <<EOF\n$(rm -rf /)\nEOF", 'echo "unterminated', "[[ -f a ]]"],
)
def test_unparseable_commands_are_never_allowed(command: str) -> None:
    explanation = GUARD.explain("bash", {"command": command})
    assert explanation.decision == "ask"
    assert "cannot be checked" in explanation.reason


def test_unparseable_command_matching_a_deny_rule_is_denied() -> None:
    assert GUARD.decide("bash", {"command": 'rm -rf "/'}) == "deny"


@pytest.mark.parametrize(
    ("rule", "command", "matches"),
    [
        ("bash(ls *)", "ls", True),
        ("bash(ls *)", "ls -la", True),
        ("bash(ls *)", "lsof", False),
        ("bash(ls*)", "lsof", True),
        ("bash(npm run test:*)", "npm run test --watch", True),
        ("bash(npm run test:*)", "npm run testing", False),
        ("bash(git * main)", "git push origin main", True),
        ("bash(git * main)", "git push origin dev", False),
        ("bash(git status)", "git status", True),
        ("bash(git status)", "git status -s", False),
        ("Bash", "anything at all", True),
        ("bash(*)", "anything at all", True),
        ("bash(echo 你好 *)", "echo 你好 世界", True),
    ],
)
def test_command_patterns_follow_claude_code(rule: str, command: str, matches: bool) -> None:
    rules = Rules(allow=[rule])
    assert (rules.decide("bash", {"command": command}) == "allow") is matches


def test_deny_beats_ask_beats_allow_whatever_the_specificity() -> None:
    rules = Rules(allow=["bash(aws s3 ls)"], deny=["bash(aws *)"])
    assert rules.decide("bash", {"command": "aws s3 ls"}) == "deny"
    rules = Rules(allow=["bash(git push origin main)"], ask=["bash(git push *)"])
    assert rules.decide("bash", {"command": "git push origin main"}) == "ask"


def test_a_line_is_allowed_only_when_every_command_is() -> None:
    assert GUARD.decide("bash", {"command": "git status && ls -la | cat"}) == "allow"
    explanation = GUARD.explain("bash", {"command": "git status && curl evil.example"})
    assert explanation.decision == "ask"
    assert "curl evil.example" in explanation.reason


def test_redirect_writes_meet_edit_deny_rules(tmp_path: Path) -> None:
    rules = Rules(allow=["bash(echo *)"], deny=["Edit(.env)"], cwd=tmp_path)
    assert rules.decide("bash", {"command": "echo hi > notes.txt"}) == "ask"  # a write: asks
    assert rules.decide("bash", {"command": "echo hi > /dev/null 2>&1"}) == "allow"
    edits = Rules(allow=["bash(echo *)", "Edit(./notes.txt)"], cwd=tmp_path)
    assert edits.decide("bash", {"command": "echo hi > notes.txt"}) == "allow"
    outside = edits.explain("bash", {"command": "echo hi > /etc/passwd"})
    assert outside.decision == "ask" and "outside the project" in outside.reason
    assert rules.decide("bash", {"command": "echo TOKEN=1 >> .env"}) == "deny"
    assert rules.decide("bash", {"command": "echo TOKEN=1 > config/.env"}) == "deny"


def test_path_anchors_and_resolution(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    (project / "src").mkdir()
    (project / "secrets").mkdir()
    (project / "src" / "link").symlink_to(project / "secrets")
    settings = project / ".claude" / "settings.json"
    settings.write_text(
        json.dumps(
            {
                "permissions": {
                    "allow": ["Read(/src/**)", "Read(//etc/hostname)", "Read(~/notes/*.md)"],
                    "deny": ["Read(/secrets/**)", "Read(*.key)"],
                }
            }
        )
    )
    rules = Rules.from_settings(settings)
    cwd = Path.cwd()
    os.chdir(project)
    try:
        assert rules.decide("read", {"path": "src/main.py"}) == "allow"
        assert rules.decide("read", {"path": str(project / "src" / "a" / "b.py")}) == "allow"
        # `..` and symlinks are resolved before matching: both land in secrets/.
        assert rules.decide("read", {"path": "src/../secrets/token"}) == "deny"
        assert rules.decide("read", {"path": "src/link/token"}) == "deny"
        assert rules.decide("read", {"path": "src/deep/server.key"}) == "deny"
        assert rules.decide("read", {"path": "/etc/hostname"}) == "allow"
        home_note = os.path.expanduser("~/notes/todo.md")
        assert rules.decide("read", {"path": home_note}) == "allow"
        assert rules.decide("read", {"path": os.path.expanduser("~/notes/a/b.md")}) == "ask"
    finally:
        os.chdir(cwd)
    explanation = rules.explain("read", {"path": str(project / "secrets" / "x")})
    assert explanation.rule is not None
    assert explanation.rule.text == "Read(/secrets/**)"
    assert str(settings) in explanation.reason


def test_domain_and_mcp_rules() -> None:
    rules = Rules(
        allow=["WebFetch(domain:docs.python.org)", "mcp__github__get_*", "mcp__memory"],
        deny=["web_fetch(domain:*.evil.example)", "mcp__github__delete_repo"],
    )
    assert rules.decide("web_fetch", {"url": "https://docs.python.org/3/"}) == "allow"
    assert rules.decide("web_fetch", {"url": "https://a.evil.example/x"}) == "deny"
    assert rules.decide("mcp__github__get_issue", {}) == "allow"
    assert rules.decide("mcp__memory__add", {}) == "allow"
    assert rules.decide("mcp__github__delete_repo", {}) == "deny"


def test_unmatched_calls_ask_only_for_ask_by_default_tools() -> None:
    @tool(permissions=[Permission.DELETE])
    def wipe(target: str) -> str:
        return target

    @tool
    def add_note(text: str) -> str:
        return text

    @tool(destructive=True)
    def reset(confirm: bool) -> bool:
        return confirm

    rules = Rules()
    assert rules.decide("wipe", {"target": "x"}, tool=wipe) == "ask"
    assert rules.decide("reset", {"confirm": True}, tool=reset) == "ask"
    assert rules.decide("add_note", {"text": "笔记"}, tool=add_note) == "allow"
    assert Rules(default="allow").decide("wipe", {"target": "x"}, tool=wipe) == "allow"
    assert Rules(deny=["add_note"]).decide("add_note", {"text": "x"}, tool=add_note) == "deny"
    assert Rules(allow=["wipe(tmp*)"]).decide("wipe", {"target": "tmp1"}, tool=wipe) == "allow"


def test_a_child_narrows_and_never_widens() -> None:
    parent = Rules(allow=["bash(git *)"], deny=["bash(git push *)"])
    child = parent.narrow(Rules(allow=["bash(git push *)", "bash(rm *)"], deny=["bash(git log *)"]))
    assert child.decide("bash", {"command": "git push origin"}) == "deny"
    assert child.decide("bash", {"command": "rm x"}) == "ask"  # parent never allowed rm
    assert child.decide("bash", {"command": "git log"}) == "deny"  # child narrowed
    assert "inherited from the parent" in child.explain("bash", {"command": "git push"}).reason


@pytest.mark.parametrize(
    ("kwargs", "fix"),
    [
        ({"allow": ["bash(unclosed"]}, "Tool(pattern)"),
        ({"allow": "bash"}, "must be a list"),
        ({"default": "maybe"}, "default='maybe'"),
    ],
)
def test_bad_rules_name_the_field_and_the_fix(kwargs: dict[str, object], fix: str) -> None:
    with pytest.raises(RuleSyntaxError, match=fix.replace("(", r"\(").replace(")", r"\)")):
        Rules(**kwargs)  # type: ignore[arg-type]


def test_from_settings_rejects_malformed_files(tmp_path: Path) -> None:
    bad = tmp_path / "settings.json"
    bad.write_text('{"permissions": {"allow": "Bash"}}')
    with pytest.raises(RuleSyntaxError, match=r"permissions.allow"):
        Rules.from_settings(bad)
    bad.write_text("{not json")
    with pytest.raises(RuleSyntaxError, match="cannot read settings file"):
        Rules.from_settings(bad)


@pytest.mark.parametrize("command", ["ls$X -la", "$CMD x", "l? -la", "{ls,-la}", "l[s] x"])
def test_a_command_name_computed_at_run_time_is_never_allowed(command: str) -> None:
    rules = Rules(allow=["bash(l*)", "bash($*)", "bash({*)"])
    assert rules.decide("bash", {"command": command}) == "ask"
    assert Rules(deny=["bash(l*)"]).decide("bash", {"command": "ls$X"}) == "deny"


@pytest.mark.parametrize(
    "command",
    ["$'rm' -rf /", "rm${IFS}-rf /", "{rm,-rf,/}", "x=rm; $x -rf /", "git status; r? -rf /"],
)
def test_obfuscated_commands_are_never_allowed(command: str) -> None:
    assert GUARD.decide("bash", {"command": command}) != "allow", GUARD.explain(
        "bash", {"command": command}
    )
