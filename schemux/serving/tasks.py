"""Long tool calls as tasks: the ``io.modelcontextprotocol/tasks`` extension (MCP 2026-07-28).

A ``tools/call`` of a tool whose overlay says ``task = true`` (``TASK_TOOLS``), from a
client that declares the extension in that request's ``_meta`` capabilities, answers at
once with a ``CreateTaskResult`` (``resultType: "task"``) and runs on in the
background; the client polls ``tasks/get``, which carries the call's ``CallToolResult``
inline once it has ended (a tool error is a ``completed`` task whose result has
``isError``; ``failed`` is for a JSON-RPC error alone), and may ``tasks/cancel`` it. A
request without the declaration gets the blocking call, as the extension requires; so
does a call made when ``MAX_TASKS`` tasks are running, since the server decides, per
request, whether a call becomes a task. The extension has no ``tasks/list`` and no
``tasks/result``: the result is in ``tasks/get``.

A call that needs the person's answer (the policy's ask, ``serving.approvals``) asks it
through its task (``ToolTask.ask``): the task says ``input_required`` with the requests
(``inputRequests``), the client answers them with ``tasks/update`` (``inputResponses``),
and the task is ``working`` again; a cancel or the task's expiry meanwhile ends the wait
as it ends any.

The tasks belong to the server's ``ServingState``: bounded in number (the oldest ended
one makes room), each removed when its ``ttlMs`` has passed (the server's wait ceiling,
which bounds every call, and ``KEEP_SECONDS`` to fetch the result); a task still running
then is cancelled. Cancelling a task cancels its call through ``CallsInFlight`` (once,
its own cleanup awaited: an interrupted command, an ended program), and only then does
the task say ``cancelled``. ``close``, on every way schemux ends, cancels them all. Task
ids are random (128 bits): any caller the transport lets in may poll one it was given.

The SDK (mcp 2.3) does not implement the extension; this serves it on the low-level
server: ``tools/call`` and the three ``tasks/*`` methods. The optional
``notifications/tasks`` (pushed on a ``subscriptions/listen`` stream) are not sent:
clients poll.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import mcp_types as types
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import Field

from schemux.errors import preview
from schemux.serving.in_flight import CallsInFlight

logger = logging.getLogger("schemux")

EXTENSION = "io.modelcontextprotocol/tasks"
MAX_TASKS = 32  # kept at once, running or ended
KEEP_SECONDS = 300.0  # how long past the longest call a task's result can be fetched
POLL_INTERVAL_MS = 500  # the calls take seconds; a poll is one dictionary lookup

WORKING, COMPLETED, FAILED, CANCELLED = "working", "completed", "failed", "cancelled"
INPUT_REQUIRED = "input_required"
ENDED = frozenset({COMPLETED, FAILED, CANCELLED})

CallHandler = Callable[
    [ServerRequestContext[Any], types.CallToolRequestParams],
    Awaitable[types.CallToolResult | types.InputRequiredResult],
]
# asks the client, through the call's task, the input requests (key -> request in wire
# form) and returns its responses (key -> response as the client sent it)
TaskInput = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]


class TaskParams(types.RequestParams):
    """``tasks/get`` and ``tasks/cancel``: the task named."""

    task_id: str = Field(alias="taskId")


class UpdateTaskParams(TaskParams):
    """``tasks/update``: answers to a task's input requests."""

    input_responses: dict[str, Any] = Field(alias="inputResponses")


