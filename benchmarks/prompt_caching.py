"""Share of input tokens billed as cache reads over a scripted 20-turn agent session, per provider.

The session: a coding assistant with toolweave's real built-in tools (filesystem, shell, fetch,
time, todo: their definitions as `ToolRegistry.definitions()` sorts them), a ~700-token system
prompt, and 20 user turns, each answered by one tool call, its result (0.5-3 KB of file text or
command output) and a short answer: 40 model calls. Every call's wire body is built by the
adapter itself (`build_body`), then each provider's documented caching rule is applied to it:

- Anthropic: a prefix is cached only at a `cache_control` breakpoint (minimum 1,024 tokens,
  5-minute lifetime, always within reach here); a request reads the longest cached prefix that
  ends at one of its own breakpoints or up to 20 blocks before one (the documented look-back).
  Without breakpoints nothing is read.
- OpenAI: automatic for prompts of 1,024 tokens or more: the longest prefix shared with an
  earlier request, in 128-token steps. `prompt_cache_key` only steers routing (which machine
  holds the prefix): in one session the figure is the same with and without it; across many
  sessions sharing a prefix it keeps a session's requests together.
- Gemini (2.5 and later): implicit caching, automatic, same prefix rule (minimum 1,024 tokens);
  toolweave now reports it (`cachedContentTokenCount` as `Usage.cache_read_tokens`).

Tokens are estimated without a tokenizer (`toolweave.storage.text.estimate_tokens`: ~4
characters of JSON per token), the same estimate for every provider. Run:

    .venv/bin/python benchmarks/prompt_caching.py
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from pathlib import Path
from typing import Any

from toolweave.builtins import fetch_tool, filesystem_tools, shell_tool, time_tool, todo_tool
from toolweave.llm import (
    AnthropicModel,
    GeminiModel,
    Message,
    ModelRequest,
    OpenAIChatModel,
    ToolCallPart,
)
from toolweave.storage.text import estimate_tokens
from toolweave.tools import ToolDef, ToolRegistry

TURNS = 20
MIN_CACHED = 1024
"""Fewest tokens any of the three providers caches."""
OPENAI_STEP = 128
LOOKBACK_BLOCKS = 20
SYSTEM = (
    "You are a careful coding assistant working in the user's repository. "
    "Read before you write; prefer small, reviewable changes; run the tests you touch; "
    "explain what you changed and why in two or three sentences. "
) * 14


def tool_defs(root: str) -> list[ToolDef]:
    registry = ToolRegistry()
    for made in [
        *filesystem_tools(root),
        shell_tool(root),
        fetch_tool(),
        time_tool(),
        todo_tool(),
    ]:
        registry.register(made)
    return registry.definitions()


def _result(turn: int) -> str:
    line = (
        f"def handler_{turn}(request):  # module line of turn {turn}\n    return process(request)\n"
    )
    return line * (8 + (turn * 7) % 40)


def requests(defs: list[ToolDef], caching: bool) -> list[ModelRequest]:
    """The 40 model calls of the session, each with the whole history so far."""
    history: list[Message] = []
    out: list[ModelRequest] = []
    tools = ("read_file", "list_directory", "shell", "search_files")
    for turn in range(TURNS):
        history.append(
            Message.user(f"Turn {turn}: look at module {turn} and tell me what it does.")
        )
        out.append(_request(history, defs, caching))
        name = tools[turn % len(tools)]
        call = ToolCallPart(f"call_{turn}", name, {"path": f"src/module_{turn}.py"})
        history.append(Message.assistant("Let me look.", [call]))
        history.append(Message.tool_result(call.id, name, _result(turn)))
        out.append(_request(history, defs, caching))
        history.append(Message.assistant(f"Module {turn} routes requests to process(). " * 6))
    return out


def _request(history: list[Message], defs: list[ToolDef], caching: bool) -> ModelRequest:
    system = Message.system(SYSTEM)
    return ModelRequest([system, *history], tools=defs, prompt_caching=caching, cache_key="s1")


def _blocks(body: dict[str, Any], provider: str) -> list[tuple[str, bool]]:
    """The body as ordered blocks (serialized without markers, and whether one is marked)."""

    def item(value: Any) -> tuple[str, bool]:
        marked = isinstance(value, dict) and "cache_control" in value
        clean = {k: v for k, v in value.items() if k != "cache_control"} if marked else value
        return json.dumps(clean, sort_keys=True, ensure_ascii=False), marked

    if provider == "anthropic":
        system = body.get("system") or []
        blocks = [item(t) for t in body.get("tools", [])]
        blocks += [item(s) for s in (system if isinstance(system, list) else [system])]
        for message in body["messages"]:
            blocks += [item({"role": message["role"], **b}) for b in message["content"]]
        return blocks
    if provider == "openai":
        return [item(t) for t in body.get("tools", [])] + [item(m) for m in body["messages"]]
    head = [item(body.get("tools")), item(body.get("systemInstruction"))]
    return head + [item(c) for c in body["contents"]]


def _prefixes(blocks: list[tuple[str, bool]]) -> tuple[list[str], list[int]]:
    digest = hashlib.sha256()
    keys, tokens, total = [], [], 0
    for text, _ in blocks:
        digest.update(text.encode())
        keys.append(digest.hexdigest())
        total += estimate_tokens(text)
        tokens.append(total)
    return keys, tokens


def anthropic_reads(bodies: list[dict[str, Any]]) -> tuple[int, int, int]:
    cache: set[str] = set()
    read_total = write_total = input_total = 0
    for body in bodies:
        blocks = _blocks(body, "anthropic")
        keys, tokens = _prefixes(blocks)
        marks = [i for i, (_, marked) in enumerate(blocks) if marked]
        reachable = {j for m in marks for j in range(max(0, m - LOOKBACK_BLOCKS), m + 1)}
        hits = [j for j in reachable if keys[j] in cache]
        read = tokens[max(hits)] if hits else 0
        for mark in marks:
            if tokens[mark] >= MIN_CACHED:
                cache.add(keys[mark])
        written = max((tokens[m] for m in marks if tokens[m] >= MIN_CACHED), default=0)
        read_total += read
        write_total += max(0, written - read)
        input_total += tokens[-1]
    return read_total, write_total, input_total


def automatic_reads(bodies: list[dict[str, Any]], provider: str, step: int) -> tuple[int, int]:
    """Longest prefix shared with any earlier request, rounded down to `step` tokens."""
    seen: list[list[str]] = []
    read_total = input_total = 0
    for body in bodies:
        keys, tokens = _prefixes(_blocks(body, provider))
        shared = 0
        for earlier in seen:
            common = 0
            while common < min(len(keys), len(earlier)) and keys[common] == earlier[common]:
                common += 1
            if common:
                shared = max(shared, tokens[common - 1])
        read = shared - (shared - MIN_CACHED) % step if shared >= MIN_CACHED else 0
        read_total += read
        input_total += tokens[-1]
        seen.append(keys)
    return read_total, input_total


def main() -> None:
    with tempfile.TemporaryDirectory() as root:
        (Path(root) / "src").mkdir()
        defs = tool_defs(root)
    anthropic = AnthropicModel("claude-sonnet-4-5", api_key="k")
    openai = OpenAIChatModel("gpt-4.1", api_key="k")
    gemini = GeminiModel("gemini-2.5-flash", api_key="k")
    print(f"{TURNS}-turn session, {len(defs)} built-in tools, {2 * TURNS} model calls")
    print(f"{'provider':34} {'input tokens':>13} {'cache reads':>12} {'share':>7}")
    for caching in (False, True):
        label = "with" if caching else "without"
        calls = requests(defs, caching)
        read, written, total = anthropic_reads(
            [anthropic.build_body(r, stream=False) for r in calls]
        )
        _row(f"Anthropic, {label} breakpoints", total, read)
        if caching:
            print(f"{'  (cache writes)':34} {'':>13} {written:>12,}")
        openai_bodies = [openai.build_body(r, stream=False) for r in calls]
        read, total = automatic_reads(openai_bodies, "openai", OPENAI_STEP)
        _row(f"OpenAI, {label} prompt_cache_key", total, read)
        read, total = automatic_reads([gemini.build_body(r) for r in calls], "gemini", 1)
        _row(f"Gemini implicit ({label} reporting)", total, read)


def _row(label: str, total: int, read: int) -> None:
    print(f"{label:34} {total:>13,} {read:>12,} {read / total:>7.1%}")


if __name__ == "__main__":
    main()
