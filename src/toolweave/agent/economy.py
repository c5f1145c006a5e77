"""`ContextEconomy`: how a run keeps its context small without losing what a tool returned.

Two mechanisms, each a named setting:

- **Saved results** (on by default): a tool result longer than the agent's
  `max_tool_result_chars` is saved whole in the session's scratch space, and the model reads its
  head, its tail and a handle; `read_result(handle, offset, limit, pattern)` pages through the
  rest or finds a phrase in it. Nothing in the middle is lost, and the context holds one budget's
  worth per call. The scratch space is a private folder (0700) per session under `scratch_dir`
  (default: a temporary folder removed when the process exits); a handle is an opaque name, never
  a path, and reads only its own session's results. One session keeps at most
  `max_saved_bytes`, all sessions together at most `max_total_saved_bytes`.
- **Model summaries** (opt-in, `summarize=True`): when the history passes the session's
  `max_history_tokens`, the oldest turns are summarised by `summary_model` (default: the agent's
  model) into one message, instead of only stubbing old tool results; the summary's token cost
  is added to the run's usage. Stubbing still follows when the summary alone is not enough.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from toolweave.errors import ConfigError

if TYPE_CHECKING:
    from toolweave.llm import Model

DEFAULT_MAX_SAVED_BYTES = 20_000_000
DEFAULT_MAX_TOTAL_SAVED_BYTES = 500_000_000
DEFAULT_SUMMARY_MAX_TOKENS = 1024
DEFAULT_SUMMARY_INPUT_CHARS = 60_000


@dataclass(frozen=True, slots=True)
class ContextEconomy:
    """Context-economy settings (see the module docstring).

    `save_results` saves a result over the budget with a handle to page through; `scratch_dir`
    keeps the saved results (None: a temporary folder for this process, so a session resumed by
    another process asks the tool again); `max_saved_bytes` bounds what one session keeps and
    `max_total_saved_bytes` what all sessions under `scratch_dir` keep together, in UTF-8 bytes
    (the oldest saved results are dropped past either). `summarize` turns on model
    summaries of old turns, written by `summary_model` (a `Model`, a model string, or None for
    the agent's own) in at most `summary_max_tokens`, from a transcript of at most
    `summary_input_chars` characters.
    """

    save_results: bool = True
    scratch_dir: Path | str | None = None
    max_saved_bytes: int = DEFAULT_MAX_SAVED_BYTES
    max_total_saved_bytes: int = DEFAULT_MAX_TOTAL_SAVED_BYTES
    summarize: bool = False
    summary_model: Model | str | None = None
    summary_max_tokens: int = DEFAULT_SUMMARY_MAX_TOKENS
    summary_input_chars: int = DEFAULT_SUMMARY_INPUT_CHARS

    def __post_init__(self) -> None:
        for name, least in (
            ("max_saved_bytes", 1),
            ("max_total_saved_bytes", 1),
            ("summary_max_tokens", 16),
            ("summary_input_chars", 1000),
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ConfigError(
                    f"ContextEconomy({name}={value!r}) must be an integer of at least {least}"
                )
        if self.summary_model is not None and not self.summarize:
            raise ConfigError(
                "ContextEconomy(summary_model=...) is set but summarize is False; pass "
                "summarize=True to have old turns summarised"
            )

    @classmethod
    def of(cls, value: ContextEconomy | bool | None) -> ContextEconomy | None:
        """`Agent(context=...)`: None or True for the defaults, False for none at all."""
        if value is None or value is True:
            return cls()
        if value is False:
            return None
        if not isinstance(value, ContextEconomy):
            raise TypeError(
                f"Agent(context=...) must be a ContextEconomy or a bool, got {type(value).__name__}"
            )
        return value
