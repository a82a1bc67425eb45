"""The tool calls in flight, each in a task of its own, so that every way schemux ends
cancels them the same way and waits for their cleanup.

A handler cleans up when it is cancelled (``run_command`` interrupts its command,
``run_program`` ends its program) and may await that cleanup under ``asyncio.shield``.
Cancelled by a cancel scope (the SDK's, when a client cancels or stdin ends), a task is
cancelled again at each of its awaits, which cuts such a wait short: the handler returns
while its cleanup goes on unowned, and a schemux that exits then leaves it half done.
Here the call's task is cancelled exactly once, whoever cancels it, and ``close`` waits
for what a cancelled call still does before the tmux connections it needs are closed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

from schemux.errors import SchemuxError

Result = TypeVar("Result")

# how long closing waits for the cancelled calls' cleanup (a few tmux commands each)
CLEANUP_SECONDS = 1.5


class CallsInFlight:
    """The calls of one server (``ServingState.calls``) that have not ended yet."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()
        self._closing = False
        # the task awaiting ``run`` -> the call it runs (``cancel`` waits for that call)
        self._by_caller: dict[asyncio.Task[Any], asyncio.Task[Any]] = {}

    async def run(self, call: Coroutine[Any, Any, Result]) -> Result:
        """``call``'s result; cancelled, the call is cancelled once and left to clean up
        (``close`` waits for it)."""
        if self._closing:
            call.close()
            raise SchemuxError("schemux is shutting down: the call was not started")
        task = asyncio.ensure_future(call)
        self._tasks.add(task)
        task.add_done_callback(self._ended)
        caller = asyncio.current_task()
        if caller is not None:
            self._by_caller[caller] = task
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            if self._closing and not _being_cancelled():
                # schemux ends and cancelled the call itself: its caller gets an answer
                raise SchemuxError("schemux is shutting down: the call was cancelled") from None
            task.cancel()
            raise
        finally:
            if caller is not None:
                self._by_caller.pop(caller, None)

    async def cancel(self, caller: asyncio.Task[Any]) -> None:
        """Cancel ``caller``, a task that awaits a call's result (a tool call run as an
        MCP task), and wait, boundedly, until the call it runs has cleaned up."""
        call = self._by_caller.get(caller)
        caller.cancel()
        waited = {caller} if call is None else {caller, call}
        await asyncio.wait(waited, timeout=CLEANUP_SECONDS)

    def _ended(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled():
            task.exception()  # retrieved: a call whose caller left may still fail

    async def close(self) -> None:
        """Cancel every call still running (once) and wait, boundedly, for their cleanup."""
        self._closing = True
        tasks = list(self._tasks)
        for task in tasks:
            if not task.cancelling():  # a call cancelled already is cleaning up
                task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=CLEANUP_SECONDS)


def _being_cancelled() -> bool:
    """Whether the current task is being cancelled (not merely awaiting one that was)."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0
