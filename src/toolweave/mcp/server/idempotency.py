"""Idempotency keys of 2026-era `tools/call` requests: a retried call runs at most once.

A 2026-07-28 request has no session, so nothing ties a retry to the attempt whose answer was
lost (a replica killed mid-call, a dropped connection): the client names the call itself with
`params._meta["io.toolweave/idempotency-key"]` (`META_IDEMPOTENCY_KEY`; `MCPClient` sends one
on every call). The server records the key under the caller's principal before the tool runs,
and the response before it is sent. A retry with the same key gets the recorded response (its
JSON-RPC id set to the retry's), or, while the first attempt has none (still running, or its
replica died mid-call), an error saying the call ran at most once and did not complete; the
tool is never started twice. A request without the key is served as before. Each round of
an input-required call (resent with the same key and the server's `requestState`) is a call of
its own (`round_key`).

Where the records live: with `[serve].store_dsn`, in the same Postgres table as the 2025-era
call outcomes (`PostgresMCPSessionStore.claim` / `settle`, rows scoped `key:<principal>`), so
any replica answers a retry; without it, `MemoryCallRecords` in this process. Keys are kept
`idempotency_ttl` seconds (an `asgi_app` option, `[serve].idempotency_ttl`).
"""

from __future__ import annotations

import hashlib
import time
from collections import OrderedDict
from typing import Any, Protocol

from toolweave.mcp.shared.constants import (
    DEFAULT_IDEMPOTENCY_TTL,
    DEFAULT_MAX_IDEMPOTENCY_KEYS,
    MAX_IDEMPOTENCY_KEY_CHARS,
    META_IDEMPOTENCY_KEY,
)

KEY_SCOPE = "key:"
"""Prefix of the scope a key is recorded under (then the principal; "" when anonymous)."""
RUNNING = "running"
"""`claim`'s answer for a call recorded without an outcome yet."""


class CallRecords(Protocol):
    """Where calls are claimed before they run and their responses recorded."""

    async def claim(
        self, scope: str, call_id: Any, ttl: float | None = None
    ) -> dict[str, Any] | str | None: ...

    async def settle(self, scope: str, call_id: Any, response: dict[str, Any]) -> None: ...


def idempotency_key(meta: dict[str, Any]) -> str | None:
    """The request's idempotency key (None without one); `ValueError` naming the fix when it is
    not a non-empty string of at most `MAX_IDEMPOTENCY_KEY_CHARS` characters."""
    key = meta.get(META_IDEMPOTENCY_KEY)
    if key is None:
        return None
    if type(key) is not str or not 0 < len(key) <= MAX_IDEMPOTENCY_KEY_CHARS:
        raise ValueError(
            f"params._meta[{META_IDEMPOTENCY_KEY!r}] must be a non-empty string of at most "
            f"{MAX_IDEMPOTENCY_KEY_CHARS} characters (e.g. a UUID), not {key!r:.60}"
        )
    return key


def round_key(key: str, params: Any) -> str:
    """What a call is recorded under: its key, and for a later round of an input-required call
    (the client resending it with `inputResponses` and the server's `requestState`, the same
    key) the round's state too, so each round runs at most once and the next one still runs."""
    state = params.get("requestState") if isinstance(params, dict) else None
    if not isinstance(state, str):
        return key
    return f"{key}#{hashlib.sha256(state.encode()).hexdigest()[:32]}"


def ran_once_message(key: str) -> str:
    """The refusal of a retry whose first attempt has no recorded outcome."""
    return (
        f"the call with idempotency key {key!r} was already received and has no outcome: it ran "
        "at most once and did not complete (its replica stopped while running it, or it is still "
        "running); it is not run again: send a new key to run it again"
    )


class MemoryCallRecords:
    """`CallRecords` of one process (no `store_dsn`): the last `max_keys` calls, each kept the
    `ttl` seconds its claim names (`DEFAULT_IDEMPOTENCY_TTL` when it names none)."""

    def __init__(self, max_keys: int = DEFAULT_MAX_IDEMPOTENCY_KEYS) -> None:
        if max_keys <= 0:
            raise ValueError(f"MemoryCallRecords: max_keys must be > 0, not {max_keys}")
        self.max_keys = max_keys
        self._records: OrderedDict[tuple[str, str], tuple[float, dict[str, Any] | None]] = (
            OrderedDict()
        )

    async def claim(
        self, scope: str, call_id: Any, ttl: float | None = None
    ) -> dict[str, Any] | str | None:
        now = time.monotonic()
        records = self._records
        oldest = now - (DEFAULT_IDEMPOTENCY_TTL if ttl is None else ttl)
        while records and next(iter(records.values()))[0] < oldest:
            records.popitem(last=False)
        found = records.get((scope, str(call_id)))
        if found is not None:
            return found[1] if found[1] is not None else RUNNING
        while len(records) >= self.max_keys:
            records.popitem(last=False)
        records[(scope, str(call_id))] = (now, None)
        return None

    async def settle(self, scope: str, call_id: Any, response: dict[str, Any]) -> None:
        found = self._records.get((scope, str(call_id)))
        if found is not None:
            self._records[(scope, str(call_id))] = (found[0], response)
