// What the tests' TypeScript requesters of the MCP Tasks extension share
// (tasks_requester.mjs, tasks_asker.mjs): the SDK client has no 2026-07-28 task path of
// its own, so the extension's requests go out as they are, one POST each.
export function rawDispatcher(url, protocolVersion) {
  let nextId = 0;
  return async function rawDispatch(request) {
    const params = request.params ?? {};
    const response = await fetch(url, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        Accept: "application/json, text/event-stream",
        "MCP-Protocol-Version": protocolVersion,
        "Mcp-Method": request.method,
        "Mcp-Name": params.taskId ?? params.name ?? "",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: ++nextId, ...request }),
    });
    return await response.json();
  };
}
