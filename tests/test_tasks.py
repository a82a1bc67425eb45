"""Long calls as tasks (the ``io.modelcontextprotocol/tasks`` extension, MCP 2026-07-28),
spoken as raw JSON-RPC to a real ``schemux serve`` over stdio and over HTTP: a task that
completes, one cancelled, one whose pane dies, unknown task ids, clients without the
extension; and the task store's bounds and expiry in this process."""

from __future__ import annotations

import asyncio
import json
import re
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anyio
import httpx2
import pytest
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, TextContent

from schemux.config import DEFAULT_WAIT_CEILING_SECONDS
from schemux.generated.tool_facts import TASK_TOOLS
from schemux.serving import tasks as tasks_module
from schemux.serving.in_flight import CallsInFlight
from schemux.serving.tasks import EXTENSION, ToolTasks
from schemux.shell.abandoned import PANE_OPTION
from tests.http_serving import free_port, listening, serve_http
from tests.node import run_node
from tests.process_table import running_with_argument
from tests.support import new_pane, pane_format, tmux, wait_for_shell, wait_until
from tests.test_exit_paths import serve_stdio
from tests.test_program_hardening import _read_reply, _rpc

VERSION = "2026-07-28"
TASK_ID = re.compile(r"[0-9a-f]{32}")
ISO_UTC = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")


def envelope(*, tasks: bool = True, elicitation: bool = False) -> dict[str, Any]:
    """A 2026-07-28 request's ``_meta``, declaring the tasks extension or not, and form
    elicitation or not."""
    capabilities: dict[str, Any] = {"extensions": {EXTENSION: {}}} if tasks else {}
    if elicitation:
        capabilities["elicitation"] = {"form": {}}
    return {
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientInfo": {"name": "tasks-test", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    }


class RawStdio:
    """A real ``schemux serve`` over stdio, spoken to line by line."""

    def __init__(self, tmux_socket: str, *options: str, elicitation: bool = False) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "schemux", "serve", "--socket-name", tmux_socket, *options],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        self._next_id = 0
        self.elicitation = elicitation  # declared in every request's _meta

    def request(
        self, method: str, params: dict[str, Any], *, tasks: bool = True, timeout: float = 20
    ) -> dict[str, Any]:
        """The reply (result or error) to ``method``, sent as a 2026-07-28 request."""
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self._next_id += 1
        message = {
            "jsonrpc": "2.0", "id": self._next_id, "method": method,
            "params": {**params, "_meta": envelope(tasks=tasks, elicitation=self.elicitation)},
        }  # fmt: skip
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self.process.stdout], [], [], max(0.0, left))
            assert ready, f"no answer to {method} within {timeout} s"
            line = self.process.stdout.readline()
            assert line, "the server closed its output"
            reply: dict[str, Any] = json.loads(line)
            if reply.get("id") == self._next_id:
                return reply

    def call(self, tool: str, arguments: dict[str, Any], *, tasks: bool = True) -> dict[str, Any]:
        reply = self.request("tools/call", {"name": tool, "arguments": arguments}, tasks=tasks)
        result: dict[str, Any] = reply["result"]
        return result

    def ended(self, task_id: str, timeout: float = 20) -> dict[str, Any]:
        """``tasks/get`` polled until the task has ended (or asks for input); its state."""
        deadline = time.monotonic() + timeout
        while True:
            task: dict[str, Any] = self.request("tasks/get", {"taskId": task_id})["result"]
            if task["status"] != "working":
                return task
            assert time.monotonic() < deadline, f"task {task_id} still working after {timeout} s"
            time.sleep(0.1)

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=10)


@pytest.fixture
def server(tmux_socket: str) -> Iterator[RawStdio]:
    raw = RawStdio(tmux_socket)
    try:
        yield raw
    finally:
        if raw.process.poll() is None:
            raw.close()


def assert_new_task(created: dict[str, Any], tool: str) -> str:
    """``created`` is a CreateTaskResult as the extension shapes it; its task id."""
    assert created["resultType"] == "task"
    assert TASK_ID.fullmatch(created["taskId"])
    assert created["status"] == "working"
    assert created["statusMessage"] == f"{tool} is running"
    assert ISO_UTC.fullmatch(created["createdAt"])
    assert created["lastUpdatedAt"] == created["createdAt"]
    assert created["ttlMs"] == round((DEFAULT_WAIT_CEILING_SECONDS + 300) * 1000)
    assert created["pollIntervalMs"] == 500
    task_id: str = created["taskId"]
    return task_id


