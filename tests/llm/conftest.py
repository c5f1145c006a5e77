"""Fixtures for the LLM adapter tests: one loopback replay server per session."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import httpx
import pytest

from tests.llm.replay_server import ReplayServer


@pytest.fixture(scope="session")
def _replay_server() -> Iterator[ReplayServer]:
    server = ReplayServer()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def replay(_replay_server: ReplayServer) -> Iterator[ReplayServer]:
    _replay_server.reset()
    yield _replay_server
    _replay_server.reset()


@pytest.fixture(autouse=True)
def _no_provider_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never see the developer's real keys or base URLs."""
    for name in (
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
        "GEMINI_BASE_URL",
        "DEEPSEEK_API_KEY",
        "DASHSCOPE_API_KEY",
        "VLLM_BASE_URL",
        "OLLAMA_BASE_URL",
        "LLAMACPP_BASE_URL",
    ):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    """One httpx client per test, closed at the end so no socket outlives its loop."""
    async with httpx.AsyncClient(timeout=30) as http:
        yield http
