"""Waking when a pane writes: tmux's own ``%output`` notifications, for any pane.

tmux sends ``%output`` only to control clients whose session holds the pane's window,
and schemux's control clients attach to ``_schemux`` with ``no-output``. So a watch
borrows a spare client and turns its output on (``ControlEngine.open_watcher``; it is
given back with its output off) and, when the pane's window is not
in ``_schemux`` already (program windows are), links it in with ``link-window -d`` for
the duration of the watch, in the same command line as the first reads of its rows
(``PaneWatch.begin``: a watch starts in two round trips, the pane's state, then that
line); ``unlink-window -k`` takes the link away at the end, whatever ends the watch (a
result, a timeout, an error, the call's cancellation). ``-k`` matters only when the user
closed the window's own session meanwhile: the window then ends, as it would have
without the link.

Traffic stays small: the watcher pauses every other pane the moment it reports output
(``refresh-client -A %N:pause``), and pauses the watched pane too from the first
``%output`` after each check until the next check, which continues it in the same
command line as its reads (so output after a check always wakes the watch). Pausing, not
``off``: tmux 3.3a's ``off`` keeps the pane's queued output, which a later ``on`` then
writes from the wrong offset (the server crashed so, here); ``pause`` drops it, and a
paused pane never holds up tmux's reading of the pane for other clients. Reading a
check's rows and state goes over the watcher's own client, never the shared one.

``%output`` is not the whole truth (tmux 3.3a lost some for short-lived programs, and a
pane that dies under ``remain-on-exit`` writes nothing), so a waiter also re-checks once
a second without a wake-up: a second's worth of one ``display-message`` and one
``capture-pane``. A resource subscription's watch (``changed``, ``schemux.domain.resource_watch``)
waits for no condition and has no deadline: it wakes only on the pane's ``%output``, a
``%layout-change`` of its window (after which ``check`` tells whether the pane is still
there) or the window's close.

Each link is marked, in the same command line, with a server option naming its owner
(``shell.abandoned.link_mark``: ``@schemux-link-PID-TICKS-TOKEN``, value the window id), and the
mark is removed in the unlink's line: a schemux killed mid-watch (``kill -9``) leaves a
marked link, which the next schemux on that server takes away
(``shell.abandoned.remove_abandoned_links``, which leaves the links live watches need).

What the user can notice while a watch links a window: ``_schemux`` shows one window
more in tmux (``tmux_snapshot`` lists the window under the user's sessions only);
``window-linked`` and ``window-unlinked`` hooks fire; a control-mode client (such as
iTerm2's ``tmux -CC``) attached to a session holding the window is told ``%window-add``
and, at the end, ``%window-close`` for it; the mark is in ``show-options -s``; and
``-t %N`` lookups in tmux may name ``_schemux`` as the pane's session (tmux picks the most
recently active session holding the window), which schemux's own resolution does not
(``panes.targets.choose_session``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass

import anyio

from schemux.errors import ConnectionLost, SchemuxError, TmuxCommandError
from schemux.panes.targets import PaneInfo
from schemux.shell.abandoned import link_mark, marked_link, marked_unlink
from schemux.text.history_cuts import LAST_ROWS, HistoryReading
from schemux.tmux.command import THEN
from schemux.tmux.control.connection import Notification
from schemux.tmux.control.engine import Watcher
from schemux.tmux.format import parse_row, printed_nothing, row_format, tmux_row
from schemux.tmux.owned_session import in_other_sessions
from schemux.tmux.server import TmuxServer

logger = logging.getLogger("schemux.domain.pane_watch")

RECHECK_SECONDS = 1.0


@tmux_row
class _StateRow:
    history_size: int
    cursor_y: int
    pane_height: int
    pane_pid: str
    pane_dead: bool
    alternate_on: bool
    window_linked_sessions_list: str


@tmux_row
class _HistoryRow:
    history_size: int
    history_limit: int
    pane_height: int
    pane_width: int
    alternate_on: bool


# What a program writes to enter the alternate screen, as %output escapes ESC; a
# backslash the program wrote arrives as \134, so printed text never looks like these.
_ALTERNATE_ENTERS = ("\\033[?1049h", "\\033[?1047h", "\\033[?47h")


@dataclass(frozen=True)
class PaneState:
    """One reading of the pane's grid and process (all from one ``display-message``)."""

    history_size: int
    cursor_y: int
    height: int
    pid: str
    dead: bool
    alternate_on: bool
    in_other_sessions: bool  # the window is in a session besides _schemux


