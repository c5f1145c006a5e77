"""End to end in headless Chromium: an agent run waits on an approval, an admin approves it in
the console page, the run continues; the usage page draws its charts. Screenshots are kept in
build/test-artifacts/ (or $TOOLWEAVE_TEST_ARTIFACTS)."""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.host.console.console_host import gated_weather_agent, serving
from toolweave.mcp import MCPClient, as_tools

ROOT = Path(__file__).resolve().parents[3]
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--window-size=1280,900",
)
TOKEN = "console-token"
WAIT = 30.0  # seconds the browser may take to show something (a bound, not a sleep)


def _artifacts() -> Path:
    path = Path(os.environ.get("TOOLWEAVE_TEST_ARTIFACTS", ROOT / "build" / "test-artifacts"))
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture
def browser() -> Iterator[Any]:
    if not (shutil.which(CHROMIUM) and shutil.which(CHROMEDRIVER)):
        message = "needs Debian's chromium and chromium-driver (.ci/run installs them)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=Service(executable_path=CHROMEDRIVER))
    try:
        yield driver
    finally:
        driver.quit()


def _wait(driver: Any, script: str) -> Any:
    """Poll the page with `script` until it returns something truthy (the browser's own
    WebDriverWait, bounded by WAIT)."""
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, WAIT, poll_frequency=0.05).until(
        lambda d: d.execute_script(script)
    )


def _approve_in_page(driver: Any, url: str, token: str, shot: Path) -> str:
    from selenium.webdriver.common.by import By

    driver.get(f"{url}#token={token}")  # the console token stays in the fragment, never sent
    driver.execute_script("location.hash = '#approvals'")
    _wait(driver, "return document.querySelector('#approvals tbody button.approve')")
    row = driver.find_element(By.CSS_SELECTOR, "#approvals tbody tr").text
    driver.save_screenshot(str(shot))
    driver.find_element(By.CSS_SELECTOR, "#approvals tbody button.approve").click()
    _wait(driver, "return document.querySelectorAll('#approvals tbody tr').length === 0")
    return str(row)


def _usage_in_page(driver: Any, shot: Path) -> dict[str, Any]:
    driver.execute_script("location.hash = '#usage'")
    script = """
      const chart = window.Chart && Chart.getChart(document.getElementById('chart-calls'));
      const tokens = window.Chart && Chart.getChart(document.getElementById('chart-tokens'));
      if (!chart || !tokens || chart.data.labels.length === 0) return null;
      return {labels: chart.data.labels, calls: chart.data.datasets[0].data,
              tokens: tokens.data.datasets[0].data};
    """
    drawn = _wait(driver, script)
    driver.save_screenshot(str(shot))
    driver.execute_script("location.hash = '#queries'")
    _wait(driver, "return document.querySelectorAll('#queries tbody tr').length >= 2")
    drawn["queries"] = driver.execute_script(
        "return [...document.querySelectorAll('#queries tbody tr')].map(r => r.innerText)"
    )
    return dict(drawn)


async def test_an_admin_approves_in_the_browser_and_the_run_continues(browser: Any) -> None:
    artifacts = _artifacts()
    async with serving(token=TOKEN) as host:
        url = host.console_url
        assert url is not None
        auth = {"Authorization": f"Bearer {TOKEN}"}
        async with MCPClient.http(host.config.url, auth) as client:
            tools = await as_tools(client)
            agent = gated_weather_agent(host, tools, "北京", "北京晴，适合出门。", log_run=True)
            run = asyncio.ensure_future(agent.run("北京天气怎么样?"))
            await host.console.approvals.wait_pending()
            assert not run.done()  # the run waits for the admin
            row = await asyncio.to_thread(
                _approve_in_page,
                browser,
                url,
                host.console.token,
                artifacts / "console-approval.png",
            )
            result = await run
            drawn = await asyncio.to_thread(
                _usage_in_page, browser, artifacts / "console-usage.png"
            )
    assert "get_weather" in row and "北京" in row
    assert result.output == "北京晴，适合出门。"
    assert result.invocations[0].ok and result.invocations[0].result.structured["city"] == "北京"
    assert drawn["labels"] == ["get_weather"] and drawn["calls"] == [1]
    assert drawn["tokens"] == [300]  # 2 model calls x 150 tokens, today
    assert any("get_weather" in q and "success" in q for q in drawn["queries"])
    for name in ("console-approval.png", "console-usage.png"):
        assert (artifacts / name).stat().st_size > 10_000  # a real rendered page
