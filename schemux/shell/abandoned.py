"""What a schemux that died without cleaning up (``kill -9``, a crash) left behind, and
how the next one reaps it.

Every schemux process has an owner identity (``schemux.system.runtime_identity``): it names the
process's runtime directory and, with its machine, marks each program pane (pane option
``@schemux-program``) and each link a wait made of a user's window into ``_schemux``
(server option ``@schemux-link-PID-TICKS-MACHINE-TOKEN``, whose value is the window id;
see ``link_mark``) and each pane a run_command call of it holds (``schemux.panes.claims``).
An owner of this machine whose pid runs no process, or one that started at another time,
or one of an earlier boot, is dead, and what it marked is abandoned; an owner of another
machine is left to that machine's schemux (``Owner.may_run``), so the marks on a remote
server that this machine's schemux processes left are reaped by the next one of this
machine, and nobody else's.

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
import secrets
import shutil
import tempfile
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from schemux.errors import SchemuxError
from schemux.hooks import armed_directory
from schemux.names import OWNED_SESSION
from schemux.panes.claims import remove_dead_claims
from schemux.shell.abandoned_wrappers import release_abandoned_wrappers
from schemux.shell.channel import remove_abandoned_armed_files
from schemux.system.runtime_identity import RUNTIME_NAME, own_identity, owner_alive
from schemux.tmux.command import THEN
from schemux.tmux.server import ServerAddress, TmuxServer

PANE_OPTION = "@schemux-program"
LINK_PREFIX = "@schemux-link-"
_LINK_MARK = re.compile(rf"{LINK_PREFIX}([1-9][0-9]*-[0-9]+(?:-[0-9a-f]{{16}})?)-[0-9a-f]+")
_WINDOW_ID = re.compile(r"@[0-9]+")

logger = logging.getLogger("schemux")


def reap_runtime_directories(parent: Path | None = None) -> list[Path]:
    """Remove the runtime directories (ours by uid) of schemux processes that are gone."""
    parent = parent or Path(tempfile.gettempdir())
    removed = []
    with contextlib.suppress(OSError):
        for entry in os.scandir(parent):
            match = RUNTIME_NAME.fullmatch(entry.name)
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
    remote = not server.address.host.pids_here
    for row in rows:
        pane_id, _, owner = row.partition("\t")
        if owner and not owner_alive(owner, remote=remote):
            with contextlib.suppress(SchemuxError):
                await server.run("kill-pane", "-t", pane_id)


async def remove_abandoned_runtime_directories(server: TmuxServer) -> None:
    await asyncio.to_thread(reap_runtime_directories)


async def remove_armed_files_of_dead_owners(server: TmuxServer) -> None:
    """The files by which dead schemux processes armed shells' hooks (harmless: the hooks
    find their owner gone), where the shells run on this machine."""
    if server.address.host.files_here:
        directory = armed_directory(os.environ)
        await asyncio.to_thread(remove_abandoned_armed_files, directory)


def link_mark() -> str:
    """A new name for the server option marking one link as this process's own."""
    return f"{LINK_PREFIX}{own_identity()}-{secrets.token_hex(8)}"


def marked_link(window_id: str, mark: str) -> tuple[str, ...]:
    """The command line that links ``window_id`` into ``_schemux`` and marks the link
    ``mark``, in one line: no moment has a link without its owner."""
    return (
        "link-window", "-d", "-s", window_id, "-t", f"={OWNED_SESSION}:",
        THEN, "set-option", "-s", mark, window_id,
    )  # fmt: skip


def marked_unlink(window_id: str, mark: str) -> tuple[str, ...]:
    """The command line that takes ``marked_link``'s link and mark away: the mark first,
    as an unlink refused for a window gone ends the line. With ``-k``, a window whose own
    session was closed meanwhile ends, as it would have without the link."""
    return (
        "set-option", "-su", mark,
        THEN, "unlink-window", "-k", "-t", f"={OWNED_SESSION}:{window_id}",
    )  # fmt: skip


@dataclass(frozen=True)
class LinkMark:
    name: str
    window_id: str
    alive: bool  # whether its owner still runs


@dataclass(frozen=True)
class OwnedWindows:
    """What the reaper reads of ``_schemux`` in one tmux command line."""

    marks: list[LinkMark]
    links: Counter[str]  # window id -> how many times _schemux holds it
    elsewhere: set[str]  # windows also in a session besides _schemux
    with_programs: set[str]  # windows holding a (live: the dead ones' are gone) program pane


