"""docs/serve.md shows the HAProxy configuration the fleet tests run, line for line (with
three replicas on loopback ports 8765-8767 and the balancer on 8080)."""

from __future__ import annotations

from tests.fleet.harness import HAPROXY_CONFIG, ROOT
from toolweave.host.readiness import READY_PATH


def test_the_serve_page_shows_the_haproxy_configuration_of_the_tests() -> None:
    page = (ROOT / "docs" / "serve.md").read_text(encoding="utf-8")
    shown = "global\n" + page.split("```text\nglobal\n", 1)[1].split("```", 1)[0]
    servers = "\n".join(f"    server r{i} 127.0.0.1:{8765 + i} check" for i in range(3))
    expected = HAPROXY_CONFIG.format(
        port=8080, ready=READY_PATH, socket="/run/haproxy/admin.sock", servers=servers
    )
    assert shown == expected
