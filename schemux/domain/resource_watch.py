"""Watches behind resource subscriptions: one per watched pane or program, shared by
every subscription to its URIs, ended with the last of them.

A pane is followed over a control client of its own (``domain.pane_watch``: tmux's ``%output``,
its window linked into ``_schemux`` while watched); a program, by its own change event
(each append to its text wakes it). Nothing is polled. Updates are coalesced: a watch
tells its subscribers at once of the first change, then at most once per
``UPDATE_INTERVAL`` while changes go on (tmux pauses the pane's output meanwhile, so a
busy pane costs nothing between updates). When its pane closes or its program's output
is complete, a watch tells its subscribers a last time (a read then says what became of
it) and ends. Ending a watch ends its control client and takes its link away.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

import anyio

from schemux.domain.pane_watch import watch_pane
from schemux.errors import SchemuxError
from schemux.panes.targets import PaneInfo
from schemux.programs.program import Program
from schemux.tmux.server import TmuxServer

logger = logging.getLogger("schemux.serving.resources")

UPDATE_INTERVAL = 0.25  # at most four updates a second per resource
MAX_WATCHES = 64  # panes and programs watched at once (each pane: one tmux client)
_PROGRAM_WAKE_SECONDS = 3600.0  # a program's change event wakes its watch; this only bounds a wait

Deliver = Callable[[str], Awaitable[None]]  # tells one subscriber that the URI changed
Changed = Callable[[], Awaitable[None]]
Follow = Callable[[Changed, Callable[[], None]], Coroutine[Any, Any, None]]


# what a watch follows: its host's name, and the pane or program there ("pane %3")
WatchKey = tuple[str, str]


class _Watch:
    """One followed pane or program and the subscriptions to its URIs."""

    def __init__(self, key: WatchKey) -> None:
        self.key = key
        self.name = f"{key[1]} on {key[0]}"
        self.subscribers: dict[object, tuple[str, Deliver]] = {}
        self.ready = asyncio.Event()  # the watch sees every change from here on
        self.task: asyncio.Task[None] | None = None

    async def changed(self) -> None:
        for uri, deliver in list(self.subscribers.values()):
            try:
                await deliver(uri)
            except Exception:  # one subscriber's failure is not the others'
                logger.exception("telling a subscriber that %s changed failed", uri)


class ResourceWatches:
    """The watches of one running schemux (``ServingState.resource_watches``)."""

    def __init__(self, limit: int = MAX_WATCHES) -> None:
        self._limit = limit
        self._watches: dict[WatchKey, _Watch] = {}
        self._closing = False

    @property
    def watching(self) -> int:
        """How many panes and programs are watched now."""
        return len(self._watches)

    def watching_on(self, host: str) -> bool:
        """Whether a pane or program of ``host`` is watched now (its connection is in
        use, never closed as idle)."""
        return any(key[0] == host for key in self._watches)

    async def subscribe(
        self, key: WatchKey, uri: str, follow: Follow, deliver: Deliver
    ) -> Callable[[], Awaitable[None]]:
        """Have ``deliver`` told of each change of ``uri`` (its source named ``key``,
        followed by ``follow`` unless a watch follows it already); returns once the watch
        sees every change, with the subscription's release. Refused, with the watch's
        error, when the source cannot be followed."""
        if self._closing:
            raise SchemuxError("schemux is shutting down: no new subscriptions")
        watch = self._watches.get(key)
        if watch is None:
            if len(self._watches) >= self._limit:
                raise SchemuxError(
                    f"{len(self._watches)} panes and programs are watched already, the most "
                    "this server allows",
                    suggestion="end a subscription first",
                )
            watch = self._watches[key] = _Watch(key)
            watch.task = asyncio.get_running_loop().create_task(
                self._run(watch, follow), name=f"watch {watch.name}"
            )
        token = object()
        watch.subscribers[token] = (uri, deliver)

        async def release() -> None:
            await self._release(watch, token)

        task = watch.task
        assert task is not None
        try:
            ready = asyncio.ensure_future(watch.ready.wait())
            try:
                await asyncio.wait([ready, task], return_when=asyncio.FIRST_COMPLETED)
            finally:
                ready.cancel()
            if not watch.ready.is_set():
                raise task.exception() or SchemuxError(f"{watch.name} cannot be watched")
        except BaseException:
            with anyio.CancelScope(shield=True):
                await release()
            raise
        return release

    async def _run(self, watch: _Watch, follow: Follow) -> None:
        """Follow the source; once it ends (its pane closed, its program's output
        complete, or the watch failed), tell its subscribers a last time. A source that
        cannot be followed at all fails the task: ``subscribe`` refuses with its error."""
        try:
            await follow(watch.changed, watch.ready.set)
        except SchemuxError as error:
            if not watch.ready.is_set():
                raise
            logger.info("watch of %s ended: %s", watch.name, error)
        except Exception:
            if not watch.ready.is_set():
                raise
            logger.exception("watch of %s failed", watch.name)
        finally:
            if self._watches.get(watch.key) is watch:
                del self._watches[watch.key]
        if watch.subscribers:
            await watch.changed()  # a read now says what became of it

    async def _release(self, watch: _Watch, token: object) -> None:
        watch.subscribers.pop(token, None)
        if watch.subscribers or watch.task is None:
            return
        if self._watches.get(watch.key) is watch:
            del self._watches[watch.key]
        watch.task.cancel()
        with contextlib.suppress(asyncio.CancelledError, SchemuxError):
            await watch.task

    async def close(self) -> None:
        """End every watch (their clients and links with them) and refuse new ones."""
        self._closing = True
        tasks = [watch.task for watch in self._watches.values() if watch.task is not None]
        self._watches.clear()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def follow_pane(
    server: TmuxServer, pane: PaneInfo, changed: Changed, ready: Callable[[], None]
) -> None:
    """Tell ``changed`` of what ``pane`` writes until it closes (a ``SchemuxError`` then)."""
    async with watch_pane(server, pane) as watch:
        await watch.begin(await watch.state(), [0])
        ready()
        told = -UPDATE_INTERVAL
        while True:
            await watch.changed()
            pause = told + UPDATE_INTERVAL - time.monotonic()
            if pause > 0:
                await asyncio.sleep(pause)
            # output is taken again before subscribers are told: what the pane writes
            # after a subscriber's read wakes this watch again
            await watch.check()
            await changed()
            told = time.monotonic()


async def follow_program(program: Program, changed: Changed, ready: Callable[[], None]) -> None:
    """Tell ``changed`` of each append to ``program``'s output until it is complete."""
    ready()
    told = -UPDATE_INTERVAL
    while not program.finished:
        size = program.text_size
        if not await program.until(
            lambda: program.finished or program.text_size != size,  # noqa: B023 (awaited here)
            _PROGRAM_WAKE_SECONDS,
        ):
            continue
        pause = told + UPDATE_INTERVAL - time.monotonic()
        if pause > 0:
            await asyncio.sleep(pause)
        if not program.finished:
            await changed()
            told = time.monotonic()
