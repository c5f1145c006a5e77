"""`time`: the current date and time, so a model never guesses what day it is."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from toolweave.tools.base import Tool
from toolweave.tools.errors import InvalidArguments
from toolweave.tools.function_tool import tool

MAX_SHOWN_CHARS = 64
"""Characters of a refused time zone name repeated in the error."""


def time_tool() -> Tool:
    """The `time` tool: now, in UTC or an IANA time zone."""

    @tool(name="time", read_only=True, open_world=False)
    def current_time(timezone: str = "UTC") -> dict[str, str]:
        """The current date and time.

        Args:
            timezone: IANA time zone name, e.g. 'UTC', 'Asia/Shanghai', 'Europe/Berlin'.
        """
        try:
            zone = UTC if timezone.upper() == "UTC" else ZoneInfo(timezone)
        except (ZoneInfoNotFoundError, ValueError, OSError):  # OSError: a too long name, a
            shown = timezone[:MAX_SHOWN_CHARS]  # folder: its text names the host's tzdata path
            more = "..." if len(timezone) > MAX_SHOWN_CHARS else ""
            raise InvalidArguments(
                f"timezone {shown!r}{more} is not an IANA time zone name; use e.g. 'UTC' or "
                "'Asia/Shanghai'",
                tool="time",
            ) from None
        now = datetime.now(zone)
        return {
            "iso": now.isoformat(timespec="seconds"),
            "weekday": now.strftime("%A"),
            "timezone": timezone,
        }

    return current_time
