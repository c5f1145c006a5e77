"""Quota: reserve before, settle after, idempotent, atomic across connections, per UTC day."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

import pytest

from tests.support import store_args
from toolweave.accounting import Quota, QuotaExceeded

__all__ = ["store_args"]

DAY = datetime(2026, 3, 1, 15, 30, tzinfo=UTC).timestamp()


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


async def test_reserve_settle_and_refusal(store_args: dict[str, Any]) -> None:
    clock = Clock(DAY)
    quota = Quota(
        per_session_daily_tokens=1000, global_daily_tokens=1500, clock=clock, **store_args
    )
    try:
        rid = await quota.reserve("chat-a", tokens=100)
        await quota.settle(rid, tokens=700)  # the real usage replaces the estimate
        usage = await quota.usage("chat-a")
        assert (usage.session_tokens, usage.global_tokens) == (700, 700)
        with pytest.raises(QuotaExceeded) as caught:
            await quota.reserve("chat-a", tokens=400)
        err = caught.value
        assert (err.limit, err.used, err.requested, err.scope) == (1000, 700, 400, "chat-a")
        assert err.reset_at == datetime(2026, 3, 2, tzinfo=UTC)
        assert "resets at 2026-03-02T00:00:00+00:00" in str(err)
        # The refusal counted nothing, for the session or globally.
        assert (await quota.usage("chat-a")).global_tokens == 700
        # Another session has its own counter but shares the global one.
        rid_b = await quota.reserve("会话-b", tokens=500)
        await quota.settle(rid_b, tokens=800)
        with pytest.raises(QuotaExceeded) as caught:
            await quota.reserve("chat-c", tokens=1)
        assert caught.value.scope == "global" and caught.value.limit == 1500
        # A new UTC day has fresh keys.
        clock.now += 86400
        fresh = await quota.usage("chat-a")
        assert (fresh.session_tokens, fresh.global_tokens, fresh.day) == (0, 0, "2026-03-02")
        await quota.reserve("chat-a", tokens=10)
    finally:
        await quota.close()


async def test_retries_are_idempotent(store_args: dict[str, Any]) -> None:
    quota = Quota(per_session_daily_tokens=1000, clock=Clock(DAY), **store_args)
    try:
        rid = await quota.reserve("s", tokens=50, reservation_id="call-1")
        assert await quota.reserve("s", tokens=50, reservation_id="call-1") == rid
        await quota.settle(rid, tokens=60)
        await quota.settle(rid, tokens=60)
        await quota.add("s", tokens=25, reservation_id="bg-1")
        await quota.add("s", tokens=25, reservation_id="bg-1")
        assert (await quota.usage("s")).session_tokens == 85
    finally:
        await quota.close()


async def test_used_up_day_refuses_even_an_empty_estimate(store_args: dict[str, Any]) -> None:
    quota = Quota(per_session_daily_tokens=100, clock=Clock(DAY), **store_args)
    try:
        await quota.settle(await quota.reserve("s", tokens=0), tokens=100)
        with pytest.raises(QuotaExceeded):
            await quota.reserve("s", tokens=0)
    finally:
        await quota.close()


async def test_calls_quota_for_served_tools(store_args: dict[str, Any]) -> None:
    quota = Quota(per_session_daily_calls=2, clock=Clock(DAY), **store_args)
    try:
        await quota.reserve("client", calls=1)
        await quota.reserve("client", calls=1)
        with pytest.raises(QuotaExceeded) as caught:
            await quota.reserve("client", calls=1)
        assert caught.value.metric == "calls"
        await quota.reserve("client", tokens=10**6)  # the tokens metric has no limit here
    finally:
        await quota.close()


async def test_concurrent_reservations_never_pass_the_limit(store_args: dict[str, Any]) -> None:
    """Four stores (four connections; on Postgres four sessions) race for 10 slots of 100."""
    quotas = [Quota(global_daily_tokens=1000, clock=Clock(DAY), **store_args) for _ in range(4)]
    try:

        async def take(quota: Quota, n: int) -> bool:
            try:
                await quota.reserve(f"s{n}", tokens=100)
            except QuotaExceeded:
                return False
            return True

        results = await asyncio.gather(*(take(quotas[n % 4], n) for n in range(40)))
        assert sum(results) == 10
        assert (await quotas[0].usage("s0")).global_tokens == 1000
    finally:
        for quota in quotas:
            await quota.close()


def test_bad_limits_are_named() -> None:
    with pytest.raises(ValueError, match="global_daily_tokens"):
        Quota(global_daily_tokens=-1)
    with pytest.raises(ValueError, match=r"either path= .* or dsn="):
        Quota("a.db", dsn="postgresql://x")
