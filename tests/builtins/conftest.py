"""Fixtures of the built-in tool tests."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.builtins.fake_http import FakeServer, serving_fake


@pytest.fixture
async def http_server() -> AsyncIterator[FakeServer]:
    async with serving_fake() as fake:
        yield fake