@dataclass(frozen=True)
class Reading:
    """What one command line read of the pane, all of one moment: its history (with the
    last rows of it), whether it showed the alternate screen, and what each capture
    asked for printed, a line a row (blank rows kept)."""

    history: HistoryReading
    alternate_on: bool
    captures: list[list[str]]


def parse_state(line: str) -> PaneState:
    row = parse_row(_StateRow, line)
    return PaneState(
        history_size=row.history_size,
        cursor_y=row.cursor_y,
        height=row.pane_height,
        pid=row.pane_pid,
        dead=row.pane_dead,
        alternate_on=row.alternate_on,
        in_other_sessions=in_other_sessions(row.window_linked_sessions_list),
    )


class PaneWatch:
    """Wake-ups and reads for one pane, over a watcher client (see the module)."""

    def __init__(self, pane: PaneInfo) -> None:
        self.pane_id = pane.pane_id
        self.window_id = pane.window_id
        self.linked = False  # whether this watch linked the window into _schemux
        self.mark = link_mark()  # the server option naming the link as this process's
        self.saw_alternate = False  # an alternate-screen switch passed through %output
        self._watcher: Watcher | None = None
        self._wrote = False  # the pane wrote since the last check began
        self._window_event = False  # a %window-close or the client's %exit
        self._layout_changed = False  # a %layout-change of the window (a pane may be gone)
        self._to_mute: set[str] = set()
        self._muted: set[str] = set()
        self._woken = asyncio.Event()
        self._last_check = 0.0

    @property
    def watcher(self) -> Watcher:
        if self._watcher is None:
            raise RuntimeError("the watch has no client yet")
        return self._watcher

    def attach(self, watcher: Watcher) -> None:
        """The client whose notifications come to ``notify``."""
        self._watcher = watcher

    def notify(self, notification: Notification) -> None:
        """The watcher's notification callback (called by the reader of its control connection)."""
        name, args = notification.name, notification.args
        if name == "output" and args:
            if args[0] == self.pane_id:
                data = args[-1]
                if any(enter in data for enter in _ALTERNATE_ENTERS):
                    self.saw_alternate = True
                self._wrote = True
                self._woken.set()
            elif args[0] not in self._muted:
                self._to_mute.add(args[0])
                self._woken.set()
        elif name == "exit" or (
            name in ("window-close", "unlinked-window-close") and args[:1] == (self.window_id,)
        ):
            self._window_event = True
            self._woken.set()
        elif name == "layout-change" and args[:1] == (self.window_id,):
            self._layout_changed = True
            self._woken.set()

    async def state(self) -> PaneState:
        """The pane's state, read before the watch begins (the window's sessions in it
        say whether ``begin`` links the window)."""
        lines = await self._run("display-message", "-p", "-t", self.pane_id, row_format(_StateRow))
        return self._parse_state(lines)

    async def begin(self, entry: PaneState, starts: Sequence[int]) -> Reading:
        """Begin the watch in one command line: link the window into ``_schemux`` when
        ``entry`` found it in another session (with its mark), then read the pane
        (``read``), capturing the rows from each of ``starts`` down (wrapped lines joined,
        blank rows at the bottom left out). From the link on, what the pane writes wakes
        ``wait``; what it wrote before is in this reading."""
        reading = _ReadingLine(self.pane_id, [("-J", "-S", str(start)) for start in starts])
        self._wrote = False
        self._window_event = False
        self._last_check = time.monotonic()
        lines = await self.follow(entry.in_other_sessions, reading.args)
        begun = reading.parse(lines, f"pane {self.pane_id} was closed")
        captures = [_without_trailing_blanks(rows) for rows in begun.captures]
        return Reading(begun.history, begun.alternate_on, captures)

    async def follow(
        self, linking: bool, reads: Sequence[str], *, first: Sequence[str] = ()
    ) -> list[str]:
        """Take the pane's output from here on, with ``reads`` (a command line) in the
        same line, of one moment: the window linked into ``_schemux`` when ``linking``
        (the pane's state found it in another session; with its mark), the pane
        continued; the line's answer (``refresh-client``'s own lines first). ``first``
        (a command) begins the line: the watcher's ``OUTPUT_ON``, say."""
        line: list[str] = [*first, THEN] if first else []
        if linking:
            # the mark in the same line: no moment has a link without its owner
            line += [*marked_link(self.window_id, self.mark), THEN]
            # marked before the answer: a cancellation while tmux links still unlinks
            # (the unlink queues behind the link on this client)
            self.linked = True
        # the watcher may be a client that another watch paused this pane on: continued,
        # its %continue line (if any) ends before the reading's first separator
        line += [*self._flags(on=True), THEN]
        try:
            return await self.watcher.run(*line, *reads)
        except TmuxCommandError as error:
            if self.linked:  # a link refused ends the line before its mark: none to remove
                self.linked = await self._marked()
            if error.target_gone:
                raise SchemuxError(f"pane {self.pane_id} was closed") from None
            raise

    async def _marked(self) -> bool:
        with contextlib.suppress(SchemuxError):
            return bool(await self.watcher.run("show-options", "-s", "-q", "-v", self.mark))
        return True  # unknown: end_watch removes the mark and tries the unlink

    async def check(self) -> PaneState:
        """Begin a check: the pane's state now. From here on the pane's output is taken
        again, so whatever it writes after this reading wakes ``wait``."""
        self._wrote = False
        self._window_event = False
        self._last_check = time.monotonic()
        lines = await self._run(
            *self._flags(on=True), THEN, "display-message", "-p", "-t", self.pane_id,
            row_format(_StateRow),
        )  # fmt: skip
        # refresh-client's own lines (%pause, %continue) come first, inside its answer
        return self._parse_state(lines)

    def _parse_state(self, lines: list[str]) -> PaneState:
        # display-message answers a pane that is gone with empty fields, not an error
        if not lines or printed_nothing(_StateRow, lines[-1]):
            raise SchemuxError(f"pane {self.pane_id} was closed while waiting")
        return parse_state(lines[-1])

    async def read(self, captures: Sequence[Sequence[str]]) -> Reading:
        """The pane's history and the rows each of ``captures`` (``capture-pane`` flags:
        ``-S``, ``-E``, ``-J``) prints, in one command line: of one moment, so the rows'
        numbers follow from its history size, and the rows are the alternate screen's
        exactly when it says so (a program that enters it after a ``check`` has its own
        screen captured). A capture of joined lines (``-J``) comes without the blank rows
        at its bottom, as ``begin``'s do."""
        reading = _ReadingLine(self.pane_id, captures)
        lines = await self._run(*reading.args)
        read = reading.parse(lines, f"pane {self.pane_id} was closed while waiting")
        rows = [
            _without_trailing_blanks(rows) if "-J" in flags else rows
            for flags, rows in zip(captures, read.captures, strict=True)
        ]
        return Reading(read.history, read.alternate_on, rows)

    async def wait(self, deadline: float, interval: float) -> None:
        """Return once the pane wrote since the last ``read`` (no sooner than ``interval``
        after it), its window was closed, a second went by without either, or at
        ``deadline`` (a ``time.monotonic`` reading)."""
        until = min(deadline, time.monotonic() + RECHECK_SECONDS)
        while not (self._wrote or self._window_event):
            if self._to_mute:
                await self._run(*self._flags(on=None))
            self._woken.clear()
            if self._wrote or self._window_event or self._to_mute:
                continue
            remaining = until - time.monotonic()
            if remaining <= 0:
                return
            try:
                with anyio.fail_after(remaining):
                    await self._woken.wait()
            except TimeoutError:
                return
        if self._wrote:  # nothing more from the pane until the next read turns it on
            await self._run(*self._flags(on=False))
        pause = min(self._last_check + interval, deadline) - time.monotonic()
        if pause > 0:
            await asyncio.sleep(pause)

    async def changed(self) -> None:
        """Wait, with no deadline and no re-check, until the pane wrote since the last
        ``check``, its window's layout changed or the window closed (the pane may be gone:
        ``check`` says), or the watcher ended. A pane that wrote is paused until the next
        ``check``, which takes its output again."""
        self._layout_changed = False
        while not (self._wrote or self._window_event or self._layout_changed):
            if self._to_mute:
                await self._run(*self._flags(on=None))
            self._woken.clear()
            if self._wrote or self._window_event or self._layout_changed or self._to_mute:
                continue
            await self._woken.wait()
        if self._wrote and self.watcher.alive:
            await self._run(*self._flags(on=False))

    def _flags(self, *, on: bool | None) -> list[str]:
        """One ``refresh-client`` pausing the other panes that wrote, and continuing or
        pausing the watched pane (``None``: leaving it as it is)."""
        states = [f"{pane}:pause" for pane in sorted(self._to_mute)]
        self._muted |= self._to_mute
        self._to_mute = set()
        if on is not None:
            states.append(f"{self.pane_id}:{'continue' if on else 'pause'}")
        args = ["refresh-client"]
        for state in states:
            args += ["-A", state]
        return args

    async def _run(self, *args: str) -> list[str]:
        try:
            return await self.watcher.run(*args)
        except TmuxCommandError as error:
            if error.target_gone:
                raise SchemuxError(f"pane {self.pane_id} was closed while waiting") from None
            raise


