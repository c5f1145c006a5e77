"""`toolweave serve` serves a skill's file only if it lists it: a client of the skills provider
asking for a hidden file of a skill folder (`.env`), or for a file of a skill that `[skills]
allow` leaves out through `..` (plain or percent-encoded) from an allowed one, gets "resource
not found", read by the official SDK client in its default (2026) and legacy modes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import types
from mcp.client import Client
from mcp.shared.exceptions import MCPError
from pydantic import RootModel

from tests.host.serving import serving_skills

UNLISTED = [
    "skill://web-research/.env",
    "skill://web-research/data/.secret.json",
    "skill://web-research/../release-notes/SKILL.md",
    "skill://web-research/%2E%2E/release-notes/SKILL.md",
    "skill://web-research/..%2Frelease-notes%2FSKILL.md",
    "skill://code-review/../web-research/.env",
]


class _Raw(RootModel[dict[str, Any]]):
    """Any result, as the official client received it."""


async def read(client: Client, uri: str) -> dict[str, Any]:
    """`resources/read` of `uri` exactly as written (no URL normalisation on the way)."""
    request = types.Request[dict[str, Any], str](method="resources/read", params={"uri": uri})
    return (await client.session.send_request(request, _Raw)).root


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_file_the_provider_does_not_list_is_not_served(tmp_path: Path, mode: str) -> None:
    async with serving_skills(tmp_path, allow=["web-research", "code-review"]) as url:
        skills = tmp_path / "skills"
        (skills / "web-research" / ".env").write_text("API_TOKEN=do-not-publish\n")
        (skills / "web-research" / "data" / ".secret.json").write_text('{"token": "x"}\n')
        async with Client(url, mode=mode) as client:
            listed = {str(r.uri) for r in (await client.list_resources()).resources}
            served = await read(client, "skill://web-research/advanced.md")
            refused = []
            for uri in UNLISTED:
                with pytest.raises(MCPError) as error:
                    await read(client, uri)
                refused.append(str(error.value))
    assert "skill://web-research/advanced.md" in listed
    assert not any("release-notes" in uri or "/." in uri for uri in listed)
    advanced = (tmp_path / "skills" / "web-research" / "advanced.md").read_text()
    assert served["contents"][0]["text"] == advanced  # a listed file is still served
    assert all("do-not-publish" not in message for message in refused)
    assert all("not found" in message.lower() for message in refused), refused
