"""Who decides a control client's start (``ControlEngine``), with no tmux: the prepare
step is the test's, and no start gets past it."""

from __future__ import annotations

import asyncio

import pytest

from schemux.errors import ServerUnavailable
from schemux.tmux.control.engine import ControlEngine

pytestmark = pytest.mark.anyio


async def test_a_caller_joining_a_start_that_fails_tries_its_own() -> None:
    """The reaper's start, begun while the server was down (or without the right to
    start it), failed; a call that joined it meanwhile gets its own start's answer, not
    the reaper's failure (seen: a call after a server restart told "no tmux server is
    running" while the new server ran)."""
    first_may_fail = asyncio.Event()
    prepared: list[object] = []

    async def prepare(starter: object) -> None:
        prepared.append(starter)
        if starter == "reaper":
            await first_may_fail.wait()
        raise ServerUnavailable(f"prepared for {starter}")

    engine = ControlEngine("test", prepare, ["tmux"], control=list)
    reaper = asyncio.ensure_future(engine.run("list-panes", starter="reaper"))
    await asyncio.sleep(0)  # the reaper's start is under way
    call = asyncio.ensure_future(engine.run("list-panes", starter="call"))
    await asyncio.sleep(0)  # the call joined it
    first_may_fail.set()
    with pytest.raises(ServerUnavailable, match="prepared for reaper"):
        await reaper
    with pytest.raises(ServerUnavailable, match="prepared for call"):
        await call
    assert prepared == ["reaper", "call"]


async def test_a_caller_that_began_the_start_is_told_its_failure_once() -> None:
    prepared: list[object] = []

    async def prepare(starter: object) -> None:
        prepared.append(starter)
        raise ServerUnavailable("down")

    engine = ControlEngine("test", prepare, ["tmux"], control=list)
    with pytest.raises(ServerUnavailable, match="down"):
        await engine.run("list-panes", starter="call")
    assert prepared == ["call"]