def parse_owned_windows(lines: Iterable[str], *, remote: bool = False) -> OwnedWindows:
    """``show-options -s`` lines, then the ``window``/``program`` rows of ``_READ``, of a
    server that is ``remote`` or not (``owner_alive``)."""
    owned = OwnedWindows([], Counter(), set(), set())
    for line in lines:
        kind, _, rest = line.partition("\t")
        if kind == "window":
            window_id, _, in_owned = rest.partition("\t")
            if in_owned == "1":
                owned.links[window_id] += 1
            else:
                owned.elsewhere.add(window_id)
        elif kind == "program":
            owned.with_programs.add(rest)
        else:
            name, _, value = line.partition(" ")
            match = _LINK_MARK.fullmatch(name)
            if match is not None and _WINDOW_ID.fullmatch(value):
                alive = owner_alive(match[1], remote=remote)
                owned.marks.append(LinkMark(name, value, alive))
    return owned


def links_to_remove(owned: OwnedWindows) -> dict[str, int]:
    """How many of each window's links in ``_schemux`` the dead owners' marks account for.

    Links of one window are all alike, so the marks are counted: a link is taken away
    only while more remain than the live marks (and, for a window that lives in
    ``_schemux`` alone and runs a program there, its own place) need. A mark whose link
    is gone already (the window closed, ``_schemux`` was killed) takes nothing.
    """
    dead = Counter(mark.window_id for mark in owned.marks if not mark.alive)
    live = Counter(mark.window_id for mark in owned.marks if mark.alive)
    removals = {}
    for window_id, count in dead.items():
        home = window_id in owned.with_programs and window_id not in owned.elsewhere
        spare = owned.links[window_id] - live[window_id] - int(home)
        if min(count, spare) > 0:
            removals[window_id] = min(count, spare)
    return removals


_IN_OWNED = f"#{{==:#{{session_name}},{OWNED_SESSION}}}"
_READ = (
    "show-options", "-s", THEN,
    "list-windows", "-a", "-F", f"window\t#{{window_id}}\t{_IN_OWNED}", THEN,
    "list-panes", "-a", "-f", f"#{{{PANE_OPTION}}}", "-F", "program\t#{window_id}",
)  # fmt: skip


async def remove_abandoned_links(server: TmuxServer) -> None:
    """Take away the links into ``_schemux`` that waits of dead owners left, and their
    marks; a live wait's link, of this process or another, stays (see ``links_to_remove``).
    Unlinking with ``-k``: a window whose own session was closed meanwhile ends, as it
    would have without the link."""
    owned = parse_owned_windows(await server.run(*_READ), remote=not server.address.host.pids_here)
    removals = links_to_remove(owned)
    for mark in sorted((mark for mark in owned.marks if not mark.alive), key=_by_name):
        if removals.get(mark.window_id, 0) > 0:
            removals[mark.window_id] -= 1
            # a link goes only with its mark, both at once: a schemux starting beside
            # this one, reaping too, finds the mark gone and leaves the next link alone.
            # Mark names and window ids have their checked shapes: the command text holds
            # nothing else.
            unlink = f"set-option -su {mark.name} ; unlink-window -k -t ={OWNED_SESSION}:"
            command = ["if-shell", "-F", f"#{{{mark.name}}}", unlink + mark.window_id]
        else:
            command = ["set-option", "-su", mark.name]
        with contextlib.suppress(SchemuxError):  # the window, or _schemux, went meanwhile
            await server.run(*command)


def _by_name(mark: LinkMark) -> str:
    return mark.name


Step = Callable[[TmuxServer], Awaitable[None]]


# program panes first: a window left to a dead owner's program is gone before links count
async def release_abandoned_shells(server: TmuxServer) -> None:
    """Free the shells that dead schemux processes' run_command wrappers hold or typed
    into (``schemux.shell.abandoned_wrappers``)."""
    await release_abandoned_wrappers(server)


async def remove_abandoned_claims(server: TmuxServer) -> None:
    """Take away dead schemux processes' run_command claims on panes
    (``schemux.panes.claims``): a call would find such a pane busy only to take it over."""
    await remove_dead_claims(server)


# what dead schemux processes left on the tmux server, and what they left on this machine
TMUX_STEPS: tuple[Step, ...] = (
    release_abandoned_shells,
    remove_abandoned_claims,
    remove_abandoned_program_panes,
    remove_abandoned_links,
)
STEPS: tuple[Step, ...] = (
    *TMUX_STEPS,
    remove_abandoned_runtime_directories,
    remove_armed_files_of_dead_owners,
)


async def reap_abandoned(server: TmuxServer) -> None:
    """Run every step. A tmux server that is not running holds nothing of a dead schemux,
    and reaping never starts one (that is a call's first command's to do, with the
    agent's session: see ``CallPermits.allow_start``), so its steps are then left out."""
    # on a server of another host (over ssh) too: each mark names its owner's machine,
    # and only this machine's owners are judged here (Owner.may_run)
    reaps_tmux = await server.running()
    for step in STEPS if reaps_tmux else STEPS[len(TMUX_STEPS) :]:
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
