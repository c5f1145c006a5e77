"""What the server's lists carry beyond names: icons (SEP-973) and pagination cursors.

Icons are checked when registered, so a bad one fails at startup naming the field, not in a
client. A list is cut into pages of `page_size` entries when the server sets one; the cursor is
opaque to clients (the offset and the list it belongs to, base64url-encoded), and one that does
not decode, or belongs to another list, is -32602.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from typing import Any

from toolweave.mcp.shared.errors import INVALID_PARAMS, JSONRPCError

_ICON_KEYS = {"src", "mimeType", "sizes", "theme"}
_ICON_SCHEMES = ("https://", "data:")


def check_icons(owner: str, icons: Sequence[dict[str, Any]] | None) -> list[dict[str, Any]] | None:
    """`icons` as published (a copy), or a ValueError naming what is wrong and the fix."""
    if icons is None:
        return None
    checked = []
    for i, icon in enumerate(icons):
        where = f"{owner}: icons[{i}]"
        if not isinstance(icon, dict) or not isinstance(icon.get("src"), str):
            raise ValueError(f"{where} must be a dict with 'src' (an https: or data: URI)")
        if not icon["src"].startswith(_ICON_SCHEMES):
            raise ValueError(
                f"{where}['src'] must be an https: URL or a data: URI, not {icon['src'][:40]!r}"
            )
        unknown = set(icon) - _ICON_KEYS
        if unknown:
            raise ValueError(
                f"{where} has unknown keys {sorted(unknown)}; use {sorted(_ICON_KEYS)}"
            )
        sizes = icon.get("sizes")
        if sizes is not None and (
            not isinstance(sizes, list) or not all(isinstance(s, str) for s in sizes)
        ):
            raise ValueError(f"{where}['sizes'] must be a list of strings such as ['48x48', 'any']")
        if icon.get("theme") not in (None, "light", "dark"):
            raise ValueError(f"{where}['theme'] must be 'light' or 'dark'")
        checked.append(dict(icon))
    return checked


def _cursor(kind: str, offset: int) -> str:
    raw = json.dumps({"k": kind, "o": offset}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _offset(kind: str, cursor: Any) -> int:
    if cursor is None:
        return 0
    try:
        decoded = json.loads(base64.urlsafe_b64decode(str(cursor) + "=" * (-len(cursor) % 4)))
        if decoded["k"] == kind and isinstance(decoded["o"], int) and decoded["o"] >= 0:
            return int(decoded["o"])
    except (ValueError, KeyError, TypeError):
        pass
    raise JSONRPCError(
        INVALID_PARAMS,
        f"params.cursor {cursor!r} is not a cursor of this {kind} list; send the nextCursor "
        "of the previous page, or no cursor for the first page",
    )


def page(
    kind: str, key: str, items: list[dict[str, Any]], params: dict[str, Any], size: int | None
) -> dict[str, Any]:
    """`{key: <this page>, "nextCursor": ...}`; everything at once when `size` is None."""
    start = _offset(kind, params.get("cursor"))
    if size is None:
        return {key: items[start:]}
    result: dict[str, Any] = {key: items[start : start + size]}
    if start + size < len(items):
        result["nextCursor"] = _cursor(kind, start + size)
    return result
