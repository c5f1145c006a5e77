"""The client side of the official MCP conformance suite: `conformance client --command
"python conformance_client.py"` starts this with the scenario's server URL as the last argument
and the scenario name in MCP_CONFORMANCE_SCENARIO (extra data in MCP_CONFORMANCE_CONTEXT)."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from typing import Any

from toolweave.mcp import (
    ClientCredentialsProvider,
    CrossAppAccessProvider,
    MCPClient,
    OAuthClientProvider,
    PrivateKeyJWTProvider,
    headless_redirect,
)

CIMD_URL = "https://conformance-test.local/client-metadata.json"


async def elicit_with_defaults(params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": {}}  # the client fills in the schema defaults


async def run(scenario: str, url: str) -> None:
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    auth: OAuthClientProvider | None = None
    if scenario == "auth/client-credentials-basic":
        auth = ClientCredentialsProvider(context["client_id"], context["client_secret"])
    elif scenario == "auth/client-credentials-jwt":
        auth = PrivateKeyJWTProvider(
            context["client_id"],
            context["private_key_pem"],
            signing_algorithm=context.get("signing_algorithm", "ES256"),
        )
    elif scenario == "auth/cross-app-access-complete-flow":
        auth = CrossAppAccessProvider(
            context["client_id"],
            context["client_secret"],
            id_token=context["idp_id_token"],
            idp_token_endpoint=context["idp_token_endpoint"],
            idp_client_id=context.get("idp_client_id"),
        )
    elif scenario.startswith("auth/"):
        auth = OAuthClientProvider(
            headless_redirect(),
            client_name="toolweave-conformance",
            client_id=context.get("client_id"),
            client_secret=context.get("client_secret"),
            client_metadata_url=CIMD_URL,
        )
    client = MCPClient.http(url, auth=auth, elicitation_handler=elicit_with_defaults)
    async with client:
        tools = await client.list_tools()
        for info in tools:
            if scenario == "tools_call" and info.name == "add_numbers":
                await client.call_tool("add_numbers", {"a": 5, "b": 3})
            elif scenario.startswith("auth/") and info.name == "test-tool":
                await client.call_tool("test-tool", {})
            elif scenario.startswith("elicitation") or scenario == "sse-retry":
                await client.call_tool(info.name, {})


def main() -> None:
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    asyncio.run(run(scenario, sys.argv[-1]))


if __name__ == "__main__":
    main()
