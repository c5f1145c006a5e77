"""Help text shown exactly as written, and flags shown as flags.

Typer renders `--help` through Rich markup, so a help string such as "its providers,
[mcpServers] and [serve.policy]" loses its bracketed words (Rich takes them for tags), and
typer 0.29 prints a type after every option, `--stdio <bool>` included, as if a flag took a
value. Every command and group of the command line is built from the classes here: they
escape each help text once, when the command is made, and give each flag an empty metavar, so
the type column stays blank for it. Help strings are therefore plain text, never Rich markup.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import typer
from rich.markup import escape
from typer.core import TyperCommand, TyperGroup
from typer.models import CommandFunctionType

FLAG_METAVAR = ""
"""What the help shows in the type column of an option that takes no value."""


def _literal(text: str | None) -> str | None:
    return None if text is None else escape(text)


def _as_flag(param: Any) -> None:
    """Blank the type column of a flag; an option that takes a value keeps its metavar."""
    if getattr(param, "is_flag", False) and getattr(param, "metavar", None) is None:
        param.metavar = FLAG_METAVAR


def make_literal(command: Any) -> None:
    """Escape the help of `command` and of its parameters; render its flags as flags."""
    if getattr(command, "rich_markup_mode", None) != "rich":
        return
    if command.short_help is None and command.help:  # the first paragraph, reflowed: the
        # docstring's own line breaks would break the command list's lines mid-sentence
        command.short_help = " ".join(command.help.split("\n\n", 1)[0].split())
    command.help = _literal(command.help)
    command.short_help = _literal(command.short_help)
    command.epilog = _literal(command.epilog)
    for param in command.params:
        if getattr(param, "help", None) is not None:
            param.help = escape(param.help)
        _as_flag(param)


class _LiteralHelp:
    """Makes a command's help literal when it is built, and its help option a flag."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        cast(Any, super()).__init__(*args, **kwargs)
        make_literal(self)

    def get_help_option(self, ctx: Any) -> Any:
        option = cast(Any, super()).get_help_option(ctx)
        _as_flag(option)
        return option


class LiteralHelpCommand(_LiteralHelp, TyperCommand):
    """A command whose help is plain text and whose flags show no type."""


class LiteralHelpGroup(_LiteralHelp, TyperGroup):
    """A command group whose help is plain text and whose flags show no type."""


class LiteralHelpTyper(typer.Typer):
    """`typer.Typer` whose groups and commands default to the literal-help classes."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("cls", LiteralHelpGroup)
        super().__init__(**kwargs)

    def command(
        self, name: str | None = None, *, cls: type[TyperCommand] | None = None, **kwargs: Any
    ) -> Callable[[CommandFunctionType], CommandFunctionType]:
        return super().command(name, cls=cls or LiteralHelpCommand, **kwargs)
