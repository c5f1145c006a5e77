"""A toolkit MCP server whose tools ask their caller (a 2026-07-28 peer over stdio): the
downstream server of the gateway elicitation tests. `book` asks a form (how many nights),
`pay` sends the user to a payment page (URL mode, SEP-1036), `summarize` asks the caller's
model (sampling), `folders` asks for the caller's roots, `order` places an order (a side
effect, once per call: a 2026 retry of its own round does not place it again) and then asks
where to deliver it; each run and each order is a line in the file `$ORDERS_FILE`."""

from __future__ import annotations

import os

from toolweave.mcp import Context, MCPServer
from toolweave.tools.calls import call_rounds

server = MCPServer("eliciting", "1.0.0")
NIGHTS = {"type": "object", "properties": {"nights": {"type": "integer"}}, "required": ["nights"]}


@server.tool
async def book(city: str, ctx: Context) -> str:
    """Book a hotel in `city`; asks how many nights."""
    answer = await ctx.elicit(f"How many nights in {city}?", NIGHTS)
    if answer.get("action") != "accept":
        return f"no booking in {city}: {answer.get('action')}"
    return f"booked {answer['content']['nights']} nights in {city}"


@server.tool
async def pay(amount: int, ctx: Context) -> str:
    """Pay `amount` on the payment provider's page."""
    answer = await ctx.elicit_url(
        f"Pay {amount} EUR", "https://pay.example.com/checkout", elicitation_id="order-7"
    )
    return f"payment page {answer.get('action')}"


ADDRESS = {"type": "object", "properties": {"address": {"type": "string"}}}


def _record(line: str) -> None:
    with open(os.environ["ORDERS_FILE"], "a", encoding="utf-8") as file:
        file.write(line + "\n")


@server.tool
async def order(item: str, ctx: Context) -> str:
    """Order `item`, then ask where it should go."""
    rounds = call_rounds(ctx)
    _record(f"run {item}")
    if rounds is None or not rounds.continued:  # the side effect: once per call
        _record(f"order {item}")
    answer = await ctx.elicit(f"Where should the {item} go?", ADDRESS)
    return f"{item} ordered, to {answer.get('content', {}).get('address')}"


@server.tool
async def summarize(text: str, ctx: Context) -> str:
    """Summarize `text` with the caller's model."""
    reply = await ctx.sample(f"Summarize in one line: {text}", max_tokens=60)
    return f"summary ({reply.get('model')}): {reply['content']['text']}"


@server.tool
async def folders(ctx: Context) -> str:
    """The folders the caller lets this server work in."""
    return ", ".join(f"{root.get('name')}={root['uri']}" for root in await ctx.list_roots())


if __name__ == "__main__":
    server.run()
