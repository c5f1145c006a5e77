"""How much CPU stream parsing costs, per provider, against the official SDKs on the same bytes.

Each provider gets a long stream in its recorded wire format (shapes copied from
tests/llm/fixtures): TOKENS text deltas, then a tool call whose arguments arrive in
ARG_FRAGMENTS pieces. Bytes are fed one event per read, as they come at real-time speed.

Printed per provider:
- pure parse: SSE decoding + our event parser, events/s, and its cost as a share of the
  time the same tokens take to arrive at 200 tokens/s (goal: < 5%);
- end to end: the adapter's `stream()` over an in-memory httpx transport against the official
  SDK's streaming helper on the same bytes (openai, anthropic, google-genai); ratio < 1 means
  toolweave is faster.

Run: .venv/bin/python benchmarks/stream_parse.py
"""

from __future__ import annotations

import asyncio
import copy
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from toolweave._sse import SSEDecoder
from toolweave.llm import (
    AnthropicModel,
    GeminiModel,
    Message,
    ModelRequest,
    OpenAIChatModel,
    OpenAIResponsesModel,
)
from toolweave.llm.anthropic_parse import AnthropicStreamParser
from toolweave.llm.gemini_parse import GeminiStreamParser
from toolweave.llm.openai_chat_parse import ChatStreamParser
from toolweave.llm.openai_responses import ResponsesStreamParser

TOKENS = 4000
ARG_FRAGMENTS = 400
TOKENS_PER_SECOND = 200
REPEATS = 5
FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "llm" / "fixtures"
WORDS = [" the", " weather", " in", " 北京", " is", " sunny", ",", " 15", "°C", "."]


