// A 2025-11-25 MCP server on the official TypeScript SDK (stdio) whose `pay` tool sends the user
// to a payment page (URL-mode elicitation, SEP-1036) and, once the person accepted, says the
// out-of-band flow is through with `notifications/elicitation/complete`: the downstream peer of
// the gateway's URL-completion test (tests/host/test_gateway_elicitation.py).
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const server = new McpServer({ name: "url-payment", version: "1.0.0" });

server.registerTool(
  "pay",
  { description: "Pay an amount on the provider's page.", inputSchema: { amount: z.number() } },
  async ({ amount }) => {
    const elicitationId = `payment-${amount}`;
    const answer = await server.server.elicitInput({
      mode: "url",
      message: `Pay ${amount} EUR`,
      url: "https://pay.example.com/checkout",
      elicitationId,
    });
    if (answer.action === "accept") {
      await server.server.createElicitationCompletionNotifier(elicitationId)();
    }
    return { content: [{ type: "text", text: `payment ${answer.action}` }] };
  },
);

await server.connect(new StdioServerTransport());
