"""The one place the command line makes its Rich consoles.

Rich wraps at 80 columns (or `$COLUMNS`) when its output is a pipe or a file, which cuts paths
and summary lines in the middle and breaks anything that reads the output. On a terminal the
width is the terminal's; anywhere else a line is never wrapped.
"""

from __future__ import annotations

from rich.console import Console

UNWRAPPED_WIDTH = 100_000
"""The width a console that is not a terminal lays tables out in: wide enough never to wrap."""


def make_console(*, stderr: bool = False, highlight: bool = True) -> Console:
    """A console for stdout (or stderr) that wraps only to a real terminal's width."""
    console = Console(stderr=stderr, highlight=highlight)
    if console.is_terminal:
        return console
    return Console(stderr=stderr, highlight=highlight, soft_wrap=True, width=UNWRAPPED_WIDTH)