def _now() -> str:
    """ISO 8601, UTC, to the millisecond."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class ToolTask:
    """One tool call run as a task, and what ``tasks/get`` says of it."""

    task_id: str
    tool: str
    ttl_ms: int
    created_at: str = field(default_factory=_now)
    last_updated_at: str = ""
    status: str = WORKING
    status_message: str = ""
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    runner: asyncio.Task[None] | None = None
    expiry: asyncio.TimerHandle | None = None
    # while input_required: what the call asks, the responses so far, and its wait
    input_requests: dict[str, Any] = field(default_factory=dict)
    input_responses: dict[str, Any] = field(default_factory=dict)
    answered: asyncio.Future[None] | None = None

    def __post_init__(self) -> None:
        self.last_updated_at = self.created_at
        self.status_message = f"{self.tool} is running"

    @property
    def ended(self) -> bool:
        return self.status in ENDED

    def end(self, status: str, message: str) -> None:
        """The task's last state; a task ends once (a cancel that came too late loses)."""
        if self.ended:
            return
        self._set(status, message)

    def _set(self, status: str, message: str) -> None:
        self.status = status
        self.status_message = message
        self.last_updated_at = _now()

    async def ask(self, requests: dict[str, Any]) -> dict[str, Any]:
        """Ask the client ``requests`` through this task (``input_required``) and wait
        for a ``tasks/update`` that answers every one; their responses. A cancel of the
        call ends the wait (the task is then ``working`` until its cancel ends it)."""
        self.input_requests = dict(requests)
        self.input_responses = {}
        self.answered = asyncio.get_running_loop().create_future()
        self._set(INPUT_REQUIRED, f"{self.tool} waits for the client's answer")
        try:
            await self.answered
            return {key: self.input_responses[key] for key in requests}
        finally:
            self.input_requests, self.answered = {}, None
            if self.status == INPUT_REQUIRED:
                self._set(WORKING, f"{self.tool} is running")

    def take(self, responses: Mapping[str, Any]) -> None:
        """The responses of a ``tasks/update``: those to an outstanding request are kept
        (others ignored, as the extension says); the wait ends once every one has one."""
        if self.answered is None or self.answered.done():
            return
        self.input_responses.update(
            (key, value) for key, value in responses.items() if key in self.input_requests
        )
        if set(self.input_requests) <= set(self.input_responses):
            self.answered.set_result(None)
            self._set(WORKING, f"{self.tool} is running")  # a poll right after sees it

    def wire(self) -> dict[str, Any]:
        """The ``DetailedTask`` for this state: the result or error inline once ended."""
        task: dict[str, Any] = {
            "taskId": self.task_id,
            "status": self.status,
            "statusMessage": self.status_message,
            "createdAt": self.created_at,
            "lastUpdatedAt": self.last_updated_at,
            "ttlMs": self.ttl_ms,
            "pollIntervalMs": POLL_INTERVAL_MS,
        }
        if self.status == COMPLETED:
            task["result"] = self.result
        elif self.status == FAILED:
            task["error"] = self.error
        elif self.status == INPUT_REQUIRED:
            task["inputRequests"] = self.input_requests
        return task


def declares_tasks(ctx: ServerRequestContext[Any]) -> bool:
    """Whether this request's own ``_meta`` declares the extension (a 2026-07-28 request;
    what an earlier request declared does not count)."""
    if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
        return False
    capabilities = (ctx.meta or {}).get(types.CLIENT_CAPABILITIES_META_KEY)
    if not isinstance(capabilities, Mapping):
        return False
    extensions = capabilities.get("extensions")
    return isinstance(extensions, Mapping) and isinstance(extensions.get(EXTENSION), Mapping)


def _missing_capability() -> MCPError:
    return MCPError(
        types.MISSING_REQUIRED_CLIENT_CAPABILITY,
        f"Missing required client capability: the {EXTENSION} extension, declared in this "
        "request's _meta clientCapabilities",
        data={"requiredCapabilities": {"extensions": {EXTENSION: {}}}},
    )


