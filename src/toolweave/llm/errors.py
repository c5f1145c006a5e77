"""Errors of the model layer: a provider that refuses or fails, a model that cannot be built.

Kept apart from the message types so the tree of every error the library raises reads from the
`errors` modules alone (`toolweave.errors` draws it).
"""

from __future__ import annotations

from toolweave.errors import ConfigError, ToolweaveError


class ModelError(ToolweaveError):
    """A provider refused or failed, in the provider's own words.

    `status` is the HTTP status (None for an error inside a stream or a 200 body), `code` the
    provider's error type or code when it gave one (`rate_limit_error`, `RESOURCE_EXHAUSTED`,
    `tool_use_failed`, ...), and `retryable` says whether trying again may help: only rate
    limits, overload, timeouts and server faults are, never a request the provider refused.
    """

    def __init__(
        self,
        status: int | None,
        message: str,
        retryable: bool = False,
        code: str | None = None,
    ) -> None:
        super().__init__(f"{status}: {message}" if status is not None else message)
        self.status = status
        self.message = message
        self.retryable = retryable
        self.code = code


class ModelConfigError(ConfigError):
    """A model cannot be built: a missing API key, a bad model string, a bad option.

    `setting` names what to change (an environment variable or argument); the message is one
    line that says how, so command-line tools can print it as is.
    """

    def __init__(self, message: str, setting: str | None = None) -> None:
        super().__init__(message)
        self.setting = setting


__all__ = ["ModelConfigError", "ModelError"]