def _events(name: str) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for block in (FIXTURES / name).read_text().split("\n\n"):
        event, data = "", None
        for line in block.split("\n"):
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: {"):
                data = json.loads(line[6:])
        if data is not None:
            out.append((event, data))
    return out


def _encode(events: list[tuple[str, dict[str, Any]]], done: bool = False) -> list[bytes]:
    chunks = []
    for event, data in events:
        head = f"event: {event}\n" if event else ""
        chunks.append(f"{head}data: {json.dumps(data, ensure_ascii=False)}\n\n".encode())
    if done:
        chunks.append(b"data: [DONE]\n\n")
    return chunks


def _fragments() -> list[str]:
    text = json.dumps({"city": "北京", "notes": "x" * (ARG_FRAGMENTS * 4)})
    size = max(1, len(text) // ARG_FRAGMENTS)
    return [text[i : i + size] for i in range(0, len(text), size)]


def openai_chat_stream() -> list[bytes]:
    text, tools = _events("openai_chat_text.sse"), _events("openai_chat_tools.sse")
    head, delta, usage = text[0], text[1][1], text[-1]
    out = [head]
    for i in range(TOKENS):
        item = copy.deepcopy(delta)
        item["choices"][0]["delta"]["content"] = WORDS[i % len(WORDS)]
        out.append(("", item))
    out.append(tools[0])
    for piece in _fragments():
        item = copy.deepcopy(tools[1][1])
        item["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"] = piece
        out.append(("", item))
    out.extend([tools[-2], usage])
    return _encode(out, done=True)


def responses_stream() -> list[bytes]:
    text, tools = _events("responses_text.sse"), _events("responses_tools.sse")
    delta = next(e for e in text if e[0] == "response.output_text.delta")
    arg = next(e for e in tools if e[0] == "response.function_call_arguments.delta")
    out = text[:4]
    for i in range(TOKENS):
        item = copy.deepcopy(delta[1])
        item["delta"] = WORDS[i % len(WORDS)]
        out.append((delta[0], item))
    out.extend(text[-5:-1])
    call_added = copy.deepcopy(next(e for e in tools if e[0] == "response.output_item.added"))
    call_added[1]["output_index"] = 1
    out.append(call_added)
    pieces = _fragments()
    for piece in pieces:
        item = copy.deepcopy(arg[1])
        item.update(delta=piece, output_index=1)
        out.append((arg[0], item))
    done = copy.deepcopy(next(e for e in tools if e[0] == "response.output_item.done"))
    done[1].update(output_index=1)
    done[1]["item"]["arguments"] = "".join(pieces)
    final = copy.deepcopy(text[-1])
    final[1]["response"]["output"].append(done[1]["item"])
    out.extend([done, final])
    for number, (_kind, data) in enumerate(out):
        data["sequence_number"] = number
    return _encode(out)


def anthropic_stream() -> list[bytes]:
    text, tools = _events("anthropic_text.sse"), _events("anthropic_tools.sse")
    out = text[:3]
    delta = text[3]
    for i in range(TOKENS):
        item = copy.deepcopy(delta[1])
        item["delta"]["text"] = WORDS[i % len(WORDS)]
        out.append((delta[0], item))
    out.append(text[-3])
    start = copy.deepcopy(next(e for e in tools if e[1].get("content_block", {}).get("name")))
    start[1]["index"] = 1
    out.append(start)
    for piece in _fragments():
        out.append(
            (
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": 1,
                    "delta": {"type": "input_json_delta", "partial_json": piece},
                },
            )
        )
    out.append(("content_block_stop", {"type": "content_block_stop", "index": 1}))
    out.extend(tools[-2:])
    return _encode(out)


def gemini_stream() -> list[bytes]:
    text, tools = _events("gemini_text.sse"), _events("gemini_tools.sse")
    out = []
    for i in range(TOKENS):
        item = copy.deepcopy(text[0][1])
        item["candidates"][0]["content"]["parts"][0]["text"] = WORDS[i % len(WORDS)]
        out.append(("", item))
    out.append(tools[-1])  # Gemini sends a call whole, in one chunk
    return _encode(out)


PARSERS: dict[str, Callable[[], Any]] = {
    "openai-chat": ChatStreamParser,
    "openai-responses": ResponsesStreamParser,
    "anthropic": AnthropicStreamParser,
    "gemini": GeminiStreamParser,
}


def parse_once(provider: str, chunks: list[bytes]) -> int:
    decoder, parser, count = SSEDecoder(), PARSERS[provider](), 0
    for chunk in chunks:
        for _event, data in decoder.feed(chunk):
            count += len(parser.feed(data))
    parser.finish_response()
    return count


def _transport(chunks: list[bytes]) -> httpx.MockTransport:
    body = b"".join(chunks)

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    return httpx.MockTransport(handler)


def ours_end_to_end(provider: str, chunks: list[bytes]) -> None:
    async def run() -> None:
        async with httpx.AsyncClient(transport=_transport(chunks)) as client:
            base = "http://bench.local/v1"
            model: Any = {
                "openai-chat": lambda: OpenAIChatModel(
                    "m", base_url=base, api_key="k", client=client
                ),
                "openai-responses": lambda: OpenAIResponsesModel(
                    "m", base_url=base, api_key="k", client=client
                ),
                "anthropic": lambda: AnthropicModel("m", base_url=base, api_key="k", client=client),
                "gemini": lambda: GeminiModel("m", base_url=base, api_key="k", client=client),
            }[provider]()
            async for _ in model.stream(ModelRequest([Message.user("hi")])):
                pass

    asyncio.run(run())


def sdk_end_to_end(provider: str, chunks: list[bytes]) -> None:
    client = httpx.Client(transport=_transport(chunks))
    if provider == "openai-chat":
        import openai

        sdk = openai.OpenAI(api_key="k", base_url="http://bench.local/v1", http_client=client)
        with sdk.chat.completions.stream(
            model="m", messages=[{"role": "user", "content": "hi"}]
        ) as stream:
            stream.get_final_completion()
    elif provider == "openai-responses":
        import openai

        sdk = openai.OpenAI(api_key="k", base_url="http://bench.local/v1", http_client=client)
        with sdk.responses.stream(model="m", input="hi") as stream:
            stream.get_final_response()
    elif provider == "anthropic":
        import anthropic
        import httpx2  # this anthropic SDK runs on the httpx2 fork

        body = b"".join(chunks)
        transport = httpx2.MockTransport(
            lambda request: httpx2.Response(
                200, headers={"content-type": "text/event-stream"}, content=body
            )
        )
        http2 = httpx2.Client(transport=transport)
        sdk_a = anthropic.Anthropic(api_key="k", base_url="http://bench.local", http_client=http2)
        with sdk_a.messages.stream(
            model="m", max_tokens=10, messages=[{"role": "user", "content": "hi"}]
        ) as stream:
            stream.get_final_message()
    else:
        from google import genai
        from google.genai import types

        options = types.HttpOptions(base_url="http://bench.local", httpx_client=client)
        sdk_g = genai.Client(api_key="k", http_options=options)
        for _ in sdk_g.models.generate_content_stream(model="m", contents="hi"):
            pass
    client.close()


def best(function: Callable[[], Any]) -> float:
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    streams = {
        "openai-chat": openai_chat_stream(),
        "openai-responses": responses_stream(),
        "anthropic": anthropic_stream(),
        "gemini": gemini_stream(),
    }
    tokens = TOKENS + ARG_FRAGMENTS
    arrival = tokens / TOKENS_PER_SECOND
    print(f"{tokens} tokens per stream; at {TOKENS_PER_SECOND} tok/s they take {arrival:.1f} s")
    header = f"{'provider':18} {'events/s':>10} {'parse ms':>9} {'% of arrival':>13}"
    print(f"{header} {'ours e2e ms':>12} {'SDK e2e ms':>11} {'ours/SDK':>9}")
    worst = 0.0
    for provider, chunks in streams.items():
        events = parse_once(provider, chunks)
        parse = best(lambda p=provider, c=chunks: parse_once(p, c))
        ours = best(lambda p=provider, c=chunks: ours_end_to_end(p, c))
        sdk = best(lambda p=provider, c=chunks: sdk_end_to_end(p, c))
        share = 100 * parse / arrival
        worst = max(worst, share)
        print(
            f"{provider:18} {events / parse:>10,.0f} {parse * 1000:>9.1f} {share:>12.3f}% "
            f"{ours * 1000:>12.1f} {sdk * 1000:>11.1f} {ours / sdk:>9.2f}"
        )
    verdict = "meets" if worst < 5 else "MISSES"
    print(f"worst parse share {worst:.3f}% of arrival time: {verdict} the < 5% goal")


if __name__ == "__main__":
    main()
