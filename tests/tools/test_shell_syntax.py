"""split_commands / parse_commands: every simple command a line runs, so rules see them all."""

from __future__ import annotations

import pytest

from toolweave.errors import ToolweaveError
from toolweave.tools import ApprovalRequired, ToolContext, ToolError
from toolweave.tools.errors import ShellParseError
from toolweave.tools.shell_syntax import parse_commands, split_commands

CASES: list[tuple[str, list[list[str]]]] = [
    ("ls -la", [["ls", "-la"]]),
    ("git status; rm -rf /", [["git", "status"], ["rm", "-rf", "/"]]),
    ("git status && rm x || rm y", [["git", "status"], ["rm", "x"], ["rm", "y"]]),
    ("git status\nrm -rf ~", [["git", "status"], ["rm", "-rf", "~"]]),
    ("cat a | grep b | rm c", [["cat", "a"], ["grep", "b"], ["rm", "c"]]),
    ("echo $(rm -rf /)", [["rm", "-rf", "/"], ["echo", "$(rm -rf /)"]]),
    ("echo `rm x`", [["rm", "x"], ["echo", "`rm x`"]]),
    ('echo "$(rm q)"', [["rm", "q"], ["echo", "$(rm q)"]]),
    ("a=$(rm z)", [["rm", "z"]]),
    ("(cd /tmp; rm y)", [["cd", "/tmp"], ["rm", "y"]]),
    ("{ ls; rm y; }", [["ls"], ["rm", "y"]]),
    ("\\rm -rf build", [["rm", "-rf", "build"]]),
    ("r''m -rf build", [["rm", "-rf", "build"]]),
    ('"r"m x', [["rm", "x"]]),
    ("env rm x", [["rm", "x"]]),
    ("env -i A=1 B=2 rm x", [["rm", "x"]]),
    ("A=1 rm x", [["rm", "x"]]),
    ("/usr/bin/env rm x", [["rm", "x"]]),
    ("sudo -u root rm x", [["rm", "x"]]),
    ("timeout -s KILL 5 rm x", [["rm", "x"]]),
    ("nice -n 5 nohup rm x", [["rm", "x"]]),
    ("nice -10 rm x", [["rm", "x"]]),
    ("command rm x", [["rm", "x"]]),
    ("exec rm x", [["rm", "x"]]),
    ("ls | xargs -I{} rm {}", [["ls"], ["rm", "{}"]]),
    ("ls | xargs -n 1 rm", [["ls"], ["rm"]]),
    ('bash -c "rm -rf /"', [["bash", "-c", "rm -rf /"], ["rm", "-rf", "/"]]),
    ("sh -c 'ls; rm x'", [["sh", "-c", "ls; rm x"], ["ls"], ["rm", "x"]]),
    ('zsh -lc "rm x"', [["zsh", "-lc", "rm x"], ["rm", "x"]]),
    (
        'bash -c "sh -c \\"rm x\\""',
        [["bash", "-c", 'sh -c "rm x"'], ["sh", "-c", "rm x"], ["rm", "x"]],
    ),
    ('eval "rm x"', [["eval", "rm x"], ["rm", "x"]]),
    ('env -S "rm -r q"', [["rm", "-r", "q"]]),
    (
        "find . -name '*.o' -exec rm {} \\;",
        [["find", ".", "-name", "*.o", "-exec", "rm", "{}", ";"], ["rm", "{}"]],
    ),
    ("for f in a b; do rm $f; done", [["rm", "$f"]]),
    ("if true; then rm a; fi", [["true"], ["rm", "a"]]),
    ("diff <(rm a) b", [["rm", "a"], ["diff", "<(rm a)", "b"]]),
    ("echo '$(rm x)'", [["echo", "$(rm x)"]]),
    ("ls 中文目录 && echo 你好", [["ls", "中文目录"], ["echo", "你好"]]),
    ("x=1 y=2", []),
]


@pytest.mark.parametrize(("line", "expected"), CASES)
def test_split_commands_finds_every_simple_command(line: str, expected: list[list[str]]) -> None:
    assert split_commands(line) == expected


def test_redirect_targets_are_exposed() -> None:
    commands = parse_commands("echo hi > out.txt 2>&1; cat < in.txt >> log; > trunc")
    assert [c.writes for c in commands] == [("out.txt",), ("log",), ("trunc",)]
    assert commands[1].redirects[0].operator == "<"
    assert not commands[1].redirects[0].writes
    assert commands[2].argv == ()


def test_redirect_on_a_compound_command_applies_to_its_commands() -> None:
    commands = parse_commands("{ ls; pwd; } > listing.txt")
    assert [c.writes for c in commands] == [("listing.txt",), ("listing.txt",)]


def test_substitution_in_a_redirect_target_is_found() -> None:
    assert ["rm", "z"] in split_commands("echo hi > $(rm z)")