def program_panes(socket_name: str) -> set[str]:
    rows = tmux(socket_name, "list-panes", "-a", "-F", f"#{{pane_id}} #{{{PANE_OPTION}}}")
    return {row.split()[0] for row in rows.splitlines() if len(row.split()) == 2}


def test_the_extension_is_declared_and_only_the_long_tools_run_as_tasks(
    server: RawStdio,
) -> None:
    discovered = server.request("server/discover", {})["result"]
    assert discovered["capabilities"]["extensions"] == {EXTENSION: {}}
    assert TASK_TOOLS == (
        "run_command", "run_command_on_hosts", "run_program", "wait_for_channel", "wait_for_text"
    )  # fmt: skip
    snapshot = server.call("tmux_snapshot", {})
    assert "resultType" not in snapshot or snapshot["resultType"] == "complete"
    assert snapshot["isError"] is False


def test_a_task_completes_with_the_programs_exact_output(server: RawStdio) -> None:
    argv = ["sh", "-c", "sleep 0.5; printf '%s\\n' 'first  line' '' '  last'"]
    created = server.call("run_program", {"argv": argv})
    task_id = assert_new_task(created, "run_program")
    task = server.ended(task_id)
    assert task["resultType"] == "complete"
    assert task["status"] == "completed"
    assert task["statusMessage"] == "run_program completed"
    assert task["taskId"] == task_id
    assert task["createdAt"] == created["createdAt"]
    assert task["lastUpdatedAt"] >= task["createdAt"]
    result = task["result"]
    assert result["isError"] is False
    assert result["structuredContent"]["output"] == "first  line\n\n  last"
    assert result["structuredContent"]["exitStatus"] == 0
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]
    # an ended task stays readable, unchanged, until its ttl
    assert server.request("tasks/get", {"taskId": task_id})["result"] == task


def test_a_cancelled_task_leaves_no_process_nor_pane(server: RawStdio, tmux_socket: str) -> None:
    server.call("run_program", {"argv": ["true"]}, tasks=False)  # schemux's own session made
    before = program_panes(tmux_socket)
    created = server.call("run_program", {"argv": ["sleep", "30.41"]})
    task_id = assert_new_task(created, "run_program")
    wait_until(lambda: running_with_argument("30.41") != [], timeout=10)
    acknowledged = server.request("tasks/cancel", {"taskId": task_id})
    assert acknowledged["result"]["resultType"] == "complete"
    # the acknowledgement comes once the call has cleaned up
    task = server.request("tasks/get", {"taskId": task_id})["result"]
    assert task["status"] == "cancelled"
    assert task["statusMessage"] == "run_program was cancelled by the client"
    assert "result" not in task
    assert "error" not in task
    assert running_with_argument("30.41") == []
    assert program_panes(tmux_socket) <= before
    # cancelling it again changes nothing
    assert "result" in server.request("tasks/cancel", {"taskId": task_id})
    assert server.request("tasks/get", {"taskId": task_id})["result"]["status"] == "cancelled"


def test_a_cancelled_run_command_gives_the_shell_its_prompt_back(
    server: RawStdio, tmux_socket: str
) -> None:
    pane = new_pane(tmux_socket)
    wait_for_shell(pane)
    created = server.call("run_command", {"command": "sleep 30.42", "pane_id": pane.pane_id})
    task_id = assert_new_task(created, "run_command")
    wait_until(lambda: pane_format(pane, "#{pane_current_command}") == "sleep", timeout=10)
    server.request("tasks/cancel", {"taskId": task_id})
    assert server.request("tasks/get", {"taskId": task_id})["result"]["status"] == "cancelled"
    wait_until(lambda: pane_format(pane, "#{pane_current_command}") == "bash", timeout=3)
    assert running_with_argument("30.42") == []


