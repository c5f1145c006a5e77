"""A toolkit MCP server whose tools ask their caller (a 2026-07-28 peer over stdio): the
downstream server of the gateway elicitation tests. `book` asks a form (how many nights),
`pay` sends the user to a payment page (URL mode, SEP-1036)."""

from __future__ import annotations

from toolweave.mcp import Context, MCPServer

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


if __name__ == "__main__":
    server.run()
