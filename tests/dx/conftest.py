"""The dx tests reuse the agent tests' loopback OpenAI-compatible server (`agent_fake_openai`)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "agent"))
