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
    JWTBearerProvider,
    MCPClient,
    MCPToolInfo,
    OAuthClientProvider,
    PrivateKeyJWTProvider,
    elicitation_defaults,
    headless_redirect,
)
from toolweave.mcp.client.skills import list_skills, load_skill, read_skill_file
from toolweave.mcp.shared.errors import SkillVerificationError

CIMD_URL = "https://conformance-test.local/client-metadata.json"
CALL_TIMEOUT = 120.0


async def accept_prefilled_form(params: dict[str, Any]) -> dict[str, Any]:
    """A person who accepts the form as shown: pre-filled with the schema's defaults."""
    return {"action": "accept", "content": elicitation_defaults(params)}


def sample_arguments(info: MCPToolInfo) -> dict[str, Any]:
    """Plausible values for a tool's required arguments (the scenarios do not check them)."""
    samples = {"string": "x", "integer": 1, "number": 1.5, "boolean": True, "object": {}}
    properties = info.input_schema.get("properties") or {}
    return {
        name: samples.get(str((properties.get(name) or {}).get("type")), "x")
        for name in info.input_schema.get("required") or []
    }


async def use_skills(client: MCPClient) -> None:
    """Load every listed skill (its verified SKILL.md) and only then read its other files; a
    skill that fails verification is not used any further."""
    for skill in await list_skills(client):
        try:
            await load_skill(client, skill)
        except SkillVerificationError as exc:
            logging.warning("%s", exc)
            continue
        for entry in skill.files:
            if entry.uri != skill.uri:
                await read_skill_file(client, skill, entry.uri)


async def exercise(scenario: str, client: MCPClient, context: dict[str, Any]) -> None:
    """What each scenario expects of a client once it has listed the tools."""
    tools = await client.list_tools()
    if context.get("toolCalls"):  # the scenario names the calls and their arguments
        for call in context["toolCalls"]:
            await client.call_tool(call["name"], call.get("arguments") or {})
    elif scenario == "tools_call":
        await client.call_tool("add_numbers", {"a": 5, "b": 3})
    elif scenario.startswith("auth/"):
        if any(info.name == "test-tool" for info in tools):
            await client.call_tool("test-tool", {})
    elif scenario == "sep-2640-client-no-prefetch":  # the catalog only: nothing is loaded yet
        await list_skills(client)
    elif scenario.startswith("sep-2640-"):  # a host loads a skill, then its other files
        await use_skills(client)
    elif scenario == "json-schema-2020-12-preservation":
        focal = next(info for info in tools if info.name != "json_schema_echo")
        await client.call_tool("json_schema_echo", {"schema": focal.input_schema})
    else:  # every tool the client kept, concurrently (input-required rounds stay apart)
        await asyncio.gather(*(client.call_tool(t.name, sample_arguments(t)) for t in tools))


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
    elif scenario == "auth/wif-jwt-bearer":
        auth = JWTBearerProvider(context["client_id"], context["valid_jwt"])
    elif scenario == "auth/enterprise-managed-authorization":
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
    # The suite runs every scenario at once; on a loaded machine an answer may take a while.
    client = MCPClient.http(
        url, auth=auth, elicitation_handler=accept_prefilled_form, timeout=CALL_TIMEOUT
    )
    async with client:
        await exercise(scenario, client, context)


def main() -> None:
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    asyncio.run(run(scenario, sys.argv[-1]))


if __name__ == "__main__":
    main()
