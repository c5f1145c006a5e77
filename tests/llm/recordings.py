"""Replay recorded provider HTTP interactions (VCR cassettes) through the adapters.

A cassette is a YAML file of `interactions`, each a request (`uri`, `parsed_body`) and the
provider's real answer (`status`, `headers`, and `parsed_body` or `body.string`), in the format
pydantic-ai's test suite records (vcrpy with a JSON-parsing serializer). Each interaction whose
endpoint an adapter speaks is served to that adapter through `httpx.MockTransport` and judged
against what the recording itself says, read here independently of the adapters:

- a success must parse without error, give the same text (the text blocks, parts or deltas of
  the answer, joined), the same local tool calls by name, and one provider-run tool part per
  provider-run block or item in the answer;
- an error status must raise `ModelError` carrying the provider's own message, retryable
  exactly when the status is 408, 409, 429 or 5xx (and the code is not a quota one).

Used by tests/llm/test_recorded.py (the committed selection) and benchmarks/recorded_answers.py
(any directory of cassettes).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import yaml

from toolweave.llm import (
    AnthropicModel,
    Finished,
    GeminiModel,
    Message,
    Model,
    ModelError,
    ModelRequest,
    ModelResponse,
    OpenAIChatModel,
    OpenAIResponsesModel,
    ProviderToolUpdate,
)

RECORDED = Path(__file__).parent / "recorded"
ANTHROPIC_TOOL_BLOCKS = ("server_tool_use", "mcp_tool_use")
RESPONSES_TOOL_ITEMS = (
    "web_search_call",
    "code_interpreter_call",
    "mcp_call",
    "mcp_list_tools",
    "file_search_call",
    "image_generation_call",
    "tool_search_call",
    "tool_search_output",
)
_TRANSIENT = ("rate_limit", "overloaded", "timeout", "unavailable", "server_error")
"""Words of a mid-stream error that make trying again worthwhile."""
GEMINI_TOOL_PARTS = ("executableCode", "codeExecutionResult", "toolCall", "toolResponse")


@dataclass(frozen=True)
class Interaction:
    source: str
    provider: str
    """anthropic, openai-chat, openai-responses, gemini or compat (OpenAI Chat elsewhere)."""
    uri: str
    stream: bool
    status: int
    body: bytes
    content_type: str

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.body).hexdigest()


def _provider(uri: str) -> str | None:
    path = uri.split("?")[0].split("#")[0]
    if path.endswith("/v1/messages"):
        return "anthropic"
    if path.endswith("/chat/completions"):
        return "openai-chat" if "api.openai.com" in path else "compat"
    if path.endswith("/responses"):
        return "openai-responses"
    if path.endswith((":generateContent", ":streamGenerateContent")):
        return "gemini"
    return None


def _body(response: dict[str, Any]) -> bytes:
    if "parsed_body" in response:
        parsed = response["parsed_body"]
        return (parsed if isinstance(parsed, str) else json.dumps(parsed)).encode()
    raw = (response.get("body") or {}).get("string", "")
    return raw.encode() if isinstance(raw, str) else bytes(raw)


def interactions(path: Path) -> Iterator[Interaction]:
    """The adapter-readable interactions of one cassette file."""
    data = yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)
    for item in (data or {}).get("interactions") or ():
        request, response = item.get("request"), item.get("response")
        if not isinstance(request, dict) or not isinstance(response, dict):
            continue
        uri = str(request.get("uri", ""))
        provider = _provider(uri)
        if provider is None or request.get("method", "POST") != "POST":
            continue
        sent = request.get("parsed_body")
        stream = bool(isinstance(sent, dict) and sent.get("stream")) or "stream" in uri
        headers = {k.lower(): v for k, v in (response.get("headers") or {}).items()}
        kind = headers.get("content-type") or ["application/json"]
        status = int((response.get("status") or {}).get("code", 200))
        yield Interaction(path.name, provider, uri, stream, status, _body(response), kind[0])


def model_for(item: Interaction, client: httpx.AsyncClient) -> Model:
    options: dict[str, Any] = {"api_key": "k", "client": client, "max_retries": 0}
    if item.provider == "anthropic":
        return AnthropicModel("claude", **options)
    if item.provider == "openai-responses":
        return OpenAIResponsesModel("gpt", **options)
    if item.provider == "gemini":
        return GeminiModel("gemini", **options)
    return OpenAIChatModel("gpt", **options)


@dataclass
class Outcome:
    held: bool
    why: str = ""


async def read(item: Interaction) -> tuple[ModelResponse, int]:
    """The adapter's reading of one recorded answer, with its count of `ProviderToolUpdate`s."""

    def answer(_: httpx.Request) -> httpx.Response:
        return httpx.Response(
            item.status, content=item.body, headers={"content-type": item.content_type}
        )

    async with httpx.AsyncClient(transport=httpx.MockTransport(answer)) as client:
        model = model_for(item, client)
        request = ModelRequest([Message.user("replayed")])
        if not item.stream:
            return await model.complete(request), 0
        updates = 0
        async for event in model.stream(request):
            updates += isinstance(event, ProviderToolUpdate)
            if isinstance(event, Finished):
                return event.response, updates
    raise AssertionError("a stream must end with Finished")


