// The MCP Tasks extension's own TypeScript requester (@modelcontextprotocol/ext-tasks,
// over the TypeScript SDK's client pinned to 2026-07-28) driving schemux over streamable
// HTTP: a run_program task to its end, then one cancelled after a second. Prints one JSON
// line per task. Run by tests/test_tasks.py with the server's URL.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import {
  createTaskSessionFromClient,
  resultFromTaskOutcome,
} from "@modelcontextprotocol/ext-tasks/client";
import { rawDispatcher } from "./tasks_wire.mjs";

const url = process.argv[2];
const capabilities = { extensions: { "io.modelcontextprotocol/tasks": {} } };
const framing = {
  protocolVersion: "2026-07-28",
  clientInfo: { name: "ext-tasks-requester", version: "0" },
  clientCapabilities: capabilities,
};

// the SDK client has no 2026-07-28 task path of its own: requests go out as they are
const rawDispatch = rawDispatcher(url, framing.protocolVersion);

const client = new Client(framing.clientInfo, {
  capabilities,
  versionNegotiation: { mode: { pin: framing.protocolVersion } },
});
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
const session = createTaskSessionFromClient(client, {
  endpointId: "schemux",
  rawDispatch,
  v2RequestFraming: framing,
});
try {
  const quick = await session.callTool("run_program", {
    argv: ["sh", "-c", "sleep 1; printf 'from  the requester'"],
  });
  const { outcome } = await quick.settle();
  console.log(JSON.stringify({ completed: resultFromTaskOutcome(outcome).structuredContent }));
  const slow = await session.callTool("run_program", { argv: ["sleep", "30.52"] });
  setTimeout(() => slow.cancel(), 1000);
  console.log(JSON.stringify({ cancelled: (await slow.settle()).outcome }));
} finally {
  await session.close();
  await client.close();
}
