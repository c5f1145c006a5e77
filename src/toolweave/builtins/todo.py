"""`todo_write`: the agent's task list for one session, replaced whole on every call.

The same contract as the mainstream agents' todo tools: the model sends the complete list each
time (so there is no partial state to get wrong), statuses are pending / in_progress /
completed, at most one item is in progress, the item count and text length are capped, and an
empty list clears it. Lists live in memory per session (`ctx.session_id`); `TodoStore` is the
public accessor the agent layer reads to remind the model of unfinished work.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from toolweave.builtins._output import check_positive
from toolweave.tools.base import Tool
from toolweave.tools.context import ToolContext
from toolweave.tools.errors import InvalidArguments
from toolweave.tools.function_tool import tool

DEFAULT_MAX_ITEMS = 50
"""Items one todo list may hold."""
DEFAULT_MAX_ITEM_CHARS = 500
"""Characters one item's text may have."""

TodoStatus = Literal["pending", "in_progress", "completed"]
_NO_SESSION = ""


class TodoItem(BaseModel):
    """One task: what to do and how far it is."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    content: Annotated[str, Field(description="The task, in imperative form, e.g. 'Run tests'")]
    status: Annotated[TodoStatus, Field(description="pending, in_progress or completed")]


@dataclass(frozen=True, slots=True)
class TodoSnapshot:
    """A session's list as the agent layer reads it."""

    items: tuple[TodoItem, ...]

    @property
    def unfinished(self) -> tuple[TodoItem, ...]:
        return tuple(i for i in self.items if i.status != "completed")

    def render(self) -> str:
        """One line per item: `[status] content`, in list order."""
        return "\n".join(f"[{i.status}] {i.content}" for i in self.items)


class TodoStore:
    """In-memory todo lists keyed by session id; safe to share between threads."""

    def __init__(self) -> None:
        self._lists: dict[str, tuple[TodoItem, ...]] = {}
        self._lock = threading.Lock()

    def get(self, session_id: str | None) -> TodoSnapshot:
        with self._lock:
            return TodoSnapshot(self._lists.get(session_id or _NO_SESSION, ()))

    def replace(self, session_id: str | None, items: list[TodoItem]) -> None:
        with self._lock:
            if items:
                self._lists[session_id or _NO_SESSION] = tuple(items)
            else:
                self._lists.pop(session_id or _NO_SESSION, None)


def todo_tool(
    store: TodoStore | None = None,
    *,
    max_items: int = DEFAULT_MAX_ITEMS,
    max_item_chars: int = DEFAULT_MAX_ITEM_CHARS,
) -> Tool:
    """The `todo_write` tool over `store` (a fresh `TodoStore` when omitted; pass your own to
    read the lists elsewhere, as the agent's todo reminders do)."""
    check_positive("max_items", max_items)
    check_positive("max_item_chars", max_item_chars)
    lists = store if store is not None else TodoStore()

    @tool(read_only=False, destructive=False, idempotent=True, open_world=False)
    def todo_write(todos: list[TodoItem], ctx: ToolContext) -> str:
        """Replace your task list for this session with `todos` (send the whole list every
        time; an empty list clears it). Keep exactly one item in_progress while working.

        Args:
            todos: The complete list, in order.
        """
        if len(todos) > max_items:
            raise InvalidArguments(
                f"todos has {len(todos)} items; at most {max_items} (max_items) are allowed: "
                "merge small steps",
                tool="todo_write",
            )
        for index, item in enumerate(todos):
            if not item.content.strip():
                raise InvalidArguments(f"todos[{index}].content is empty", tool="todo_write")
            if len(item.content) > max_item_chars:
                raise InvalidArguments(
                    f"todos[{index}].content has {len(item.content)} characters; at most "
                    f"{max_item_chars} (max_item_chars)",
                    tool="todo_write",
                )
        active = [i for i, item in enumerate(todos) if item.status == "in_progress"]
        if len(active) > 1:
            raise InvalidArguments(
                f"todos{active} are all in_progress; mark exactly one in_progress and the "
                "others pending or completed",
                tool="todo_write",
            )
        lists.replace(ctx.session_id, todos)
        if not todos:
            return "todo list cleared"
        done = sum(item.status == "completed" for item in todos)
        return (
            f"todo list saved: {len(todos)} items, {done} completed\n"
            + lists.get(ctx.session_id).render()
        )

    return todo_write
