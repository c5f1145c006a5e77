"""End to end in headless Chromium: an agent run waits on an approval, an admin approves it in
the console page, the run continues; the usage page draws its charts, read back from the
Chart.js instances (every tool name on its axis and wide enough to be read, value axes from 0
with integer ticks for counts, "no data yet" before any call), and the overview shows whole
multi-line descriptions, wrapped. Screenshots are kept in build/test-artifacts/ (or
$TOOLWEAVE_TEST_ARTIFACTS)."""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.host.console.console_host import gated_weather_agent, serving
from toolweave.mcp import MCPClient, as_tools
from toolweave.tools import FunctionTool

ROOT = Path(__file__).resolve().parents[3]
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
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
def browser(tmp_path: Path) -> Iterator[Any]:
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
    options.add_argument(f"--user-data-dir={tmp_path / 'chromium-profile'}")  # a fresh profile
    driver = webdriver.Chrome(options=options, service=Service(executable_path=CHROMEDRIVER))
    try:
        yield driver
    finally:
        driver.quit()


def _wait(driver: Any, script: str, *args: Any) -> Any:
    """Poll the page with `script` (given `args`) until it returns something truthy (the
    browser's own WebDriverWait, bounded by WAIT)."""
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, WAIT, poll_frequency=0.05).until(
        lambda d: d.execute_script(script, *args)
    )


def _approve_in_page(driver: Any, url: str, token: str, shot: Path) -> str:
    from selenium.webdriver.common.by import By

    driver.get(f"{url}#token={token}")  # the console token stays in the fragment, never sent
    driver.execute_script("location.hash = '#approvals'")
    _wait(driver, "return document.querySelector('#approvals tbody button.approve')")
    # The page redraws the table on every refresh, so an element found a moment ago may be
    # gone: each step looks its element up again until it acts on a current one.
    row = _on_current(driver, lambda d: d.find_element(By.CSS_SELECTOR, "#approvals tbody tr").text)
    driver.save_screenshot(str(shot))

    def approve(d: Any) -> bool:
        d.find_element(By.CSS_SELECTOR, "#approvals tbody button.approve").click()
        return True

    _on_current(driver, approve)
    _wait(driver, "return document.querySelectorAll('#approvals tbody tr').length === 0")
    return str(row)


def _on_current(driver: Any, step: Callable[[Any], Any]) -> Any:
    """`step(driver)`, repeated while the element it found was redrawn under it (bounded by
    WAIT, as `_wait`)."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(
        driver, WAIT, poll_frequency=0.05, ignored_exceptions=(StaleElementReferenceException,)
    )
    return wait.until(step)


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
        async with MCPClient.http(host.url, auth) as client:
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
    assert any(
        "get_weather" in q and "ran" in q and "principal:token:" in q for q in drawn["queries"]
    )
    for name in ("console-approval.png", "console-usage.png"):
        assert (artifacts / name).stat().st_size > 10_000  # a real rendered page


DESCRIPTION = (
    "查询气象站的天气预报：未来七天的气温、湿度和风力。\n"
    "Second line: the forecast for every city the station network covers, in Celsius, "
    "with humidity and wind, long enough that the description column has to wrap it."
)
# Long names, enough of them that a category axis left to autoSkip drops some.
STATIONS = [f"station_{n:02d}_weather_forecast_lookup" for n in range(16)]
CHARTS = ("chart-calls", "chart-latency", "chart-tokens")

_EMPTY_STATE = """
  if (document.body.dataset.loaded !== 'usage') return null;
  return [...document.querySelectorAll('#page-usage figure')].map((f) => {
    const note = f.querySelector('.empty');
    return {text: note && note.offsetParent !== null ? note.innerText : null,
            chart: Chart.getChart(f.querySelector('canvas')) !== undefined,
            canvasShown: f.querySelector('canvas').offsetParent !== null};
  });
