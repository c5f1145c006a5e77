"""Fixtures of the built-in tool tests."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from tests.builtins.fake_http import FakeServer


@pytest.fixture
async def http_server() -> AsyncIterator[FakeServer]:
    fake = FakeServer()
    server = await asyncio.start_server(fake.handle, "127.0.0.1", 0)
    fake.port = server.sockets[0].getsockname()[1]
    async with server:
        yield fake
        server.close()
