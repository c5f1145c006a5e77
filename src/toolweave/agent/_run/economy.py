"""Context economy inside the loop: saved results, and old turns summarised by a model.

`Agent(context=ContextEconomy(...))` hands the run an `AgentEconomy`: it registers
`read_result` (the saved results' pager, `result_pages.py`) and, with `summarize=True`, writes
model summaries when the history passes its budget (`compact_history`, which the loop calls
before each model call). A summary replaces the oldest whole turns with one user message: the
cut falls right before an assistant message, so every tool call kept has its result, and the
kept turns take at most half the budget. A failed or empty summary changes nothing (the stubbing
compaction still runs), and the summary's tokens are added to the run's usage.
"""

from __future__ import annotations

import json
import logging

from toolweave.agent._run.result_pages import READ_RESULT, ResultPages, read_result_tool
from toolweave.agent.economy import ContextEconomy
from toolweave.agent.session import Session, message_tokens
from toolweave.errors import ConfigError
from toolweave.llm import (
    Message,
    Model,
    ModelRequest,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    Usage,
)
from toolweave.tools import ToolRegistry

_log = logging.getLogger(__name__)

SUMMARY_PREFIX = "[Summary of the earlier conversation, written to save context]"
_INSTRUCTIONS = (
    "You compress the start of a conversation between a user and an AI agent that uses tools, "
    "so the agent can continue without it. Write a concise summary in the conversation's own "
    "language: the user's requests (quoted when short), decisions made, facts and values found "
    "by tools (names, numbers, paths, identifiers, saved-result handles), what was done and "
    "what is still open. Leave out pleasantries and anything the agent no longer needs."
)
_PAGE_ROOM = 400  # read_result's header, inside the result budget
_PART_CHARS = 4000  # the most of one message part a transcript shows


class AgentEconomy:
    """One agent's context-economy settings, ready for its runs (see the module docstring)."""

    def __init__(self, settings: ContextEconomy, model: Model, max_result_chars: int) -> None:
        self.settings = settings
        self.pages = (
            ResultPages(
                settings.scratch_dir, settings.max_saved_bytes, settings.max_total_saved_bytes
            )
            if settings.save_results
            else None
        )
        self.page_chars = max(max_result_chars - _PAGE_ROOM, 200)
        summary_model = settings.summary_model
        if isinstance(summary_model, str):
            from toolweave.llm import model_from_string  # adapters load only when asked for

            summary_model = model_from_string(summary_model)
        self.summary_model = (summary_model or model) if settings.summarize else None

    def install(self, registry: ToolRegistry) -> None:
        """Register `read_result` when results are saved and the agent has tools (an agent
        without tools gets no results to page through)."""
        if self.pages is None or not registry.names():
            return
        if READ_RESULT in registry:
            raise ConfigError(
                f"Agent(context=...) adds the tool {READ_RESULT!r}, but the agent already has a "
                "tool of that name; rename yours or pass ContextEconomy(save_results=False)"
            )
        registry.register(read_result_tool(self.pages, self.page_chars))

    async def summarize(self, session: Session) -> Usage | None:
        """Summarise the oldest turns of `session` into one message; the summary's usage, or
        None when nothing was summarised."""
        assert self.summary_model is not None
        messages = session.messages
        cut = _cut(messages, session.max_history_tokens // 2)
        if cut is None:
            return None
        transcript = _transcript(messages[:cut], self.settings.summary_input_chars)
        request = ModelRequest(
            messages=[Message.system(_INSTRUCTIONS), Message.user(transcript)],
            max_tokens=self.settings.summary_max_tokens,
            cache_key=session.id,
        )
        try:
            response = await self.summary_model.complete(request)
        except Exception as exc:  # a summary is an optimisation: stubbing still follows
            _log.warning(
                "summarising session %s failed (%s); old results are stubbed", session.id, exc
            )
            return None
        summary = response.message.text.strip()
        if not summary:
            return None
        session.replace_prefix(cut, Message.user(f"{SUMMARY_PREFIX}\n{summary}"))
        if session.store is not None:
            await session.store.rewrite(session.id, session.messages)
        return response.usage or Usage()


async def compact_history(session: Session, economy: AgentEconomy | None) -> tuple[bool, Usage]:
    """Bring the history under its budget: a model summary first when the agent asks for one,
    then stubs of old tool results. Whether the history was rewritten, and the summary's cost."""
    cost = None
    if (
        economy is not None
        and economy.summary_model is not None
        and session.tokens() > session.max_history_tokens
    ):
        cost = await economy.summarize(session)
    stubbed = await session.compact()
    return bool(stubbed) or cost is not None, cost or Usage()


def _cut(messages: list[Message], room: int) -> int | None:
    """The earliest assistant message after which the history fits `room` tokens (never the
    first message); None when even the last turn does not fit."""
    best, tail = None, 0
    for index in range(len(messages) - 1, 0, -1):
        tail += message_tokens(messages[index])
        if tail > room:
            break
        if messages[index].role == "assistant":
            best = index
    return best


def _transcript(messages: list[Message], limit: int) -> str:
    """The messages as plain text for the summariser, each part capped, the whole at `limit`
    characters (its head and the most recent end, which matter most)."""
    lines: list[str] = []
    for message in messages:
        for part in message.parts:
            if isinstance(part, ToolResultPart):
                text = f"{message.role} (result of {part.name}): {part.text}"
            elif isinstance(part, ToolCallPart):
                arguments = json.dumps(part.arguments, ensure_ascii=False)
                text = f"{message.role} calls {part.name}: {arguments}"
            elif isinstance(part, TextPart):
                text = f"{message.role}: {part.text}"
            else:  # thinking, images, a provider's own tool records
                continue
            if len(text) > _PART_CHARS:
                text = text[: _PART_CHARS // 2] + " [...] " + text[-_PART_CHARS // 2 :]
            lines.append(text)
    whole = "\n".join(lines)
    if len(whole) > limit:
        whole = (
            whole[: limit // 3] + "\n[... the middle is left out ...]\n" + whole[-limit * 2 // 3 :]
        )
    return "Summarise this conversation:\n\n" + whole