async def replay(item: Interaction) -> Outcome:
    """Serve one recorded answer to its adapter and judge the result against the recording."""
    try:
        response, updates = await read(item)
    except ModelError as exc:
        return _judge_error(item, exc)
    except Exception as exc:  # any other exception is what is measured
        return Outcome(False, f"raised {exc!r}"[:300])
    if item.status >= 400:
        return Outcome(False, f"status {item.status} read as an answer")
    try:
        return _judge_answer(item, response, updates)
    except TypeError as exc:  # e.g. a text part whose text is not a string
        return Outcome(False, f"unreadable answer: {exc!r}")


def _judge_error(item: Interaction, exc: ModelError) -> Outcome:
    if item.status < 400:
        if not answered(item):
            return Outcome(True)  # not a provider answer at all: refusing it is right
        expected = expected_error(item)
        if expected is None:
            return Outcome(False, f"ModelError on a {item.status} answer: {exc}"[:300])
        transient = any(w in item.body.decode("utf-8", "replace").lower() for w in _TRANSIENT)
        if exc.retryable != transient:
            return Outcome(False, f"retryable={exc.retryable} for the stream error {expected!r}")
        return _words(expected, exc)
    text = item.body.decode("utf-8", "replace")
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    message = _message_in(data) or ""
    retryable = item.status in (408, 409, 429) or item.status >= 500
    if "insufficient_quota" in text:
        retryable = False
    if exc.retryable != retryable:
        return Outcome(False, f"retryable={exc.retryable} for status {item.status}")
    return _words(message, exc)


def _words(message: str, exc: ModelError) -> Outcome:
    if message and message[:80] not in str(exc):
        return Outcome(False, f"provider's words {message[:80]!r} missing from {exc}")
    return Outcome(True)


def _message_in(data: Any) -> str | None:
    if isinstance(data, list) and data:
        data = data[0]
    if not isinstance(data, dict):
        return None
    error = data.get("error", data)
    if isinstance(error, dict):
        message = error.get("message")
        return message if isinstance(message, str) else None
    return error if isinstance(error, str) else None


def answered(item: Interaction) -> bool:
    """Whether a 200 body is a provider answer at all (some recordings test garbage bodies)."""
    keys = {"anthropic": "type", "gemini": "candidates", "openai-responses": "type"}
    key = keys.get(item.provider, "choices")
    events = _events(item)
    return any(key in e or "error" in e for e in events) or (
        item.provider == "gemini" and any("promptFeedback" in e for e in events)
    )


def expected_error(item: Interaction) -> str | None:
    """The error message a 200 recording carries (an `error` event mid-stream), or None."""
    for event in _events(item):
        if event.get("type") == "error" or "error" in event:
            return _message_in(event) or ""
    return None


