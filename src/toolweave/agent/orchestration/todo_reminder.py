"""Todo reminders: keep the model aware of its unfinished task list, without repeating it.

When the session's list (written by the built-in `todo_write` tool) has unfinished items, a
`<todo_reminder>` block with the list is appended to the next model request. The block's
content hash is remembered per session, so an unchanged list is injected once, not on every
turn (which would bloat the context and break prompt caching); any change injects it again.
The reminder goes into the request only, never into the stored history.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from toolweave.llm import Message

TODO_REMINDER_TAG = "todo_reminder"
MAX_REMINDED_SESSIONS = 10_000


@runtime_checkable
class TodoSnapshotLike(Protocol):
    @property
    def unfinished(self) -> Sequence[object]: ...

    def render(self) -> str: ...


@runtime_checkable
class TodoSource(Protocol):
    """Where the lists come from: `toolweave.builtins.TodoStore` (what `todo_write` writes)."""

    def get(self, session_id: str | None) -> TodoSnapshotLike: ...


class TodoReminders:
    """Builds the reminder message for a session, once per distinct list."""

    def __init__(self, source: TodoSource) -> None:
        if not isinstance(source, TodoSource):
            raise TypeError(
                "RunLimits(todos=...) needs a todo store with get(session_id) -> snapshot, "
                f"such as toolweave.builtins.TodoStore; got {source!r}"
            )
        self.source = source
        self._last: dict[str, str] = {}

    def reminder(self, session_id: str) -> Message | None:
        """The message to append to the next request, or None (nothing unfinished, or this
        exact list was already shown)."""
        snapshot = self.source.get(session_id)
        if not snapshot.unfinished:
            self._last.pop(session_id, None)
            return None
        text = (
            f"<{TODO_REMINDER_TAG}>\nYour task list has unfinished items; keep it current with "
            f"todo_write as you work:\n{snapshot.render()}\n</{TODO_REMINDER_TAG}>"
        )
        digest = hashlib.sha256(text.encode()).hexdigest()
        if self._last.get(session_id) == digest:
            return None
        self._last.pop(session_id, None)
        self._last[session_id] = digest
        while len(self._last) > MAX_REMINDED_SESSIONS:
            del self._last[next(iter(self._last))]
        return Message.user(text)
