"""The serving loop's children watched by pidfds (schemux.system.child_watching): no
thread per child, and nothing of the watcher left once the serving ends, however it
ends (returned, raised, cancelled); the default where pidfds cannot be opened."""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import warnings
from collections.abc import Awaitable, Callable

import pytest

from schemux.system import child_watching
from schemux.system.child_watching import pidfd_child_watching

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(
        sys.version_info >= (3, 12) or not child_watching.pidfds_work(),
        reason="Python chooses pidfds itself on 3.12, and a kernel without them keeps the default",
    ),
]

CHILDREN = 8


def descriptors() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


async def sleeping_children(count: int) -> list[asyncio.subprocess.Process]:
    return [await asyncio.create_subprocess_exec("sleep", "30") for _ in range(count)]


async def ended(children: list[asyncio.subprocess.Process]) -> None:
    for child in children:
        child.kill()
    await asyncio.gather(*(child.wait() for child in children))


async def test_children_add_no_thread_and_are_reaped() -> None:
    async with pidfd_child_watching() as watching:
        assert watching
        threads = threading.active_count()
        children = await sleeping_children(CHILDREN)
        assert threading.active_count() == threads
        await ended(children)
        assert [child.returncode for child in children] == [-9] * CHILDREN


async def returning() -> None:
    await ended(await sleeping_children(2))


async def raising() -> None:
    await ended(await sleeping_children(2))
    raise LookupError("the serving failed")


async def cancelled() -> None:
    children = await sleeping_children(2)
    waiting = asyncio.ensure_future(asyncio.gather(*(child.wait() for child in children)))
    try:
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
    finally:
        await ended(children)  # a serving's cleanup ends its children on the way out


@pytest.mark.parametrize("serve", [returning, raising, cancelled])
async def test_every_exit_leaves_the_default_watcher_and_no_descriptor(
    serve: Callable[[], Awaitable[None]],
) -> None:
    before = descriptors()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a watcher closed with children pending warns
        try:
            async with pidfd_child_watching():
                watcher = asyncio.get_child_watcher()
                assert isinstance(watcher, asyncio.PidfdChildWatcher)
                await serve()
        except LookupError:
            pass
    assert not watcher.is_active()
    assert descriptors() == before
    after = asyncio.get_child_watcher()
    assert not isinstance(after, asyncio.PidfdChildWatcher)
    status = await (await asyncio.create_subprocess_exec("true")).wait()
    assert status == 0  # the default watches the next child


async def test_a_kernel_that_refuses_pidfds_keeps_the_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refused(pid: int, flags: int = 0) -> int:
        raise OSError(38, "Function not implemented")

    monkeypatch.setattr(os, "pidfd_open", refused)
    async with pidfd_child_watching() as watching:
        assert not watching
        assert not isinstance(asyncio.get_child_watcher(), asyncio.PidfdChildWatcher)
        assert await (await asyncio.create_subprocess_exec("true")).wait() == 0
