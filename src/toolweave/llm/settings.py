"""`ModelSettings`: the sampling settings an agent sends with every model call.

Kept apart from `ModelRequest` (one call) so an agent holds one validated value and each call
copies it in; an unset field is left out of the provider request, so the provider's default
applies.
"""

from __future__ import annotations

from dataclasses import dataclass

from toolweave.errors import ConfigError


@dataclass(frozen=True, slots=True)
class ModelSettings:
    """`temperature` (0 or more) and `max_tokens` (the answer's token cap, positive) for every
    model call of an agent; None leaves the provider's default."""

    temperature: float | None = None
    max_tokens: int | None = None

    def __post_init__(self) -> None:
        if self.temperature is not None and not self.temperature >= 0:
            raise ConfigError(
                f"ModelSettings(temperature=...) must be 0 or more, got {self.temperature!r}"
            )
        if self.max_tokens is not None and (
            isinstance(self.max_tokens, bool)
            or not isinstance(self.max_tokens, int)
            or self.max_tokens <= 0
        ):
            raise ConfigError(
                f"ModelSettings(max_tokens=...) must be a positive integer, got {self.max_tokens!r}"
            )
