"""Readiness and graceful drain of a `toolweave serve` replica behind a load balancer.

- `GET /ready` answers 200 while the replica can serve, 503 while it drains or while its shared
  store (`[serve].store_dsn`) does not answer: the balancer's health check (docs/serve.md,
  several replicas) takes it out of rotation and puts it back when Postgres is back.
- `GET /live` answers 200 while the process serves HTTP at all (a liveness probe: restart it
  only when this fails).
- SIGTERM drains: `/ready` turns 503 at once, the replica keeps serving for
  `[serve].drain_notice` seconds (the balancer notices and sends nothing new), then stops
  accepting, ends its `subscriptions/listen` streams and gives running calls
  `[serve].drain_timeout` seconds to finish before cutting them; then the process exits.
  A second SIGTERM or SIGINT stops at once.

Neither route needs a token (a balancer sends none) and neither says more than ready or not.
Since anyone may ask, concurrent `/ready` requests share one store check in flight: a flood of
them costs the shared store one query at a time, never a connection each.
starlette and uvicorn load only when a host serves HTTP.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import time
from collections.abc import Awaitable, Callable
from types import FrameType
from typing import Any

logger = logging.getLogger("toolweave.host")

READY_PATH = "/ready"
LIVE_PATH = "/live"
STORE_CHECK_TIMEOUT = 2.0
"""Seconds `/ready` waits for the shared store to answer before saying it is unreachable."""


class Readiness:
    """Whether this replica should get new calls; `check` raises when its store is down."""

    def __init__(self, check: Callable[[], Awaitable[None]] | None = None) -> None:
        self.check = check
        self.draining = False
        self._checking: asyncio.Future[str | None] | None = None

    async def reason(self) -> str | None:
        """Why the replica is not ready, or None when it is."""
        if self.draining:
            return "draining"
        if self.check is None:
            return None
        checking = self._checking
        if checking is None or checking.done():
            checking = self._checking = asyncio.ensure_future(self._store_reason(self.check))
        return await asyncio.shield(checking)  # one asker leaving does not cancel the others'

    @staticmethod
    async def _store_reason(check: Callable[[], Awaitable[None]]) -> str | None:
        try:
            await asyncio.wait_for(check(), STORE_CHECK_TIMEOUT)
        except Exception as exc:  # any failure of the store means: send calls elsewhere
            logger.warning("not ready: the shared store does not answer: %s", exc)
            return "store unreachable"
        return None

    def routes(self) -> list[Any]:
        from starlette.requests import Request
        from starlette.responses import JSONResponse
        from starlette.routing import Route

        async def ready(request: Request) -> JSONResponse:
            reason = await self.reason()
            if reason is None:
                return JSONResponse({"ready": True})
            return JSONResponse({"ready": False, "reason": reason}, status_code=503)

        async def live(request: Request) -> JSONResponse:
            return JSONResponse({"live": True})

        return [Route(READY_PATH, ready, methods=["GET"]), Route(LIVE_PATH, live, methods=["GET"])]


def draining_server(
    config: Any, readiness: Readiness, notice: float, on_stop: Callable[[], None]
) -> Any:
    """A `uvicorn.Server` for `config` whose first SIGTERM drains (see the module docstring):
    `readiness` turns 503, `notice` seconds later it stops accepting and calls `on_stop`."""
    import uvicorn

    class DrainingServer(uvicorn.Server):
        stop_at: float | None = None

        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            if sig == signal.SIGTERM and self.stop_at is None and not self.should_exit:
                readiness.draining = True
                self.stop_at = time.monotonic() + notice
                return
            super().handle_exit(sig, frame)

        async def on_tick(self, counter: int) -> bool:
            if self.stop_at is not None and time.monotonic() >= self.stop_at:
                self.should_exit = True
            return await super().on_tick(counter)

        async def shutdown(self, sockets: Any = None) -> None:
            readiness.draining = True
            on_stop()
            await super().shutdown(sockets)

    return DrainingServer(config)
