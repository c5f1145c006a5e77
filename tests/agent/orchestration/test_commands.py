"""Slash commands: $args / $ARGUMENTS, appending, pass-through, files, reload, name rules."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from toolweave.agent.orchestration import Commands
from toolweave.agent.orchestration.command_files import command_files
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


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_a_bad_file_is_skipped_with_its_reason_and_the_rest_load(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    directory = tmp_path / ".claude" / "commands"
    _write(directory / "good.md", "Do $ARGUMENTS")
    _write(directory / "help.md", "My own help")  # collides with the built-in /help
    _write(directory / "huge.md", "x" * 128_001)
    _write(directory / "broken.md", "---\ndescription: [unclosed\n---\nbody")
    _write(directory / "empty.md", "---\ndescription: nothing\n---\n")
    with caplog.at_level("WARNING"):
        commands = Commands.from_directory(directory)
    assert commands.names() == ["good"]
    reasons = {path.name: reason for path, reason in commands.skipped}
    assert set(reasons) == {"help.md", "huge.md", "broken.md", "empty.md"}
    assert "built-in /help takes precedence" in reasons["help.md"]
    assert "128001 characters" in reasons["huge.md"] and "MAX_TEMPLATE_CHARS" in reasons["huge.md"]
    assert "invalid YAML" in reasons["broken.md"]
    assert "non-empty template" in reasons["empty.md"]
    assert all(str(directory / name) in caplog.text for name in reasons)
    # The built-in is not replaced: `/help` is not a custom command.
    assert commands.rewrite("/help") == "/help"


def test_subfolders_answer_to_both_spellings(tmp_path: Path) -> None:
    directory = tmp_path / "commands"
    _write(directory / "dev" / "code-review.md", "---\ndescription: Review code\n---\nReview $0")
    _write(directory / "dev" / "help.md", "dev help for $ARGUMENTS")
    _write(directory / "a" / "deploy.md", "deploy A")
    _write(directory / "b" / "deploy.md", "deploy B")
    _write(directory / "lint.md", "top-level lint")
    _write(directory / "qa" / "lint.md", "qa lint")
    _write(directory / "文档" / "总结.md", "总结 $ARGUMENTS")
    commands = Commands.from_directory(directory)
    assert commands.rewrite("/code-review app.py") == "Review app.py"
    assert commands.rewrite("/dev:code-review app.py") == "Review app.py"
    listed = {c.name: c for c in commands.list()}
    assert listed["code-review"].help_description == "Review code (project:dev)"
    # /help lists the bare name when it is free, the namespaced spelling when it is not.
    assert sorted(listed) == [
        "a:deploy",
        "b:deploy",
        "code-review",
        "dev:help",
        "lint",
        "qa:lint",
        "总结",
    ]
    assert commands.rewrite("/deploy x") == "/deploy x"  # two subfolders share it
    assert commands.rewrite("/b:deploy") == "deploy B"
    assert commands.rewrite("/lint") == "top-level lint"
    assert commands.rewrite("/qa:lint") == "qa lint"
    assert commands.rewrite("/dev:help me") == "dev help for me"
    assert commands.rewrite("/文档:总结 报告") == "总结 报告"
    assert commands.rewrite("/总结 报告") == "总结 报告"
    # A new file in a subfolder is picked up on the next use.
    _write(directory / "ops" / "restart.md", "restart $ARGUMENTS")
    os.utime(directory / "ops" / "restart.md", ns=(1, 10**18))
    assert commands.rewrite("/restart web") == "restart web"


def test_frontmatter_keeps_hint_tools_and_model(tmp_path: Path) -> None:
    directory = tmp_path / "commands"
    _write(
        directory / "setup.md",
        "---\nargument-hint: [project-name]\nallowed-tools: Bash(git status:*), Read, "
        "Bash(git add:*)\nmodel: claude-3-5-haiku-20241022\ndescription: Set up\n---\n"
        "Set up $1 now",
    )
    _write(
        directory / "pr.md",
        '---\nargument-hint: [pr-number] [priority]\nallowed-tools:\n  [\n    "Bash(gh pr:*)",\n'
        '    "Read",\n  ]\n---\nReview PR #$0 with priority $1',
    )
    commands = Commands.from_directory(directory)
    setup = commands.get("setup")
    assert setup is not None
    assert setup.argument_hint == "[project-name]"
    assert setup.allowed_tools == ("Bash(git status:*)", "Read", "Bash(git add:*)")
    assert setup.model == "claude-3-5-haiku-20241022"
    assert setup.description == "Set up"
    pr = commands.get("pr")
    assert pr is not None and pr.argument_hint == "[pr-number] [priority]"
    assert pr.allowed_tools == ("Bash(gh pr:*)", "Read")
    # 1-based `$1` with one argument: the placeholder stays and the arguments still arrive.
    assert commands.rewrite("/setup CLIENT123") == "Set up $1 now\n\nARGUMENTS: CLIENT123"
    assert commands.rewrite("/pr 42 high") == "Review PR #42 with priority high"


def test_unfilled_placeholders_append_the_arguments() -> None:
    assert expand_arguments("Fix $1", "a") == "Fix $1\n\nARGUMENTS: a"
    assert expand_arguments("Fix $0 in $1", "a b") == "Fix a in b"
    assert expand_arguments("$ARGUMENTS then $2", "a b") == "a b then $2"
    assert expand_arguments("Fix $1", "") == "Fix $1"


CORPUS = Path("/work/shared/corpus/claude-commands")


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"corpus not found at {CORPUS}")
def test_every_real_command_folder_loads() -> None:
    # Each repository's `commands` folders (at any depth), else its root (`tools/*.md`).
    folders: list[Path] = []
    for repo in sorted(p for p in CORPUS.iterdir() if p.is_dir()):
        named = [p for p in repo.rglob("commands") if p.is_dir()]
        folders.extend(named or [repo])
    files = loaded = nested = 0
    for folder in folders:
        commands = Commands.from_directory(folder)
        count = len(command_files(folder))
        files += count
        loaded += len(commands.list())
        nested += sum(1 for c in commands.list() if c.namespace)
        assert len(commands.list()) + len(commands.skipped) == count, folder
        for path, reason in commands.skipped:
            assert reason and path.is_file()
    print(f"\ncommand corpus: {loaded}/{files} files in {len(folders)} folders, {nested} nested")
    assert nested > 80 and loaded == files - 1  # the one left out: a `plan.md` (built-in /plan)