class _ReadingLine:
    """The commands of a ``Reading`` of a pane (its history, the last rows of it, then
    each capture), and the parse of their answer: a token of the line's own ends each
    part, since no pane can print it."""

    def __init__(self, pane_id: str, captures: Sequence[Sequence[str]]) -> None:
        self.separator = secrets.token_hex(8)
        self.count = len(captures)
        last_rows = ("-S", str(-LAST_ROWS), "-E", "-1")
        args = ["display-message", "-p", "-t", pane_id, row_format(_HistoryRow)]
        for flags in (last_rows, *captures):
            args += [THEN, "display-message", "-p", self.separator]
            args += [THEN, "capture-pane", "-p", "-t", pane_id, *flags]
        self.args = [*args, THEN, "display-message", "-p", self.separator]

    def parse(self, lines: list[str], closed: str) -> Reading:
        # display-message answers a pane that is gone with empty fields, not an error;
        # refresh-client's own lines (%pause, %continue), if any, come before
        parts: list[list[str]] = [[]]
        for text in lines:
            if text == self.separator:
                parts.append([])
            else:
                parts[-1].append(text)
        if (
            len(parts) != self.count + 3
            or not parts[0]
            or printed_nothing(_HistoryRow, parts[0][-1])
        ):
            raise SchemuxError(closed)
        row = parse_row(_HistoryRow, parts[0][-1])
        size = row.history_size
        # with no history, -E -1 is the screen's top row: no row of history is last
        last_rows = tuple(parts[1][: min(LAST_ROWS, size)])
        history = HistoryReading(
            size, row.history_limit, row.pane_height, row.pane_width, last_rows
        )
        return Reading(history, row.alternate_on, parts[2:-1])


