"""The icon `toolweave serve` publishes in its `serverInfo` (SEP-973 icons): a small SVG, sent
inline as a `data:` URI so that a client showing it fetches nothing from anywhere."""

from __future__ import annotations

import base64
from typing import Any

_SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64">'
    '<rect width="64" height="64" rx="14" fill="#1f4e79"/>'
    '<path d="M12 22h40M12 32h40M12 42h40" stroke="#9cc3e6" stroke-width="5"/>'
    '<path d="M22 12v40M42 12v40" stroke="#ffffff" stroke-width="5"/>'
    "</svg>"
)

SERVER_ICONS: list[dict[str, Any]] = [
    {
        "src": "data:image/svg+xml;base64," + base64.b64encode(_SVG.encode()).decode(),
        "mimeType": "image/svg+xml",
        "sizes": ["any"],
    }
]
