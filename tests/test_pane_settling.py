"""A next call's wait for a cancelled call of ours on its pane (``PaneSettling``), with no
tmux: the cleanup is a coroutine of the test's, the claim never sent."""

from __future__ import annotations

import asyncio
from typing import cast

import pytest

from schemux.errors import PaneBusy
from schemux.panes.targets import PaneInfo
from schemux.shell import settling
from schemux.shell.settling import PaneSettling
from schemux.tmux.server import TmuxServer

pytestmark = pytest.mark.anyio

PANE = PaneInfo("%1", "@1", "$1", "s", False, False, "bash", 1, "/", "/tmp/socket")
NO_SERVER = cast(TmuxServer, object())  # a claim never sent reaches no server


@pytest.fixture(autouse=True)
def short_patience(monkeypatch: pytest.MonkeyPatch) -> None:
    # every fixed patience shorter than the cleanup below
    monkeypatch.setattr(settling, "IN_FLIGHT_GRACE_SECONDS", 0.1)
    monkeypatch.setattr(settling, "INTERRUPTED_SETTLE_SECONDS", 0.1)


async def cancelled_call(panes: PaneSettling, cleanup_seconds: float) -> asyncio.Task[None]:
    """A call on PANE, cancelled at once, whose cleanup takes ``cleanup_seconds``."""
    started = asyncio.Event()

    async def call() -> None:
        async with panes.occupying(NO_SERVER, PANE):
            started.set()
            try:
                await asyncio.sleep(60)
            except asyncio.CancelledError:
                await asyncio.shield(panes.settle(PANE.pane_id, asyncio.sleep(cleanup_seconds)))
                raise

    task = asyncio.ensure_future(call())
    await started.wait()
    task.cancel()
    return task


async def test_a_cleanup_longer_than_every_patience_is_waited_for_within_the_timeout() -> None:
    panes = PaneSettling()
    earlier = await cancelled_call(panes, cleanup_seconds=0.6)
    await panes.until_ours_ended(PANE, within=5)
    async with panes.occupying(NO_SERVER, PANE):  # the pane is free: not busy
        pass
    assert earlier.cancelled()


async def test_a_cleanup_past_the_next_call_s_timeout_leaves_the_pane_busy() -> None:
    panes = PaneSettling()
    earlier = await cancelled_call(panes, cleanup_seconds=2)
    await panes.until_ours_ended(PANE, within=0.3)
    assert not earlier.done()  # bounded by the timeout, not by the cleanup
    with pytest.raises(PaneBusy):
        async with panes.occupying(NO_SERVER, PANE):
            pass
    await asyncio.gather(earlier, return_exceptions=True)


async def test_a_call_still_running_is_busy_after_the_grace() -> None:
    panes = PaneSettling()
    started = asyncio.Event()

    async def running() -> None:
        async with panes.occupying(NO_SERVER, PANE):
            started.set()
            await asyncio.sleep(60)

    task = asyncio.ensure_future(running())
    await started.wait()
    loop = asyncio.get_running_loop()
    began = loop.time()
    await panes.until_ours_ended(PANE, within=30)  # no cleanup began: the grace decides
    assert loop.time() - began < 10  # not the 30 s
    with pytest.raises(PaneBusy):
        async with panes.occupying(NO_SERVER, PANE):
            pass
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
