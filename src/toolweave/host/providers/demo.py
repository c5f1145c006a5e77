"""The demo provider: offline example tools (weather, unit conversion, a safe calculator)."""

from __future__ import annotations

from toolweave.host.config import HostConfig
from toolweave.tools.base import Tool


class DemoProvider:
    """The offline demo tools (weather, unit conversion, a safe calculator)."""

    name = "demo"

    def __init__(self, config: HostConfig) -> None:
        self.config = config

    def describe(self) -> str:
        return "the offline demo tools get_weather, celsius_to_fahrenheit and calculate"

    async def tools(self) -> list[Tool]:
        from toolweave.tools.demo import DEMO_TOOLS

        return list(DEMO_TOOLS)

    async def close(self) -> None:
        return None
