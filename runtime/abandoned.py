"""What a schemux that died without cleaning up (``kill -9``, a crash) left behind, and
how the next one reaps it.

Every schemux process has an owner identity, its pid and its start time in clock ticks
(``PID-TICKS``): a pid alone could be reused by an unrelated process. It names the
runtime directory (``schemux-PID-TICKS-XXXXXXXX`` in the temporary directory) and marks
each program pane (pane option ``@schemux-program``). An owner whose pid runs no process,
or one that started at another time, is dead, and what it marked is abandoned.

``reap_abandoned(server)`` is the one entry point: it runs once per tmux server, when
schemux first uses it (``AbandonedReaper``), each step on its own so that one failing
does not stop the others. To reap one more kind of thing, add a step to ``STEPS``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import shutil
import tempfile
from collections.abc import Awaitable, Callable
from functools import cache
from pathlib import Path

from schemux.errors import ToolError
from schemux.tmux import ServerAddress, TmuxServer

PANE_OPTION = "@schemux-program"
RUNTIME_PREFIX = "schemux-"
_OWNER = re.compile(r"([1-9][0-9]*)-([0-9]+)")
_RUNTIME_NAME = re.compile(rf"{RUNTIME_PREFIX}([1-9][0-9]*-[0-9]+)-[a-z0-9_]+")

logger = logging.getLogger("schemux")


def start_ticks(pid: int) -> int | None:
    """Field 22 of /proc/PID/stat (start time in clock ticks since boot); None if no
    such process."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return int(stat.read().rsplit(b")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


@cache
def own_identity() -> str:
    return f"{os.getpid()}-{start_ticks(os.getpid())}"


def owner_alive(owner: str) -> bool:
    """Whether the schemux process named by ``owner`` still runs; True for anything that
    is not an owner identity, so that nothing of unknown origin is ever reaped."""
    match = _OWNER.fullmatch(owner)
    if match is None:
        return True
    return start_ticks(int(match[1])) == int(match[2])


def make_runtime_directory() -> Path:
    """This process's private runtime directory (mode 0700, from mkdtemp)."""
    return Path(tempfile.mkdtemp(prefix=f"{RUNTIME_PREFIX}{own_identity()}-"))


def reap_runtime_directories(parent: Path | None = None) -> list[Path]:
    """Remove the runtime directories (ours by uid) of schemux processes that are gone."""
    parent = parent or Path(tempfile.gettempdir())
    removed = []
    with contextlib.suppress(OSError):
        for entry in os.scandir(parent):
            match = _RUNTIME_NAME.fullmatch(entry.name)
            if match is None or owner_alive(match[1]):
                continue
            with contextlib.suppress(OSError):
                info = entry.stat(follow_symlinks=False)
                if entry.is_dir(follow_symlinks=False) and info.st_uid == os.getuid():
                    shutil.rmtree(entry.path)
                    removed.append(Path(entry.path))
    return removed


async def remove_abandoned_program_panes(server: TmuxServer) -> None:
    """Kill the program panes of dead owners; their gates then end each program's tree."""
    rows = await server.run("list-panes", "-a", "-F", f"#{{pane_id}}\t#{{{PANE_OPTION}}}")
    for row in rows:
        pane_id, _, owner = row.partition("\t")
        if owner and not owner_alive(owner):
            with contextlib.suppress(ToolError):
                await server.run("kill-pane", "-t", pane_id)


async def remove_abandoned_runtime_directories(server: TmuxServer) -> None:
    await asyncio.to_thread(reap_runtime_directories)


Step = Callable[[TmuxServer], Awaitable[None]]
STEPS: tuple[Step, ...] = (remove_abandoned_program_panes, remove_abandoned_runtime_directories)


async def reap_abandoned(server: TmuxServer) -> None:
    for step in STEPS:
        try:
            await step(server)
        except Exception:  # one step failing leaves the others to do their part
            logger.warning("reaping what a dead schemux left: %s failed", step.__name__,
                           exc_info=True)  # fmt: skip


class AbandonedReaper:
    """Runs ``reap_abandoned`` once per tmux server; ``settled`` waits for it."""

    def __init__(self) -> None:
        self._tasks: dict[ServerAddress, asyncio.Task[None]] = {}

    def start(self, server: TmuxServer) -> None:
        if server.address not in self._tasks:
            self._tasks[server.address] = asyncio.ensure_future(reap_abandoned(server))

    async def settled(self, server: TmuxServer) -> None:
        self.start(server)
        await asyncio.shield(self._tasks[server.address])

    async def close(self) -> None:
        for task in self._tasks.values():
            task.cancel()
        await asyncio.gather(*self._tasks.values(), return_exceptions=True)
