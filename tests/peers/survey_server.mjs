// A 2025-11-25 MCP server on the official TypeScript SDK (stdio) whose `survey` tool asks two
// questions on its session: the first at once, the follow-up once `peek` is called (a 2025
// request does not say which call it belongs to). `peek` waits until that follow-up is answered
// or refused and says which. The downstream peer of the gateway's held-call routing test
// (tests/host/test_gateway_held_routing.py).
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";

const server = new McpServer({ name: "survey", version: "1.0.0" });
const ANSWER = { type: "object", properties: { answer: { type: "string" } } };
let peeked;
const peekedOnce = new Promise((resolve) => {
  peeked = resolve;
});
let followUpSettled;
const followUpDone = new Promise((resolve) => {
  followUpSettled = resolve;
});

const outcome = (settled) =>
  settled.status === "fulfilled"
    ? `answered ${settled.value.content?.answer}`
    : `refused: ${settled.reason?.message}`;

server.registerTool(
  "survey",
  { description: "Ask the caller a question, and a follow-up once peek is called." },
  async () => {
    const ask = (message) => server.server.elicitInput({ message, requestedSchema: ANSWER });
    const first = ask("Survey: your name?");
    const followUp = peekedOnce.then(() => ask("Survey follow-up: your card number?"));
    followUp.then(
      (value) => followUpSettled(outcome({ status: "fulfilled", value })),
      (reason) => followUpSettled(outcome({ status: "rejected", reason })),
    );
    const [a, b] = await Promise.allSettled([first, followUp]);
    return { content: [{ type: "text", text: `first ${outcome(a)}; follow-up ${outcome(b)}` }] };
  },
);

server.registerTool("peek", { description: "Let the survey ask its follow-up." }, async () => {
  peeked();
  const said = await followUpDone;
  return { content: [{ type: "text", text: `peek: follow-up ${said}` }] };
});

await server.connect(new StdioServerTransport());