class ToolTasks:
    """The tasks of one server (``ServingState.tasks``)."""

    def __init__(self, calls: CallsInFlight, longest_call_seconds: float) -> None:
        self._calls = calls
        self._ttl_ms = round((longest_call_seconds + KEEP_SECONDS) * 1000)
        self._tasks: dict[str, ToolTask] = {}  # in creation order
        self._closing = False

    def serve(
        self,
        server: Server[Any],
        tools: Iterable[str],
        *,
        blocking: CallHandler,
        in_task: Callable[[TaskInput], CallHandler],
    ) -> None:
        """Serve ``tools/call`` on ``server`` (``blocking`` answers when the call ends;
        ``in_task(ask)`` runs a call of one of ``tools`` as a task, asking the client
        through it with ``ask``) and the ``tasks/*`` methods, and declare the extension."""
        task_tools = frozenset(tools)

        async def call_tool(
            ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
        ) -> types.CallToolResult | types.InputRequiredResult | dict[str, Any]:
            if params.name in task_tools and declares_tasks(ctx) and self._make_room():
                return self._start(params, lambda ask: in_task(ask)(ctx, params))
            return await blocking(ctx, params)

        server.add_request_handler("tools/call", types.CallToolRequestParams, call_tool)
        server.add_request_handler("tasks/get", TaskParams, self._get)
        server.add_request_handler("tasks/update", UpdateTaskParams, self._update)
        server.add_request_handler("tasks/cancel", TaskParams, self._cancel)
        server.extensions[EXTENSION] = {}

    def _make_room(self) -> bool:
        """Whether a task can be kept: the oldest ended task goes when there are
        ``MAX_TASKS``; when all of them run, the call is answered when it ends."""
        if self._closing:
            return False
        if len(self._tasks) < MAX_TASKS:
            return True
        oldest_ended = next((task for task in self._tasks.values() if task.ended), None)
        if oldest_ended is None:
            return False
        self._forget(oldest_ended)
        return True

    def _start(
        self,
        params: types.CallToolRequestParams,
        call: Callable[[TaskInput], Awaitable[types.CallToolResult | types.InputRequiredResult]],
    ) -> dict[str, Any]:
        task = ToolTask(secrets.token_hex(16), params.name, self._ttl_ms)
        self._tasks[task.task_id] = task
        loop = asyncio.get_running_loop()
        task.runner = loop.create_task(self._run(task, call(task.ask)))
        task.expiry = loop.call_later(self._ttl_ms / 1000, self._expire, task)
        return {"resultType": "task", **task.wire()}

    async def _run(
        self, task: ToolTask, call: Awaitable[types.CallToolResult | types.InputRequiredResult]
    ) -> None:
        try:
            result = await call
        except MCPError as error:
            task.error = error.error.model_dump(by_alias=True, mode="json", exclude_none=True)
            task.end(FAILED, f"{task.tool} failed: {error.error.message}")
            return
        except Exception as error:  # the pipeline answers every failure; this is a bug
            logger.exception("%s, run as a task, failed unexpectedly", task.tool)
            task.error = {"code": types.INTERNAL_ERROR, "message": f"{type(error).__name__}"}
            task.end(FAILED, f"{task.tool} failed unexpectedly (details in the server's log)")
            return
        if not isinstance(result, types.CallToolResult):  # a task asks by ToolTask.ask instead
            task.end(FAILED, f"{task.tool} needed input a task cannot ask for")
            return
        task.result = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        outcome = "ended with an error" if result.is_error else "completed"
        task.end(COMPLETED, f"{task.tool} {outcome}")

    def _known(self, ctx: ServerRequestContext[Any], task_id: str) -> ToolTask:
        if not declares_tasks(ctx):
            raise _missing_capability()
        task = self._tasks.get(task_id)
        if task is None:
            raise MCPError(
                types.INVALID_PARAMS,
                f"Failed to retrieve task: no task {preview(task_id)} (unknown, or removed when "
                "its ttlMs passed)",
            )
        return task

    async def _get(self, ctx: ServerRequestContext[Any], params: TaskParams) -> dict[str, Any]:
        return self._known(ctx, params.task_id).wire()

    async def _update(
        self, ctx: ServerRequestContext[Any], params: UpdateTaskParams
    ) -> dict[str, Any]:
        # responses to no outstanding request are ignored, as the extension says
        self._known(ctx, params.task_id).take(params.input_responses)
        return {}

    async def _cancel(self, ctx: ServerRequestContext[Any], params: TaskParams) -> dict[str, Any]:
        task = self._known(ctx, params.task_id)
        await self._cancel_task(task, "cancelled by the client")
        return {}

    async def _cancel_task(self, task: ToolTask, why: str) -> None:
        """Cancel the task's call and, its cleanup done, mark it cancelled (unless it
        ended first)."""
        if task.ended or task.runner is None:
            return
        await self._calls.cancel(task.runner)
        task.end(CANCELLED, f"{task.tool} was {why}")

    def _expire(self, task: ToolTask) -> None:
        self._forget(task)
        if not task.ended and task.runner is not None:
            # past its ttl, nobody can fetch it: the call is cancelled, its cleanup
            # owned by CallsInFlight (which schemux's close waits for)
            task.runner.cancel()

    def _forget(self, task: ToolTask) -> None:
        self._tasks.pop(task.task_id, None)
        if task.expiry is not None:
            task.expiry.cancel()

    async def close(self) -> None:
        """Cancel every running task, waiting for the cleanup of each call; forget all."""
        self._closing = True
        tasks = list(self._tasks.values())
        await asyncio.gather(*(self._cancel_task(task, "ended by schemux") for task in tasks))
        for task in tasks:
            self._forget(task)