"""

_DRAWN = """
  const expected = arguments[0];
  const out = {};
  for (const id of arguments[1]) {
    const chart = Chart.getChart(document.getElementById(id));
    if (!chart) return null;
    const scales = Object.values(chart.scales);
    const names = scales.find((s) => s.type === 'category');
    const values = scales.find((s) => s.type === 'linear');
    const labels = names.ticks.map((t) => names.getLabelForValue(t.value));
    if (id === 'chart-calls' && labels.length !== expected) return null;  // not yet redrawn
    const ctx = chart.ctx;
    ctx.save();
    ctx.font = Chart.helpers.toFont(names.options.ticks.font).string;
    const widest = Math.max(...labels.map((l) => ctx.measureText(l).width));
    ctx.restore();
    const pixels = names.ticks.map((t, i) => names.getPixelForTick(i));
    const gaps = pixels.slice(1).map((p, i) => Math.abs(p - pixels[i]));
    out[id] = {labels, widest, axisWidth: names.width, left: names.left,
               minGap: gaps.length ? Math.min(...gaps) : null,
               min: values.min, ticks: values.ticks.map((t) => t.value),
               data: chart.data.datasets.map((d) => d.data)};
  }
  out.empty = [...document.querySelectorAll('#page-usage .empty')].filter(
    (e) => e.offsetParent !== null).length;
  return out;
"""

_DESCRIPTION_CELL = """
  const row = [...document.querySelectorAll('#tools tbody tr')].find(
    (r) => r.cells[0].textContent === arguments[0]);
  if (!row) return null;
  const cell = row.cells[1];
  const line = parseFloat(getComputedStyle(cell).lineHeight) || 16;
  return {text: cell.textContent, shown: cell.innerText, lines: cell.clientHeight / line,
          tableWidth: document.getElementById('tools').scrollWidth,
          pageWidth: document.documentElement.clientWidth};
