"""One line for a person's mistake, never a traceback: the command names the file and the fix.

A file that is not the SQLite store a command expects, a folder where a file belongs, a missing
or unwritable directory: each becomes `error: <file>: <what is wrong>; <fix>` on stderr and exit
code 2, the code every usage error of the command line has.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import typer

USAGE_ERROR = 2
"""The exit code of a usage error (click's, for a bad flag, and every one-line error here)."""


def fail(message: str, code: int = USAGE_ERROR) -> typer.Exit:
    """Print `error: message` on stderr; raise the returned `typer.Exit`."""
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code)


@contextmanager
def about_file(path: Path | str, what: str, fix: str) -> Iterator[None]:
    """Turn the errors of opening or reading `path` (a `what`) into one line naming `fix`."""
    try:
        yield
    except sqlite3.DatabaseError as exc:
        raise fail(f"{path} is not {what} (SQLite says: {exc}); {fix}") from None
    except UnicodeDecodeError:
        raise fail(f"{path} is not {what} (not UTF-8 text); {fix}") from None
    except IsADirectoryError:
        raise fail(f"{path} is a folder, not {what}; {fix}") from None
    except (FileNotFoundError, NotADirectoryError) as exc:
        where = exc.filename or path
        raise fail(f"{where}: no such file or folder; {fix}") from None
    except PermissionError as exc:
        raise fail(f"{exc.filename or path}: permission denied; {fix}") from None
    except OSError as exc:
        raise fail(f"{exc.filename or path}: {exc.strerror or exc}; {fix}") from None


def existing_parent(path: Path, option: str) -> None:
    """A read command never creates a store: refuse a `path` whose folder does not exist."""
    if not path.expanduser().parent.is_dir():
        raise fail(
            f"the directory {str(path.parent)!r} of {option} does not exist; create it or "
            "choose another path"
        )
