"""The chat's terminal input while a turn runs: `/stop` stops the turn, an approval question
takes the next line, anything else waits its turn.

A chat reads its lines on a daemon thread, one read at a time (`ChatInput.line`), so the loop
goes on meanwhile. During a turn (`ChatInput.run_turn`) a watcher keeps reading: the line
`/stop` cancels the turn (the run's tools see the cancellation, every call in the history gets
a result, so the session stays valid to go on), a line typed while an approval question waits
answers it (`ChatInput.ask`, the `ask` of `terminal_approver`: y, n or a), and any other line
is kept, in order, as the next prompts. A read still going when the turn ends is not
abandoned: the next prompt takes its line, so two threads never read the terminal at once.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from toolweave.cli.chat_commands import STOP_COMMAND, read_in_thread

if TYPE_CHECKING:
    from rich.console import Console

    from toolweave.governance import ApprovalRequest, Approver
    from toolweave.governance.approvals import ApprovalAnswer

APPROVAL_PROMPT = "[bold yellow]  allow? \\[y/n/a][/] "
"""Rich markup: the brackets of the answers are escaped, or Rich would take them for a tag."""
_ANSWERS: dict[str, ApprovalAnswer] = {
    "y": True, "yes": True, "n": False, "no": False, "a": "always", "always": "always",
}  # fmt: skip
_END = None
"""Kept in place of a line when the input ended (or Ctrl-C at a read): the chat ends there."""


class ChatInput:
    """One chat's lines from `read_line` (blocking, e.g. `console.input`); `quiet` reads a line
    without showing the prompt, for the lines typed while a turn runs (default `read_line`);
    `console` shows an approval's prompt."""

    def __init__(
        self,
        read_line: Callable[[], str],
        quiet: Callable[[], str] | None = None,
        console: Console | None = None,
    ) -> None:
        self.read_line = read_line
        self.quiet = quiet if quiet is not None else read_line
        self.console = console
        self._reading: asyncio.Future[str] | None = None
        self._ahead: deque[str | None] = deque()
        self._asked: asyncio.Future[str] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def line(self) -> str:
        """The next line: one typed ahead during a turn, else the read in progress, else a new
        read with the prompt's `read_line`. Raises `EOFError` at the end of input."""
        if self._ahead:
            return self._take()
        return await self._read(self.read_line)

    def _take(self) -> str:
        kept = self._ahead.popleft()
        if kept is _END:
            raise EOFError
        return kept

    async def _read(self, reader: Callable[[], str]) -> str:
        """A line from the terminal: the read in progress, else a new one with `reader`."""
        if self._reading is None:
            self._reading = asyncio.ensure_future(read_in_thread(reader))
        reading = self._reading
        try:
            value = await asyncio.shield(reading)
        except EOFError:
            self._reading = None
            raise
        self._reading = None  # taken: a cancelled waiter leaves it for the next one
        return value

    async def run_turn(self, turn: Coroutine[Any, Any, None]) -> bool:
        """Run `turn` while reading the terminal; True when a typed `/stop` cancelled it."""
        self._loop = asyncio.get_running_loop()
        task = asyncio.ensure_future(turn)
        watcher = asyncio.ensure_future(self._watch(task))
        try:
            await asyncio.wait({task, watcher}, return_when=asyncio.FIRST_COMPLETED)
            if watcher.done() and watcher.result():
                await asyncio.wait({task})
                return True
            await task  # the turn's own error, raised here
            return False
        finally:
            for pending in (task, watcher, self._asked):
                if pending is not None:
                    pending.cancel()  # a question left open frees its worker thread
            await asyncio.gather(task, watcher, return_exceptions=True)
            self._loop = None

    async def _watch(self, turn: asyncio.Future[None]) -> bool:
        while not turn.done():
            try:
                text = await self._read(self.quiet)
            except EOFError:
                self._ahead.append(_END)
                if self._asked is not None and not self._asked.done():
                    self._asked.set_exception(EOFError())
                return False
            asked = self._asked
            if text.strip() == STOP_COMMAND:
                turn.cancel()
                return True
            if asked is not None and not asked.done():
                asked.set_result(text)
            else:
                self._ahead.append(text)
        return False

    def ask(self, prompt: str) -> str:
        """The terminal approver's `ask` (called on a worker thread): print `prompt` and wait for
        the next line the turn's watcher reads. Raises `EOFError` when the input ended."""
        loop = self._loop
        if loop is None:
            return self.read_line()
        return asyncio.run_coroutine_threadsafe(self._answer(prompt), loop).result()

    async def _answer(self, prompt: str) -> str:
        if self.console is not None:
            self.console.print(prompt, end="")
        if self._ahead:  # a line typed before the question answers it, as a pipe's would
            return self._take()
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._asked = future
        try:
            return await future
        finally:
            self._asked = None


def terminal_approver(console: Console, ask: Callable[[str], str]) -> Approver:
    """An approver that asks in the terminal: y (this call), n, or a (always, this session).

    `ask` (blocking, like `console.input`) runs in a worker thread, so the run's other calls
    keep going while the person decides; end of input or Ctrl-C answers no.
    """

    async def approve(request: ApprovalRequest) -> ApprovalAnswer:
        from rich.markup import escape

        console.print(f"[yellow]  ? {escape(request.prompt())}[/]")
        while True:
            try:
                line = await asyncio.to_thread(ask, APPROVAL_PROMPT)
            except (EOFError, KeyboardInterrupt):
                return False
            answer = _ANSWERS.get(line.strip().lower())
            if answer is not None:
                return answer
            console.print("[yellow]  answer y (yes, this call), n (no) or a (always)[/]")

    return approve
