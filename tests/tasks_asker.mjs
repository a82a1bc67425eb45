// The MCP Tasks extension's own TypeScript requester (@modelcontextprotocol/ext-tasks,
// over the TypeScript SDK's client pinned to 2026-07-28) driving schemux over streamable
// HTTP under a policy that asks: a run_command task whose ask the requester answers
// through the task (input_required, then tasks/update) with the answer argv[3] names.
// Prints one JSON line: what the person was shown and how the task ended. Run by
// tests/test_policy.py with the server's URL, the command and the answer.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import {
  createTaskSessionFromClient,
  resultFromTaskOutcome,
} from "@modelcontextprotocol/ext-tasks/client";
import { rawDispatcher } from "./tasks_wire.mjs";

const [url, command, answer] = process.argv.slice(2);
const capabilities = {
  extensions: { "io.modelcontextprotocol/tasks": {} },
  elicitation: { form: {} },
};
const framing = {
  protocolVersion: "2026-07-28",
  clientInfo: { name: "ext-tasks-asker", version: "0" },
  clientCapabilities: capabilities,
};

// the SDK client has no 2026-07-28 task path of its own: requests go out as they are
const rawDispatch = rawDispatcher(url, framing.protocolVersion);

const shown = [];
const client = new Client(framing.clientInfo, {
  capabilities,
  versionNegotiation: { mode: { pin: framing.protocolVersion } },
});
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
const session = createTaskSessionFromClient(client, {
  endpointId: "schemux",
  rawDispatch,
  v2RequestFraming: framing,
  onInputRequest: async (request, context) => {
    shown.push({ kind: request.kind, delivery: context.delivery, message: request.params.message });
    return answer === "accept"
      ? { action: "accept", content: { approve: true } }
      : { action: answer };
  },
});
try {
  const task = await session.callTool("run_command", { command });
  const { outcome } = await task.settle();
  const result = resultFromTaskOutcome(outcome);
  const text = (result.content ?? []).map((block) => block.text ?? "").join("\n");
  console.log(JSON.stringify({ shown, isError: result.isError === true, text }));
} finally {
  await session.close();
  await client.close();
}