def test_a_task_whose_pane_dies_ends_in_the_tools_error(server: RawStdio, tmux_socket: str) -> None:
    # another session keeps the server up once the pane goes (as the last pane, its
    # end would end the server, and the call would answer that instead)
    keeper = new_pane(tmux_socket, command="sleep 300")
    pane = new_pane(tmux_socket)
    wait_for_shell(pane)
    created = server.call("run_command", {"command": "sleep 30.43", "pane_id": pane.pane_id})
    task_id = assert_new_task(created, "run_command")
    wait_until(lambda: pane_format(pane, "#{pane_current_command}") == "sleep", timeout=10)
    tmux(tmux_socket, "kill-pane", "-t", pane.pane_id)
    task = server.ended(task_id)
    tmux(tmux_socket, "kill-session", "-t", keeper.session_id, check=False)
    # a tool error is a completed task whose result says so (failed is for JSON-RPC errors)
    assert task["status"] == "completed"
    assert task["statusMessage"] == "run_command ended with an error"
    assert task["result"]["isError"] is True
    assert f"pane {pane.pane_id} was closed" in task["result"]["content"][0]["text"]


def test_unknown_task_ids_and_undeclared_clients_get_the_extensions_errors(
    server: RawStdio,
) -> None:
    for method in ("tasks/get", "tasks/cancel"):
        reply = server.request(method, {"taskId": "0" * 32})
        assert reply["error"]["code"] == -32602
        assert reply["error"]["message"].startswith("Failed to retrieve task: no task '000")
    huge = server.request("tasks/get", {"taskId": "f" * 100_000})  # echoed cut, never whole
    assert huge["error"]["code"] == -32602
    assert huge["error"]["message"].startswith(f"Failed to retrieve task: no task '{'f' * 79}…(")
    assert len(huge["error"]["message"]) < 300
    reply = server.request("tasks/update", {"taskId": "nope", "inputResponses": {}})
    assert reply["error"]["code"] == -32602
    missing = server.request("tasks/get", {}, tasks=True)
    assert missing["error"]["code"] == -32602  # no taskId
    undeclared = server.request("tasks/get", {"taskId": "0" * 32}, tasks=False)
    assert undeclared["error"]["code"] == -32021
    assert undeclared["error"]["data"] == {"requiredCapabilities": {"extensions": {EXTENSION: {}}}}


def test_a_client_without_the_extension_gets_the_blocking_call(server: RawStdio) -> None:
    result = server.call("run_program", {"argv": ["echo", "blocking"]}, tasks=False)
    assert result["resultType"] == "complete"
    assert result["structuredContent"]["output"] == "blocking"
    assert "taskId" not in result


