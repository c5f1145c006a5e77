"""Resource URI templates (RFC 6570 level 1), matched the same way wherever they are served.

The server toolkit matches a read against its own templates (`server/_catalog.py`) and the
gateway routes a read to the downstream server whose template matches
(`host/providers/proxy.py`); both use `template_pattern`.
"""

from __future__ import annotations

import re


def template_pattern(uri: str) -> re.Pattern[str]:
    """RFC 6570 level-1 templates: each `{name}` matches one path segment."""
    parts = re.split(r"\{([A-Za-z_][A-Za-z0-9_]*)\}", uri)
    regex = "".join(
        f"(?P<{part}>[^/]+)" if i % 2 else re.escape(part) for i, part in enumerate(parts)
    )
    return re.compile(f"^{regex}$")