def _without_trailing_blanks(lines: list[str]) -> list[str]:
    while lines and lines[-1] == "":
        lines.pop()
    return lines


@contextlib.asynccontextmanager
async def watch_pane(server: TmuxServer, pane: PaneInfo) -> AsyncIterator[PaneWatch]:
    """A watch of ``pane`` for the duration of the ``async with`` (``state``, then
    ``begin``, then ``wait`` and ``check``); everything it set up (the watcher's output,
    the window's link into ``_schemux``) is gone when it exits, also when the block is
    cancelled. A window of another session gets a link of this watch's own (another
    watch's link may go first); a program's window is in ``_schemux`` alone."""
    watch = PaneWatch(pane)
    watch.attach(await server.engine.open_watcher(watch.notify))
    try:
        yield watch
    finally:
        await asyncio.shield(end_watch(server, watch))


async def end_watch(server: TmuxServer, watch: PaneWatch) -> None:
    """Unlink what the watch linked and remove its mark (a window gone meanwhile needs
    no unlink; a watcher that died leaves both to the shared client), then give the
    watcher back."""
    watcher = watch.watcher
    try:
        if watch.linked:
            unlink = marked_unlink(watch.window_id, watch.mark)
            try:
                try:
                    await (watcher.run(*unlink) if watcher.alive else server.run(*unlink))
                except ConnectionLost:
                    # killing _schemux ends every control client attached to it, maybe
                    # under this line: once more by a client of its own
                    await server.run_subprocess(*unlink)
            except TmuxCommandError:
                pass  # the window, or _schemux, is gone: so is the link
            except SchemuxError as error:
                logger.warning("could not unlink window %s: %s", watch.window_id, error)
    finally:
        await watcher.close()