def test_a_handshake_client_gets_the_blocking_call(tmux_socket: str) -> None:

    process = serve_stdio(tmux_socket)
    try:
        params = {
            "name": "run_program", "arguments": {"argv": ["echo", "handshake"]},
            "_meta": {"io.modelcontextprotocol/clientCapabilities": envelope()[
                "io.modelcontextprotocol/clientCapabilities"]},
        }  # fmt: skip
        _rpc(process, {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": params})
        result = _read_reply(process, 5)["result"]
        assert result["structuredContent"]["output"] == "handshake"
        assert "taskId" not in result
    finally:
        assert process.stdin is not None
        process.stdin.close()
        process.wait(timeout=10)


def test_the_client_going_cancels_its_tasks(tmux_socket: str) -> None:
    raw = RawStdio(tmux_socket)
    runs_for = 30.44  # its own argument, to find it by
    created = raw.call("run_program", {"argv": ["sleep", str(runs_for)]})
    assert_new_task(created, "run_program")
    wait_until(lambda: running_with_argument(str(runs_for)) != [], timeout=10)
    # stdin's end: the client has gone. The close waits at most 10 s for schemux's exit,
    # a third of the program's run: the task was ended, not waited for
    raw.close()
    assert raw.process.returncode == 0
    assert running_with_argument(str(runs_for)) == []


@pytest.mark.anyio
async def test_tasks_over_http(tmux_socket: str) -> None:
    port = free_port()
    process = serve_http(tmux_socket, port)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        async with httpx2.AsyncClient(timeout=20) as http:

            async def request(method: str, params: dict[str, Any], name: str) -> dict[str, Any]:
                headers = {
                    "Accept": "application/json, text/event-stream",
                    "MCP-Protocol-Version": VERSION, "Mcp-Method": method, "Mcp-Name": name,
                }  # fmt: skip
                body = {"jsonrpc": "2.0", "id": 1, "method": method,
                        "params": {**params, "_meta": envelope()}}  # fmt: skip
                for _ in range(100):  # until it listens
                    try:
                        response = await http.post(url, json=body, headers=headers)
                        break
                    except httpx2.TransportError:
                        await asyncio.sleep(0.1)
                reply: dict[str, Any] = response.json()
                return reply

            arguments = {"argv": ["printf", "over  http"]}
            created = (await request("tools/call", {"name": "run_program", "arguments": arguments},
                                     "run_program"))["result"]  # fmt: skip
            task_id = assert_new_task(created, "run_program")
            for _ in range(200):
                task = (await request("tasks/get", {"taskId": task_id}, task_id))["result"]
                if task["status"] != "working":
                    break
                await asyncio.sleep(0.1)
            assert task["status"] == "completed"
            assert task["result"]["structuredContent"]["output"] == "over  http"
            # a task still running when the server is stopped is cancelled and cleaned up
            arguments = {"argv": ["sleep", "30.53"]}
            await request(
                "tools/call", {"name": "run_program", "arguments": arguments}, "run_program"
            )
            await anyio.to_thread.run_sync(
                lambda: wait_until(lambda: running_with_argument("30.53") != [], timeout=10)
            )
            process.terminate()
            await anyio.to_thread.run_sync(lambda: process.wait(timeout=10))
            assert running_with_argument("30.53") == []
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait(timeout=10)


def test_every_message_matches_the_extensions_own_schemas(
    server: RawStdio, tmux_socket: str, node_scripts: Path
) -> None:
    """Checked by the extension's TypeScript package (its zod schemas of the 2026-07-28
    wire), not by this test's reading of the specification."""
    messages: list[tuple[str, dict[str, Any]]] = []
    created = server.call("run_program", {"argv": ["sh", "-c", "sleep 0.3; echo checked"]})
    messages.append(("CreateTaskResultV2Schema", created))
    working = server.request("tasks/get", {"taskId": created["taskId"]})["result"]
    messages.append(("GetTaskResultV2Schema", working))
    messages.append(("GetTaskResultV2Schema", server.ended(created["taskId"])))
    update = {"taskId": created["taskId"], "inputResponses": {}}
    messages.append(("UpdateTaskResultV2Schema", server.request("tasks/update", update)["result"]))
    pane = new_pane(tmux_socket)
    waiting = server.call("wait_for_text", {"pane_id": pane.pane_id, "patterns": ["never"]})
    messages.append(("CreateTaskResultV2Schema", waiting))
    cancel = server.request("tasks/cancel", {"taskId": waiting["taskId"]})["result"]
    messages.append(("CancelTaskResultV2Schema", cancel))
    cancelled = server.request("tasks/get", {"taskId": waiting["taskId"]})["result"]
    assert cancelled["status"] == "cancelled"
    messages.append(("GetTaskResultV2Schema", cancelled))
    run_node(node_scripts, "tasks_schemas.mjs", given=json.dumps(messages))


def test_the_extensions_typescript_requester_runs_and_cancels_tasks(
    tmux_socket: str, node_scripts: Path
) -> None:
    port = free_port()
    process = serve_http(tmux_socket, port)
    try:
        wait_until(lambda: listening(port), timeout=20)
        output = run_node(node_scripts, "tasks_requester.mjs", f"http://127.0.0.1:{port}/mcp")
        completed, cancelled = (json.loads(line) for line in output.splitlines())
        assert completed["completed"]["output"] == "from  the requester"
        assert completed["completed"]["exitStatus"] == 0
        assert cancelled == {"cancelled": {"status": "cancelled"}}
        assert running_with_argument("30.52") == []
    finally:
        process.terminate()
        process.wait(timeout=10)


# the store's bounds and expiry, with stand-in calls


class StandInServer:
    """What ``ToolTasks.serve`` registers on a low-level server, kept to call."""

    def __init__(self) -> None:
        self.handlers: dict[str, Any] = {}
        self.extensions: dict[str, dict[str, Any]] = {}

    def add_request_handler(self, method: str, params_type: Any, handler: Any) -> None:
        self.handlers[method] = (params_type, handler)

    async def handle(self, method: str, params: dict[str, Any], *, tasks: bool = True) -> Any:
        params_type, handler = self.handlers[method]
        ctx = SimpleNamespace(protocol_version=VERSION, meta=envelope(tasks=tasks))
        return await handler(ctx, params_type.model_validate(params))


class Calls:
    """Stand-in tool calls that end when told to, or are cancelled."""

    def __init__(self, calls: CallsInFlight) -> None:
        self.calls = calls
        self.release = asyncio.Event()
        self.cancelled = 0
        self.blocking = 0

    async def in_task(self, ctx: Any, params: Any) -> Any:

        async def call() -> str:
            try:
                await self.release.wait()
            except asyncio.CancelledError:
                self.cancelled += 1
                raise
            return "done"

        text = await self.calls.run(call())
        return CallToolResult(content=[TextContent(type="text", text=text)])

    async def blocking_call(self, ctx: Any, params: Any) -> Any:
        self.blocking += 1
        return {"blocking": True}


def store(ttl_seconds: float = 60.0) -> tuple[ToolTasks, StandInServer, Calls]:
    calls = CallsInFlight()
    tool_tasks = ToolTasks(calls, ttl_seconds - tasks_module.KEEP_SECONDS)
    server = StandInServer()
    stand_in = Calls(calls)
    tool_tasks.serve(
        server,  # type: ignore[arg-type]
        ["run_program"],
        blocking=stand_in.blocking_call,
        in_task=lambda ask: stand_in.in_task,
    )
    return tool_tasks, server, stand_in


CALL = {"name": "run_program", "arguments": {}}


@pytest.mark.anyio
async def test_tasks_are_bounded_and_a_full_store_answers_blocking() -> None:
    tool_tasks, server, calls = store()
    created = [await server.handle("tools/call", CALL) for _ in range(tasks_module.MAX_TASKS)]
    assert all(task["resultType"] == "task" for task in created)
    assert await server.handle("tools/call", CALL) == {"blocking": True}  # all running
    calls.release.set()
    for _ in range(50):
        await asyncio.sleep(0)
    first = await server.handle("tasks/get", {"taskId": created[0]["taskId"]})
    assert first["status"] == "completed"
    # the store is full of ended tasks: the oldest makes room for a new one
    again = await server.handle("tools/call", CALL)
    assert again["resultType"] == "task"
    with pytest.raises(MCPError) as gone:
        await server.handle("tasks/get", {"taskId": created[0]["taskId"]})
    assert gone.value.error.code == -32602
    second = await server.handle("tasks/get", {"taskId": created[1]["taskId"]})
    assert second["status"] == "completed"
    await tool_tasks.close()


@pytest.mark.anyio
async def test_a_task_past_its_ttl_is_cancelled_and_forgotten() -> None:
    tool_tasks, server, calls = store(ttl_seconds=0.2)
    created = await server.handle("tools/call", CALL)
    assert created["ttlMs"] == 200
    await asyncio.sleep(0.4)
    assert calls.cancelled == 1
    with pytest.raises(MCPError):
        await server.handle("tasks/get", {"taskId": created["taskId"]})
    await tool_tasks.close()


@pytest.mark.anyio
async def test_closing_cancels_every_running_task_and_takes_no_more() -> None:
    tool_tasks, server, calls = store()
    for _ in range(3):
        await server.handle("tools/call", CALL)
    await tool_tasks.close()
    assert calls.cancelled == 3
    assert await server.handle("tools/call", CALL) == {"blocking": True}


@pytest.mark.anyio
async def test_undeclared_requests_are_answered_blocking() -> None:
    tool_tasks, server, calls = store()
    assert await server.handle("tools/call", CALL, tasks=False) == {"blocking": True}
    other = {"name": "capture_pane", "arguments": {}}
    assert await server.handle("tools/call", other) == {"blocking": True}
    assert calls.blocking == 2
    await tool_tasks.close()