"""


def station_forecast(city: str) -> str:
    return city


def _usage_page(driver: Any, url: str, token: str, step: Any) -> dict[str, Any]:
    """The usage page before any call, then (after `step` logs the calls) as drawn."""
    driver.get(f"{url}#token={token}")
    driver.execute_script("location.hash = '#usage'")
    empty = _wait(driver, _EMPTY_STATE)
    step()
    drawn = _wait(driver, _DRAWN, len(STATIONS), CHARTS)
    driver.save_screenshot(str(_artifacts() / "console-usage-axes.png"))
    driver.execute_script("location.hash = '#overview'")
    cell = _wait(driver, _DESCRIPTION_CELL, "station_forecast")
    driver.save_screenshot(str(_artifacts() / "console-overview.png"))
    return {"empty": empty, "drawn": drawn, "cell": cell}


async def test_the_usage_page_draws_every_tool_from_zero_and_says_when_empty(
    browser: Any,
) -> None:
    async with serving() as host:
        url = host.console_url
        assert url is not None
        host.server.add_tool(FunctionTool(station_forecast, description=DESCRIPTION))
        log = host.accounting.query_log()
        assert log is not None
        loop = asyncio.get_running_loop()

        def log_calls() -> None:
            """Calls of every station tool, then an agent run of 300 tokens (from the browser's
            thread, into the host's loop)."""

            async def write() -> None:
                for n, name in enumerate(STATIONS):
                    row = await log.start(f"{name} {{}}", "test", kind="tool")
                    await log.finish(row, "success", tools=[name], duration=0.001 * (n + 1))
                row = await log.start("北京天气怎么样?", "test")
                await log.finish(row, "success", tokens=300)

            asyncio.run_coroutine_threadsafe(write(), loop).result()

        seen = await asyncio.to_thread(_usage_page, browser, url, host.console.token, log_calls)
    assert seen["empty"] == [{"text": "no data yet", "chart": False, "canvasShown": False}] * 3
    drawn = seen["drawn"]
    assert drawn["empty"] == 0
    for name in ("chart-calls", "chart-latency"):
        chart = drawn[name]
        assert chart["labels"] == sorted(STATIONS)  # every tool name drawn, none skipped
        assert chart["widest"] <= chart["axisWidth"] and chart["left"] >= 0  # none cut off
        assert chart["minGap"] >= 12  # a line of text per name: no overlap
        assert chart["min"] == 0
    calls = drawn["chart-calls"]
    assert calls["data"] == [[1] * len(STATIONS), [0] * len(STATIONS)]
    assert all(float(t).is_integer() for t in calls["ticks"])  # counts have integer ticks
    tokens = drawn["chart-tokens"]
    assert len(tokens["labels"]) == 1 and tokens["data"] == [[300]]
    assert tokens["min"] == 0 and all(float(t).is_integer() for t in tokens["ticks"])
    cell = seen["cell"]
    assert cell["text"] == DESCRIPTION  # the whole description, both lines
    assert DESCRIPTION.split("\n")[1] in cell["shown"].split("\n")
    assert cell["lines"] >= 3  # the long second line wraps
    assert cell["tableWidth"] <= cell["pageWidth"]


def _sign_in(driver: Any, url: str, token: str) -> dict[str, Any]:
    """Open the console without its token, as from a bookmark; type the token into the form."""
    from selenium.webdriver.common.by import By

    driver.get(url)
    _wait(driver, "return !document.getElementById('token-form').hidden")
    asked = driver.find_element(By.ID, "status").text
    empty = driver.execute_script("return document.querySelectorAll('#tools tbody tr').length")
    driver.find_element(By.ID, "token-input").send_keys(token)
    driver.find_element(By.CSS_SELECTOR, "#token-form button").click()
    _wait(driver, "return document.querySelectorAll('#tools tbody tr').length > 0")
    names = driver.execute_script(
        "return [...document.querySelectorAll('#tools tbody tr td:first-child')]"
        ".map((td) => td.textContent)"
    )
    hidden = driver.execute_script("return document.getElementById('token-form').hidden")
    return {"asked": asked, "empty": empty, "names": names, "hidden": hidden}


async def test_a_console_opened_without_its_token_asks_for_it(browser: Any) -> None:
    """It used to show empty tables and "HTTP 401" with no way to give the token."""
    async with serving() as host:
        url = host.console_url
        assert url is not None
        seen = await asyncio.to_thread(_sign_in, browser, url, host.console.token)
    assert seen["empty"] == 0 and "console token" in seen["asked"]
    assert "get_weather" in seen["names"] and seen["hidden"] is True


async def test_a_stateless_requests_approval_says_it_has_no_session(browser: Any) -> None:
    """The session column was empty for a client of the stateless (2026) protocol."""
    from mcp.client import Client

    rules = {"ask": ["get_weather"]}
    async with serving(console_approvals=True, rules=rules) as host:
        url = host.console_url
        assert url is not None
        async with Client(host.url, mode="auto") as client:
            call = asyncio.ensure_future(client.call_tool("get_weather", {"city": "上海"}))
            await host.console.approvals.wait_pending()
            shot = _artifacts() / "console-stateless-approval.png"
            row = await asyncio.to_thread(_approve_in_page, browser, url, host.console.token, shot)
            result = await call
    assert "get_weather" in row and "none (a stateless request)" in row
    assert not result.is_error


_SPLIT_WORDS = """
  const row = document.querySelector('#queries tbody tr');
  if (!row) return null;
  const code = row.querySelector('code');
  const words = [];
  const text = code.textContent;
  for (const match of text.matchAll(/[A-Za-z_]{4,}/g)) words.push([match.index, match[0]]);
  const nodes = [...code.childNodes].filter((n) => n.nodeType === Node.TEXT_NODE);
  const split = [];
  for (const [start, word] of words) {  // a word drawn on two lines has two client rects
    let offset = 0;
    for (const node of nodes) {
      const end = offset + node.length;
      if (start >= offset && start + word.length <= end) {
        const range = document.createRange();
        range.setStart(node, start - offset);
        range.setEnd(node, start - offset + word.length);
        if (range.getClientRects().length > 1) split.push(word);
      }
      offset = end;
    }
  }
  return {text, split, lines: code.getClientRects().length};
"""
LONG_INPUT = 'forecast_lookup {"station":"beijing_capital","metric":"temperature","window":' + (
    '"seventy_two_hours","units":"celsius_degrees","detail":"hourly_breakdown"}'
)


async def test_the_query_log_breaks_json_between_values_not_inside_words(browser: Any) -> None:
    """`word-break: break-all` cut the input column's JSON mid-word."""
    async with serving() as host:
        url = host.console_url
        log = host.accounting.query_log()
        assert url is not None and log is not None
        row = await log.start(LONG_INPUT, "test", kind="tool")
        await log.finish(row, "success", tools=["forecast_lookup"])

        def look() -> Any:
            browser.set_window_size(700, 900)
            browser.get(f"{url}#token={host.console.token}")
            browser.execute_script("location.hash = '#queries'")
            return _wait(browser, _SPLIT_WORDS)

        seen = await asyncio.to_thread(look)
    assert seen["text"] == LONG_INPUT  # copied as logged: the break points add no characters
    assert seen["lines"] > 1 and seen["split"] == []
