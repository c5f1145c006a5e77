"""A conversation that outlives one run: its history, its store, and compaction.

Compaction replaces the oldest tool results with short stubs once the history passes a token
budget; tool output is the bulk of an agent's context and the cheapest to re-fetch, while the
user's words and the model's answers carry the thread. The most recent results are never
touched, because the model is usually still working with them.
"""

from __future__ import annotations

import dataclasses
import json
import uuid
from collections.abc import Sequence

from toolweave.agent._run.result_pages import SAVED_HANDLE
from toolweave.agent.errors import SessionBusy
from toolweave.agent.stores.base import SessionStore
from toolweave.errors import ConfigError
from toolweave.governance.approvals import ApprovalState
from toolweave.governance.pipeline import PERMISSION_MODES, PermissionMode
from toolweave.llm import (
    ImagePart,
    Message,
    ProviderToolPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolResultPart,
)
from toolweave.storage.text import estimate_tokens
from toolweave.tools import ToolRegistry

DEFAULT_MAX_HISTORY_TOKENS = 100_000
DEFAULT_KEEP_RECENT_RESULTS = 4
_STUB_PREFIX = "[compacted:"
_IMAGE_TOKENS = 800


def message_tokens(message: Message) -> int:
    total = 4  # role and framing
    for part in message.parts:
        if isinstance(part, TextPart | ThinkingPart):
            total += estimate_tokens(part.text)
        elif isinstance(part, ToolCallPart):
            total += estimate_tokens(part.name) + estimate_tokens(
                json.dumps(part.arguments, ensure_ascii=False)
            )
        elif isinstance(part, ToolResultPart):
            total += estimate_tokens(part.text)
            if not isinstance(part.content, str):
                total += _IMAGE_TOKENS * sum(isinstance(c, ImagePart) for c in part.content)
        elif isinstance(part, ImagePart):
            total += _IMAGE_TOKENS
        elif isinstance(part, ProviderToolPart):  # a provider's search results can be long
            total += estimate_tokens(json.dumps(part.data, ensure_ascii=False))
    return total


