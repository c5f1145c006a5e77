"""`toolweave serve` as a fleet replica: the CLI itself, with the test's `fleet` provider
registered first (`python -m tests.fleet.replica --http HOST:PORT --config FILE`)."""

from __future__ import annotations

import sys

from toolweave.cli import main
from toolweave.host.providers import base as host_providers

if __name__ == "__main__":
    host_providers.PROVIDERS["fleet"] = "tests.fleet.tools:FleetProvider"
    sys.argv = ["toolweave", "serve", *sys.argv[1:]]
    main()
