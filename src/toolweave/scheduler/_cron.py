"""Schedule specs: 5-field cron (parsed by cronsim), its @aliases, and `@every <duration>`.

Cron is evaluated by a maintained library rather than by hand (day-of-month/day-of-week OR
rules, ranges, steps and month lengths are where hand-written parsers break); this module only
validates the spec up front, so a typo fails at `create` with the field named, and computes the
next firing strictly after a given instant. `@every` slots are anchored on the task's creation
time, so "every 10s" keeps its phase across restarts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, tzinfo

from toolweave.errors import ConfigError

MIN_EVERY_SECONDS = 1.0
"""The shortest `@every` interval accepted."""

_ALIASES = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_EVERY = re.compile(r"^@every\s+((?:\d+(?:\.\d+)?(?:ms|s|m|h|d))+)$")
_PIECE = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)")


@dataclass(frozen=True, slots=True)
class Spec:
    """A parsed spec: `interval` seconds for @every, otherwise a 5-field `cron` expression."""

    text: str
    interval: float | None = None
    cron: str | None = None

    def next_after(self, after: float, anchor: float, tz: tzinfo) -> float:
        """The first firing time strictly after `after` (epoch seconds)."""
        if self.interval is not None:
            if after < anchor:
                return anchor
            slots = int((after - anchor) // self.interval) + 1
            return anchor + slots * self.interval
        from cronsim import CronSim

        assert self.cron is not None
        start = datetime.fromtimestamp(after, tz)
        for moment in CronSim(self.cron, start):
            stamp = moment.timestamp()
            if stamp > after:
                return stamp
        raise ConfigError(f"schedule {self.text!r} never fires")  # pragma: no cover - cronsim loops


def parse_spec(text: object) -> Spec:
    """Validate `text`, raising ValueError with the accepted forms when it is not one."""
    if not isinstance(text, str) or not text.strip():
        raise ConfigError(_help(text))
    spec = " ".join(text.split())
    every = _EVERY.match(spec)
    if every is not None:
        seconds = sum(float(n) * _UNITS[unit] for n, unit in _PIECE.findall(every.group(1)))
        if seconds < MIN_EVERY_SECONDS:
            raise ConfigError(
                f"schedule {spec!r}: @every needs at least {MIN_EVERY_SECONDS:g}s between firings"
            )
        return Spec(spec, interval=seconds)
    cron = _ALIASES.get(spec.lower(), spec)
    if len(cron.split()) != 5:
        raise ConfigError(_help(spec))
    from cronsim import CronSim, CronSimError

    try:
        CronSim(cron, datetime(2026, 1, 1))
    except CronSimError as exc:
        raise ConfigError(f"schedule {spec!r} is not a valid cron expression: {exc}") from None
    return Spec(spec, cron=cron)


def _help(text: object) -> str:
    return (
        f"schedule {text!r} is not understood: use a 5-field cron expression "
        "('minute hour day-of-month month day-of-week', e.g. '30 9 * * 1-5'), an alias "
        "(@hourly, @daily, @weekly, @monthly, @yearly) or '@every <duration>' (e.g. "
        "'@every 10s', '@every 1h30m')"
    )
