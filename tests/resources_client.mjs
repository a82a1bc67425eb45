// The TypeScript SDK's client reading and watching schemux's resources over streamable
// HTTP, as a client that shows a pane live would: the templates, completion of a pane id,
// a read of the pane's screen, a subscription (`subscriptions/listen` when pinned to
// 2026-07-28, `resources/subscribe` on an earlier revision), the update that follows a
// change the client itself makes with send_keys, and a read after it. Prints one JSON
// line. Run by tests/test_resources_typescript.py: URL, era ("2026-07-28", pinned, or
// "legacy", the handshake), pane id.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const [url, era, paneId] = process.argv.slice(2);
const client = new Client(
  { name: "resources-watcher", version: "0" },
  { versionNegotiation: { mode: era === "legacy" ? "legacy" : { pin: era } } },
);
await client.connect(new StreamableHTTPClientTransport(new URL(url)));

let subscription;
try {
  const { resourceTemplates } = await client.listResourceTemplates();
  const screenTemplate = resourceTemplates.find((t) => t.uriTemplate.endsWith("/screen"));
  const completion = await client.complete({
    ref: { type: "ref/resource", uri: screenTemplate.uriTemplate },
    argument: { name: "pane_id", value: paneId },
  });
  const uri = screenTemplate.uriTemplate.replace("{pane_id}", encodeURIComponent(paneId));
  const before = (await client.readResource({ uri })).contents[0];

  let updated;
  const update = new Promise((resolve) => {
    updated = resolve;
  });
  client.setNotificationHandler("notifications/resources/updated", (notification) =>
    updated(notification.params.uri),
  );
  if (era === "2026-07-28") {
    subscription = await client.listen({ resourceSubscriptions: [uri] });
  } else {
    await client.subscribeResource({ uri });
  }
  const typed = Date.now();
  await client.callTool({
    name: "send_keys",
    arguments: { pane_id: paneId, keys: "echo seen-by-the-ts-client", enter: true },
  });
  const timeout = new Promise((_, reject) =>
    setTimeout(() => reject(new Error("no update within 10 s")), 10000),
  );
  const updatedUri = await Promise.race([update, timeout]);
  const updateMs = Date.now() - typed;
  let after = "";
  for (let attempt = 0; attempt < 50 && !after.includes("\nseen-by-the-ts-client"); attempt++) {
    after = (await client.readResource({ uri })).contents[0].text;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  console.log(
    JSON.stringify({
      protocol: client.getNegotiatedProtocolVersion(),
      templates: resourceTemplates.map((t) => t.uriTemplate),
      completed: completion.completion.values,
      uri,
      before: { mimeType: before.mimeType, uri: before.uri, text: before.text },
      updatedUri,
      updateMs,
      after,
    }),
  );
} finally {
  await subscription?.close();
  await client.close();
}