class Session:
    """The history shared by successive runs; persisted when a `store` is given.

    `max_history_tokens` is the compaction budget (estimated tokens); `keep_recent_results`
    tool results at the end are never compacted. `permission_mode` takes Claude Code's names
    ("default", "acceptEdits", "plan", "dontAsk", "bypassPermissions") and may be switched
    between runs; `plan_mode=True` is "plan". `requester` names who starts the runs (approvers
    see it); `approvals` remembers "always" answers for this session.

    With a `store`, the history is read on first use: a run loads it before its first turn,
    and `await session.load()` reads it earlier (to show it before running).
    """

    def __init__(
        self,
        id: str | None = None,
        plan_mode: bool = False,
        store: SessionStore | None = None,
        *,
        max_history_tokens: int = DEFAULT_MAX_HISTORY_TOKENS,
        keep_recent_results: int = DEFAULT_KEEP_RECENT_RESULTS,
        permission_mode: PermissionMode | None = None,
        requester: str | None = None,
    ) -> None:
        if max_history_tokens <= 0:
            raise ConfigError("Session(max_history_tokens=...) must be positive")
        if keep_recent_results < 0:
            raise ConfigError("Session(keep_recent_results=...) must be 0 or more")
        self.id = id if id is not None else uuid.uuid4().hex
        self.permission_mode = permission_mode or ("plan" if plan_mode else "default")
        self._mode_chosen = permission_mode is not None or plan_mode
        self.requester = requester
        self.approvals = ApprovalState()
        self.started = False  # SessionStart hooks fired (once per Session object)
        self.store = store
        self.max_history_tokens = max_history_tokens
        self.keep_recent_results = keep_recent_results
        self.messages: list[Message] = []
        self.dropped = 0
        self._loaded = store is None
        self._busy = False
        self._overlay: tuple[ToolRegistry, ToolRegistry] | None = None
        # Token estimates by message identity (messages are replaced, never edited in place),
        # so checking the budget every turn costs O(new messages), not O(history).
        self._token_cache: dict[int, tuple[Message, int]] = {}

    @property
    def permission_mode(self) -> PermissionMode:
        return self._permission_mode

    @permission_mode.setter
    def permission_mode(self, mode: PermissionMode) -> None:
        if mode not in PERMISSION_MODES:
            raise ConfigError(
                f"Session(permission_mode={mode!r}) is not a mode; use one of "
                f"{', '.join(PERMISSION_MODES)}"
            )
        self._permission_mode = mode
        self._mode_chosen = True

    @property
    def plan_mode(self) -> bool:
        """True while only read-only tools (and todo_write) may run."""
        return self._permission_mode == "plan"

    @plan_mode.setter
    def plan_mode(self, on: bool) -> None:
        self.permission_mode = "plan" if on else "default"

    def adopt_mode(self, mode: PermissionMode) -> None:
        """Enter `mode` (the agent's `Governance(mode=...)`) unless this session's mode was
        chosen already: given to the constructor, set since, or adopted by an earlier run."""
        if not self._mode_chosen:
            self.permission_mode = mode

    def tool_overlay(self, shared: ToolRegistry) -> ToolRegistry:
        """This session's layer over `shared`: tools loaded mid-session (MCP servers opened
        on demand) are registered here and shadow the shared ones, for this session only."""
        if self._overlay is None or self._overlay[0] is not shared:
            self._overlay = (shared, shared.overlay())
        return self._overlay[1]

    async def load(self) -> list[Message]:
        """Read the stored history, once (later calls return what is in memory)."""
        if not self._loaded:
            assert self.store is not None
            self.messages[:0] = await self.store.load(self.id)
            self._loaded = True
        return self.messages

    async def commit(self, messages: Sequence[Message]) -> None:
        """Persist messages already appended to `self.messages` (one transaction)."""
        if self.store is not None and messages:
            await self.store.append(self.id, messages)

    def tokens(self) -> int:
        """The estimated size of the history in tokens."""
        cache, total = self._token_cache, 0
        for message in self.messages:
            hit = cache.get(id(message))
            if hit is None or hit[0] is not message:
                hit = cache[id(message)] = (message, message_tokens(message))
            total += hit[1]
        if len(cache) > 2 * len(self.messages) + 64:
            live = {id(m) for m in self.messages}
            self._token_cache = {k: v for k, v in cache.items() if k in live}
        return total

    async def clear(self) -> None:
        """Forget the history (and erase it from the store)."""
        self.messages.clear()
        self._token_cache.clear()
        self._loaded = True
        if self.store is not None:
            await self.store.clear(self.id)

    def replace_prefix(self, end: int, summary: Message) -> None:
        """Put `summary` in place of the first `end` messages (a model summary of them);
        `dropped` counts the messages removed this way, so a run knows where its own begin."""
        self.messages[:end] = [summary]
        self.dropped += end - 1

    async def compact(self) -> int:
        """Stub old tool results until the history fits the budget; returns how many."""
        total = self.tokens()
        if total <= self.max_history_tokens:
            return 0
        positions = [
            (m, p)
            for m, message in enumerate(self.messages)
            for p, part in enumerate(message.parts)
            if isinstance(part, ToolResultPart)
        ]
        keep = len(positions) - self.keep_recent_results
        compacted = 0
        for m, p in positions[: max(keep, 0)]:
            if total <= self.max_history_tokens:
                break
            message = self.messages[m]
            part = message.parts[p]
            assert isinstance(part, ToolResultPart)
            if isinstance(part.content, str) and part.content.startswith(_STUB_PREFIX):
                continue
            before = message_tokens(message)
            saved = SAVED_HANDLE.search(part.text)
            again = (
                f'read_result(handle="{saved.group(1)}") still reads it whole'
                if saved is not None
                else "call the tool again if you need it"
            )
            stub = (
                f"{_STUB_PREFIX} this {part.name} result ({len(part.text)} characters) was "
                f"removed to save context; {again}]"
            )
            parts = list(message.parts)
            parts[p] = dataclasses.replace(part, content=stub)
            self.messages[m] = Message(message.role, parts)
            total -= before - message_tokens(self.messages[m])
            compacted += 1
        if compacted and self.store is not None:
            await self.store.rewrite(self.id, self.messages)
        return compacted

    def acquire(self) -> None:
        if self._busy:
            raise SessionBusy(
                f"session {self.id!r} is already in a run; wait for it to finish or give the "
                "second run its own Session"
            )
        self._busy = True

    def release(self) -> None:
        self._busy = False

    def __repr__(self) -> str:
        return f"Session(id={self.id!r}, messages={len(self.messages)}, store={self.store!r})"
