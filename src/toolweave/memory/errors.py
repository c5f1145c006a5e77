"""Errors of the memory package: a bad argument to a memory call, as the recoverable tool error
the model reads (it names the field and the accepted values)."""

from __future__ import annotations

from toolweave.tools.errors import InvalidArguments


class MemoryArgumentError(InvalidArguments, ValueError):
    """A memory call got a bad argument; the message names the field and the accepted values."""


__all__ = ["MemoryArgumentError"]
