"""Prompt templates that take the rest of a command line: `$ARGUMENTS` and `$args`.

Slash commands (`toolweave.agent.Commands`) and skills (`toolweave.skills`) both turn
"/name some words" into a prompt. Claude Code's command files and skills write the placeholder
as `$ARGUMENTS`; the bot engine this project grew from writes `$args`. One function expands both,
so a template means the same thing wherever it is used. It lives at the bottom layer because
both of those packages import it.
"""

from __future__ import annotations

import re

ARGUMENT_PLACEHOLDERS = ("$ARGUMENTS", "$args")
_PLACEHOLDER = re.compile(r"\$ARGUMENTS\b|\$args\b")


def expand_arguments(template: str, arguments: str) -> str:
    """Replace every `$ARGUMENTS` / `$args` in `template` with `arguments`.

    A template with no placeholder gets the arguments appended after a blank line (nothing is
    appended when they are empty), so `/review` and `/review src/app.py` both make sense.
    Replacement is literal: backslashes or `$` in the arguments are kept as typed.
    """
    arguments = arguments.strip()
    if _PLACEHOLDER.search(template) is None:
        return f"{template.rstrip()}\n\n{arguments}" if arguments else template
    return _PLACEHOLDER.sub(lambda _: arguments, template)
