"""Slash commands: $args / $ARGUMENTS, appending, pass-through, files, reload, name rules."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from toolweave.agent.orchestration import Commands
from toolweave.skills.arguments import expand_arguments


def test_expand_arguments_both_placeholders_and_append() -> None:
    assert expand_arguments("Review $ARGUMENTS now", "a.py") == "Review a.py now"
    assert expand_arguments("翻译成英文：$args", "你好世界") == "翻译成英文：你好世界"
    assert expand_arguments("Fix #$0 in $1", "42 app.py") == "Fix #42 in app.py"
    assert expand_arguments("Summarise.", "the report") == "Summarise.\n\nARGUMENTS: the report"
    assert expand_arguments("Summarise.", "  ") == "Summarise."
    # Replacement is literal: regex escapes in the arguments survive.
    assert expand_arguments("say $args", r"\1 $ARGUMENTS") == r"say \1 $ARGUMENTS"


def test_rewrite_known_unknown_and_plain_text() -> None:
    commands = Commands({"review": "Review $ARGUMENTS for bugs", "tr": "翻译：$args"})
    assert commands.rewrite("/review src/app.py") == "Review src/app.py for bugs"
    assert commands.rewrite("/tr 早上好") == "翻译：早上好"
    assert commands.rewrite("/unknown x") == "/unknown x"
    assert commands.rewrite("/etc/hosts is a file") == "/etc/hosts is a file"
    assert commands.rewrite("hello /review") == "hello /review"
    assert commands.rewrite("/review") == "Review  for bugs"


def test_names_are_validated_and_may_not_shadow_builtins() -> None:
    with pytest.raises(ValueError, match="shadow the built-in /clear"):
        Commands({"clear": "x"})
    with pytest.raises(ValueError, match="'/x' is invalid"):
        Commands({"/x": "x"})
    with pytest.raises(ValueError, match="non-empty template"):
        Commands({"empty": "  "})


def test_json_file_reloads_on_change(tmp_path: Path) -> None:
    file = tmp_path / "commands.json"
    file.write_text('{"hi": "Say hi to $args"}', encoding="utf-8")
    commands = Commands.from_file(file)
    assert commands.rewrite("/hi Ann") == "Say hi to Ann"
    file.write_text(
        '{"hi": {"template": "Greet $ARGUMENTS warmly", "description": "greet"}}',
        encoding="utf-8",
    )
    os.utime(file, ns=(1, 10**18))  # a distinct mtime even on coarse file systems
    assert commands.rewrite("/hi Ann") == "Greet Ann warmly"
    assert commands.get("hi") is not None and commands.get("hi").description == "greet"  # type: ignore[union-attr]
    # A broken edit keeps the last good set instead of breaking every message.
    file.write_text("{not json", encoding="utf-8")
    os.utime(file, ns=(1, 2 * 10**18))
    assert commands.rewrite("/hi Ann") == "Greet Ann warmly"


def test_claude_code_command_directory(tmp_path: Path) -> None:
    directory = tmp_path / ".claude" / "commands"
    directory.mkdir(parents=True)
    (directory / "fix-issue.md").write_text(
        "---\ndescription: Fix a GitHub issue\nargument-hint: <number>\n---\n"
        "Fix issue #$ARGUMENTS following our coding standards.\n",
        encoding="utf-8",
    )
    (directory / "总结.md").write_text("用三句话总结。", encoding="utf-8")
    commands = Commands.from_directory(directory)
    assert commands.names() == ["fix-issue", "总结"]
    assert commands.rewrite("/总结 这篇文章") == "用三句话总结。\n\nARGUMENTS: 这篇文章"
    command = commands.get("fix-issue")
    assert command is not None
    assert (command.description, command.argument_hint) == ("Fix a GitHub issue", "<number>")
    assert commands.rewrite("/fix-issue 123") == ("Fix issue #123 following our coding standards.")
    (directory / "lint.md").write_text("Run the linters on $args", encoding="utf-8")
    assert commands.rewrite("/lint src") == "Run the linters on src"