def _events(item: Interaction) -> list[dict[str, Any]]:
    text = item.body.decode("utf-8", "replace")
    if not item.stream or text.lstrip().startswith(("{", "[")):
        try:
            data = json.loads(text)
        except ValueError:
            return []
        return [d for d in (data if isinstance(data, list) else [data]) if isinstance(d, dict)]
    events = []
    for line in text.splitlines():
        if line.startswith("data:"):
            payload = line[5:].strip()
            if payload and payload != "[DONE]":
                try:
                    events.append(json.loads(payload))
                except ValueError:
                    continue
    return events


def expected(item: Interaction) -> tuple[str, list[str], int]:
    """(text, local tool call names, provider-run tool blocks) as the recording has them."""
    texts: list[str] = []
    names: list[str] = []
    provided = 0
    whole = not item.stream or item.body.lstrip().startswith(b"{")
    for event in _events(item):
        if item.provider == "anthropic":
            blocks = event.get("content") if whole else [event.get("content_block") or {}]
            for block in blocks or ():
                if block.get("type") == "text":
                    texts.append(block.get("text") or "")
                elif block.get("type") == "tool_use":
                    names.append(block.get("name", ""))
                provided += block.get("type") in ANTHROPIC_TOOL_BLOCKS or (
                    str(block.get("type", "")).endswith("_tool_result")
                    and block.get("type") != "tool_result"
                )
            delta = event.get("delta") or {}
            if delta.get("type") == "text_delta":
                texts.append(delta.get("text", ""))
        elif item.provider == "openai-responses":
            if event.get("type") == "response.completed" or (whole and "output" in event):
                out = event.get("response", event).get("output") or ()
                for entry in out:
                    if entry.get("type") == "message":
                        texts.extend(
                            b.get("text") or b.get("refusal") or "" for b in entry["content"]
                        )
                    elif entry.get("type") == "function_call":
                        names.append(entry.get("name", ""))
                    provided += entry.get("type") in RESPONSES_TOOL_ITEMS
        elif item.provider == "gemini":
            for candidate in (event.get("candidates") or ())[:1]:
                for part in (candidate.get("content") or {}).get("parts") or ():
                    if "text" in part and not part.get("thought"):
                        texts.append(part["text"])
                    elif "functionCall" in part:
                        names.append(part["functionCall"].get("name", ""))
                    provided += any(k in part for k in GEMINI_TOOL_PARTS)
                provided += bool(candidate.get("groundingMetadata")) and not item.stream
                provided += bool(candidate.get("urlContextMetadata")) and not item.stream
        else:
            for choice in (event.get("choices") or ())[:1]:
                wire = choice.get("message") or choice.get("delta") or {}
                texts.append(_chat_text(wire.get("content")))
                if whole and not wire.get("content") and wire.get("refusal"):
                    texts.append(wire["refusal"])
                for call in wire.get("tool_calls") or ():
                    name = (call.get("function") or {}).get("name")
                    if name:
                        names.append(name)
    return "".join(texts), names, provided


def _chat_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(c.get("text", "") for c in content if c.get("type") == "text")
    return ""


def _judge_answer(item: Interaction, response: ModelResponse, updates: int) -> Outcome:
    text, names, provided = expected(item)
    got_text = response.message.text
    got_names = [c.name for c in response.message.tool_calls]
    got_provided = len(response.message.provider_tools)
    if item.provider == "gemini" and item.stream:
        # grounding metadata repeats on every chunk: one citation part per kind is right
        got_provided -= sum(p.phase == "citations" for p in response.message.provider_tools)
    if got_text.strip() != text.strip():
        return Outcome(False, f"text {got_text[:60]!r} != recorded {text[:60]!r}")
    if got_names != names:
        return Outcome(False, f"tool calls {got_names} != recorded {names}")
    if got_provided != provided:
        return Outcome(False, f"{got_provided} provider-run tool parts, recorded {provided}")
    if item.stream and got_provided and not updates:
        return Outcome(False, f"no ProviderToolUpdate event for {got_provided} parts")
    return Outcome(True)
