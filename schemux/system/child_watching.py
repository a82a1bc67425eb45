"""How the serving's event loop learns that a child process ended: by a pidfd of each.

Python 3.11's default (``asyncio.ThreadedChildWatcher``) starts a thread per child that
blocks in ``waitpid`` until the child ends, and schemux keeps a child per control client
and program helper of every host: 20 exec-kind hosts held 90 threads. With a pidfd
(Linux 5.3+) the loop polls one descriptor per child instead, and threads do not grow
with hosts. Python 3.12 chooses pidfds itself where the kernel has them (and deprecates
choosing a watcher), so this is done on 3.11 only, and only where ``pidfd_open`` works
(a kernel before 5.3, or a sandbox that refuses the call, keeps the default).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import AsyncIterator


def pidfds_work() -> bool:
    """Whether this process can open a pidfd (the kernel has the call and allows it)."""
    try:
        descriptor = os.pidfd_open(os.getpid())
    except (AttributeError, OSError):
        return False
    os.close(descriptor)
    return True


@contextlib.asynccontextmanager
async def pidfd_child_watching() -> AsyncIterator[bool]:
    """While inside, the running loop's children are watched by pidfds (yields True), or
    by Python's default where that is already so or cannot be (yields False). On the way
    out the watcher is closed (its descriptors with it) and the default comes back."""
    if sys.version_info >= (3, 12) or not pidfds_work():
        yield False
        return
    default = asyncio.get_child_watcher()
    watcher = asyncio.PidfdChildWatcher()
    watcher.attach_loop(asyncio.get_running_loop())
    # closing the default (a thread-per-child watcher) waits for no thread of its own
    # and leaves it usable again
    asyncio.set_child_watcher(watcher)
    try:
        yield True
    finally:
        asyncio.set_child_watcher(default)  # closes ours, and any pidfd it still held