@pytest.mark.parametrize(
    "line",
    [
        'echo "unterminated',
        "case a in a) rm x;; esac",
        "ls ${A:-$(rm x)}",
        "cat <<EOF\n$(rm -rf /)\nEOF",
        "[[ -f a ]] && rm a",
        "sudo -u",
        "bash -c",
    ],
)
def test_what_cannot_be_checked_fails_closed(line: str) -> None:
    with pytest.raises(ShellParseError) as info:
        split_commands(line)
    assert not isinstance(info.value, ToolError)  # a parse failure, not a failed call
    assert isinstance(info.value, ToolweaveError)
    assert isinstance(info.value, ValueError)


def test_nesting_is_bounded() -> None:
    line = "eval " * 20 + "rm x"
    with pytest.raises(ShellParseError, match="nest deeper"):
        split_commands(line)


def test_empty_line_runs_nothing() -> None:
    assert split_commands("   ") == []


def test_approval_required_is_a_recoverable_tool_error_with_a_reason() -> None:
    error = ApprovalRequired("deletes 3 files", tool="bash")
    assert error.recoverable
    assert error.reason == "deletes 3 files"
    assert "deletes 3 files" in error.message
    assert ToolContext().tool_call_approved is False
    assert ToolContext(tool_call_approved=True).tool_call_approved is True


@pytest.mark.parametrize(
    ("line", "argv"),
    [
        ("time make -j2", ["make", "-j2"]),
        ("time -p make", ["make"]),
        ("! time grep x f", ["grep", "x", "f"]),
        ("echo $'\\x72m'", ["echo", "rm"]),
        ("$'\\162\\155' -rf /", ["rm", "-rf", "/"]),
        ("xargs --process-slot-var ls touch", ["touch"]),
        ("xargs -I{} rm {}", ["rm", "{}"]),
        ("setsid -f sleep 25", ["sleep", "25"]),
        ("flock /tmp/lock rm x", ["rm", "x"]),
        ("chrt -f 10 nice -n 5 ls", ["ls"]),
        ("taskset -c 0 ls", ["ls"]),
        ("ionice -c 3 ls", ["ls"]),
        ("stdbuf -oL ls", ["ls"]),
    ],
)
def test_wrappers_and_keywords_unwrap_to_the_command_that_runs(line: str, argv: list[str]) -> None:
    assert split_commands(line)[-1] == argv


def test_forms_keep_the_command_as_written_and_each_layer() -> None:
    [simple] = parse_commands("GIT_PAGER=cat timeout 5 git diff")
    assert simple.words == ("GIT_PAGER=cat", "timeout", "5", "git", "diff")
    assert simple.forms[-1] == simple.argv == ("git", "diff") and simple.neutral == 0
    [timed] = parse_commands("timeout 5 git diff")
    assert timed.forms == (("timeout", "5", "git", "diff"), ("git", "diff")) and timed.neutral == 1
    [sudo] = parse_commands("sudo -u root shutdown -h now")
    assert sudo.forms[0][0] == "sudo" and sudo.neutral == 0


@pytest.mark.parametrize(
    "line",
    ["su -c 'rm -rf /' root", "script -qc 'rm -rf /' /dev/null", "flock /tmp/l -c 'rm -rf /'"],
)
def test_wrappers_that_run_a_string_through_a_shell_are_parsed(line: str) -> None:
    assert ["rm", "-rf", "/"] in split_commands(line)


@pytest.mark.parametrize(
    "line",
    ["cat x | bash", "bash <<< 'rm -rf /'", "bash -s < x", "source <(curl x)", ". /dev/stdin",
     "su -", "sudo -i", "xargs sh"],
)  # fmt: skip
def test_a_shell_fed_on_stdin_is_marked_unchecked(line: str) -> None:
    assert any(c.unchecked for c in parse_commands(line))
    assert not any(c.unchecked for c in parse_commands("bash ./scripts/build.sh"))


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("echo 'time x'", [["echo", "time x"]]),  # quoted: not the keyword
        ('echo "$(time ls)"', None),  # inside double quotes bashlex refuses it: unknown
        ("echo a # time rm x", [["echo", "a"]]),  # a comment runs nothing
        ("echo $'it\\'s'", [["echo", "it's"]]),
        ("echo $'unterminated", None),
    ],
)
def test_source_rewrites_touch_only_what_bash_would_read(
    line: str, expected: list[list[str]] | None
) -> None:
    if expected is None:
        with pytest.raises(ShellParseError):
            split_commands(line)
    else:
        assert split_commands(line) == expected


@pytest.mark.parametrize(
    "line", ["printf -v 'a[$(rm -rf x)]' 1", "test -v 'a[`rm x`]'", "declare 'a[$(id)]=1'"]
)
def test_a_subscript_that_runs_a_command_is_unchecked(line: str) -> None:
    assert any(c.unchecked for c in parse_commands(line))
    assert not any(c.unchecked for c in parse_commands("printf -v 'a[1]' x"))
