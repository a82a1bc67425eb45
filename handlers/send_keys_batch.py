"""send_keys_batch: an ordered batch of send_keys operations (libtmux-mcp's
send_keys_batch). Each operation resolves its own target and types by send_keys's rules
(``schemux.panes.keys``); its failure is its result (``success: false`` with the error), and
with ``on_error: "stop"`` the first one ends the batch (``stopped_at``). ``timeout``
bounds the whole batch: the operation it cuts short, or would begin past it, fails
naming it, and the batch stops there. The pane of the first operation that resolves one
is recorded until the batch ends, each operation a marker in the recording.
"""

from __future__ import annotations

import contextlib
import time

import anyio

from schemux.audit.log import CallRecord
from schemux.domain.call import Call
from schemux.domain.pane_recording import PaneRecorder
from schemux.domain.write_policy import check_typing
from schemux.errors import SchemuxError
from schemux.generated.models.send_keys_batch import (
    Operation,
    Result,
    SendKeysBatchInput,
    SendKeysBatchOutput,
)
from schemux.panes.keys import send_keys
from schemux.panes.targets import PaneInfo, resolve_requested_pane
from schemux.tmux.server import TmuxServer


async def handle(call: Call, request: SendKeysBatchInput) -> SendKeysBatchOutput:
    server = call.tmux(request.socket_name)
    if call.settings.policy is not None:  # every pane allowed before the first key is sent
        for operation in request.operations:
            pane = await resolve_requested_pane(server, operation, None)
            await check_typing(call, server, pane, "send_keys_batch", force=request.force)
    deadline = None if request.timeout is None else time.monotonic() + request.timeout
    results: list[Result] = []
    stopped_at = None
    async with contextlib.AsyncExitStack() as stack:
        recording = _Recording(call, server, stack)
        for index, operation in enumerate(request.operations):
            result, timed_out = await _attempt(
                server, call.notes, index, operation, deadline, request.timeout, recording
            )
            results.append(result)
            if timed_out or (not result.success and request.on_error == "stop"):
                stopped_at = index
                break
    succeeded = sum(result.success for result in results)
    return SendKeysBatchOutput(
        results=results,
        succeeded=succeeded,
        failed=len(results) - succeeded,
        stopped_at=stopped_at,
    )


class _Recording:
    """The batch's recording: the first pane an operation types into, from then until
    the batch ends."""

    def __init__(self, call: Call, server: TmuxServer, stack: contextlib.AsyncExitStack) -> None:
        self._call = call
        self._server = server
        self._stack = stack
        self._begun = False
        self._recorder: PaneRecorder | None = None

    async def operation(self, index: int, pane: PaneInfo) -> None:
        if not self._begun:
            self._begun = True
            recorded = self._call.recorded(self._server, pane, "send_keys_batch")
            self._recorder = await self._stack.enter_async_context(recorded)
        if self._recorder is not None:
            self._recorder.marker(f"operation {index}: keys to {pane.pane_id}")


async def _attempt(
    server: TmuxServer,
    notes: CallRecord | None,
    index: int,
    operation: Operation,
    deadline: float | None,
    timeout: float | None,
    recording: _Recording,
) -> tuple[Result, bool]:
    """One operation's result, and whether the batch's timeout ended it."""
    started = time.monotonic()
    pane_id = None
    if deadline is not None and started >= deadline:
        error = f"the batch's timeout ({timeout:g} s) passed before this operation: not sent"
        return _failed(index, None, error, started), True
    try:
        with anyio.fail_after(None if deadline is None else deadline - started):
            pane = await resolve_requested_pane(server, operation, notes)
            pane_id = pane.pane_id
            await recording.operation(index, pane)
            await send_keys(
                server,
                pane,
                operation.keys,
                enter=operation.enter,
                literal=operation.literal,
                suppress_history=operation.suppress_history,
            )
    except TimeoutError:
        error = (
            f"the batch's timeout ({timeout:g} s) passed during this operation: its keys may "
            "or may not have been typed"
        )
        return _failed(index, pane_id, error, started), True
    except SchemuxError as failure:
        return _failed(index, pane_id, failure.render(), started), False
    return Result(
        index=index, pane_id=pane_id, success=True, elapsed_seconds=_since(started)
    ), False


def _failed(index: int, pane_id: str | None, error: str, started: float) -> Result:
    return Result(
        index=index,
        pane_id=pane_id,
        success=False,
        error=error,
        elapsed_seconds=_since(started),
    )


def _since(started: float) -> float:
    return round(time.monotonic() - started, 6)
