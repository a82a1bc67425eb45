"""Recording the pane a call drives (run_command, send_keys, send_keys_batch) from tmux's
control-mode stream, into an asciicast v3 recording (``schemux.audit.recordings``).

A recording borrows a watcher client as a watch does (``pane_watch``: its window linked
into ``_schemux`` for the call, its mark, the link and the client given back on every
way the call ends) and takes every ``%output`` of the pane while the call runs, never
pausing it. Its first event draws the screen as it was when the recording began (one
``capture-pane -e`` in the same command line that turns the pane's output on, so nothing
is drawn twice or lost), so a replay ends on the screen tmux showed; a ``%layout-change``
that resizes the pane is a resize event. Recording is a witness, never a cause: when it
cannot begin (the pane went, tmux refused), the call goes on unrecorded.

The recorder also counts, as the output arrives, the line ends of the command between the
hooks' marks (``text.command_marks``): where tmux's history-limit dropped the head of a
command's output, they tell exactly how many lines went (``output_line_ends``).
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import logging
import re
import secrets
import time
from collections.abc import AsyncIterator

from schemux.audit.log import CallRecord
from schemux.audit.recordings import Recording, Recordings, call_recording_id
from schemux.domain.pane_watch import PaneWatch, end_watch
from schemux.errors import SchemuxError
from schemux.names import OWNED_SESSION
from schemux.panes.targets import PaneInfo
from schemux.text.command_marks import CommandOutputLines
from schemux.tmux.command import THEN
from schemux.tmux.control.connection import Notification, resized_to
from schemux.tmux.control.engine import OUTPUT_ON, Watcher
from schemux.tmux.server import TmuxServer

logger = logging.getLogger("schemux")

_OCTAL = re.compile(rb"\\([0-7]{3})")
_SCREEN_FORMAT = "#{pane_width} #{pane_height} #{cursor_x} #{cursor_y}"


def output_bytes(data: str) -> bytes:
    """The bytes a ``%output`` line's data stands for: tmux writes every byte below a
    space, and the backslash, as ``\\ooo`` (the line was read with ``surrogateescape``,
    so other bytes come back as they were) (pure)."""
    raw = data.encode("utf-8", "surrogateescape")
    return _OCTAL.sub(lambda found: bytes([int(found[1], 8) & 0xFF]), raw)


def screen_drawing(rows: list[str], cursor_x: int, cursor_y: int) -> str:
    """What draws the screen ``capture-pane -e`` printed (``rows``, with their escapes)
    on a clear terminal, the cursor left where it was (pure)."""
    body = "\x1b[0m\r\n".join(rows)
    return f"\x1b[0m\x1b[H\x1b[2J{body}\x1b[0m\x1b[{cursor_y + 1};{cursor_x + 1}H"


class PaneRecorder:
    """The watcher's notification callback for one pane: its output and resizes, kept
    with their times until the recording exists (``start``), then noted in it, and
    written to its file whenever enough is pending (one write at a time, in a task
    ``flushed`` waits for), so a long call's recording is never held whole in memory;
    the command's output lines counted as they come."""

    def __init__(self, pane: PaneInfo) -> None:
        self.pane_id = pane.pane_id
        self.window_id = pane.window_id
        self.recording: Recording | None = None
        self.size: tuple[int, int] | None = None
        self.watcher: Watcher | None = None  # the client whose notifications come here
        self._early: list[tuple[float, str, tuple[int, int] | None]] = []
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._lines = CommandOutputLines()
        self._flushing: asyncio.Task[None] | None = None
        # the recording's beginning (``record_pane``): its first line, then the recording
        self.beginning: asyncio.Future[Recording | None] | None = None

    def notify(self, notification: Notification) -> None:
        name, args = notification.name, notification.args
        if name == "output" and len(args) == 2 and args[0] == self.pane_id:
            data = self._decoder.decode(output_bytes(args[1]))
            self._lines.feed(data)
            self._note(data, None)
        elif (size := resized_to(notification, self.window_id, self.pane_id)) is not None:
            self._note("", size)

    def _note(self, data: str, size: tuple[int, int] | None) -> None:
        if self.recording is None:
            self._early.append((time.monotonic(), data, size))
        else:
            self._write(data, size, time.monotonic())

    def _write(self, data: str, size: tuple[int, int] | None, now: float) -> None:
        assert self.recording is not None
        if size is not None and size != self.size:
            self.size = size
            self.recording.resize(*size, now=now)
        self.recording.output(data, now=now)
        if self.recording.due and (self._flushing is None or self._flushing.done()):
            self._flushing = asyncio.get_running_loop().create_task(self.recording.flush())

    async def flushed(self) -> None:
        """Wait for the write under way, if any."""
        if self._flushing is not None:
            await self._flushing

    def start(self, recording: Recording, size: tuple[int, int], drawing: str) -> None:
        """Write to ``recording`` from here: the screen's drawing, then what came
        since the screen was read."""
        self.recording, self.size = recording, size
        recording.output(drawing)
        early, self._early = self._early, []
        for now, data, resized in early:
            self._write(data, resized, now)

    async def begun(self) -> bool:
        """Wait for the recording's first line (the link and the screen); whether the
        recording began. Cancelled, the beginning goes on (the end awaits it)."""
        if self.beginning is None:
            return self.recording is not None
        await asyncio.wait({self.beginning})
        return self.recording is not None

    def marker(self, label: str) -> None:
        if self.recording is not None:
            self.recording.marker(label)

    async def output_line_ends(self) -> int | None:
        """The line ends the command wrote between the hooks' ``C`` mark and their last
        ``D`` mark (``CommandOutputLines``), once the watcher has passed on all the pane
        wrote before this call: tmux answers a client's command after the output it
        queued for that client before it. None when no such marks came (a shell without
        the hooks, a command still running) or the watcher ended."""
        if self.watcher is None:
            return None
        try:
            await self.watcher.run("display-message", "-p", "")
        except SchemuxError as error:
            logger.info("pane %s's output lines are not counted: %s", self.pane_id, error)
            return None
        return self._lines.line_ends


@contextlib.asynccontextmanager
async def record_pane(
    server: TmuxServer,
    pane: PaneInfo,
    recordings: Recordings,
    *,
    session: str | None,
    notes: CallRecord | None,
    command: str,
    title: str,
    begin_later: bool = False,
) -> AsyncIterator[PaneRecorder | None]:
    """The pane recorded for the duration of the ``async with`` (None when recording
    is off or could not begin); the recording is noted on the call's record. On every
    way the block ends, the link and watcher are given back and the recording closed
    after it, off the call's path (``Recordings.end_later``): the unlink's answer comes
    after every ``%output`` of the call's time, so the recording misses none.

    ``begin_later``: the block begins at once, while the recording's first line (the
    link and the screen) is on its way over the watcher's own client, in parallel with
    the block's first commands; the block awaits ``PaneRecorder.begun`` before it types
    (a recorder is given wherever a watcher could be had, even one whose recording then
    fails to begin; a call that ends before it types may end before its recording is
    noted on its record)."""
    if not recordings.enabled:
        yield None
        return
    recorder = PaneRecorder(pane)
    watch = PaneWatch(pane)
    try:
        # its output turned on in the line that reads the screen (``_screen``)
        watch.attach(await server.engine.open_watcher(recorder.notify, output=False))
        recorder.watcher = watch.watcher
    except SchemuxError as error:
        logger.info("pane %s is not recorded: %s", pane.pane_id, error)
        yield None
        return
    recording_id = call_recording_id()

    async def beginning() -> Recording | None:
        try:
            size, drawing = await _screen(watch, pane)
        except SchemuxError as error:
            logger.info("pane %s is not recorded: %s", pane.pane_id, error)
            return None
        recording = recordings.begin(recording_id, session, *size, command=command, title=title)
        if recording is not None:
            recorder.start(recording, size, drawing)
            if notes is not None:
                notes.note_recording(recording.id)
        return recording

    begin = recorder.beginning = asyncio.ensure_future(beginning())
    try:
        if begin_later:
            yield recorder
        else:
            yield recorder if await recorder.begun() else None
    finally:
        recordings.end_later(_finish(server, watch, recorder, begin), recording_id)


async def _screen(watch: PaneWatch, pane: PaneInfo) -> tuple[tuple[int, int], str]:
    """Turn the watcher's and the pane's output on and read its screen in the same
    command line. A pane resolved in a session of its own is linked into ``_schemux``
    without reading its state first (its window is in that session); a program's pane,
    resolved in ``_schemux``, as its state says."""
    separator = secrets.token_hex(8)
    linking = pane.session_name != OWNED_SESSION or (await watch.state()).in_other_sessions
    lines = await watch.follow(
        linking,
        [
            "display-message", "-p", separator, THEN,
            "display-message", "-p", "-t", watch.pane_id, _SCREEN_FORMAT, THEN,
            "capture-pane", "-p", "-e", "-t", watch.pane_id,
        ],
        first=OUTPUT_ON,
    )  # fmt: skip
    if separator not in lines:
        raise SchemuxError(f"pane {watch.pane_id} was closed")
    after = lines[lines.index(separator) + 1 :]
    fields = after[0].split(" ") if after else []
    if len(fields) != 4 or not all(field.isdigit() for field in fields):
        raise SchemuxError(f"pane {watch.pane_id} was closed")
    width, height, cursor_x, cursor_y = (int(field) for field in fields)
    rows = after[1 : 1 + height]
    return (width, height), screen_drawing(rows, cursor_x, cursor_y)


async def _finish(
    server: TmuxServer,
    watch: PaneWatch,
    recorder: PaneRecorder,
    begin: asyncio.Future[Recording | None],
) -> None:
    await asyncio.wait({begin})  # its line answered: the link it made is known
    try:
        await end_watch(server, watch)
    finally:
        try:
            await recorder.flushed()
        finally:
            failure = None if begin.cancelled() else begin.exception()
            if failure is not None:
                logger.warning("pane %s is not recorded: %r", watch.pane_id, failure)
            recording = None if begin.cancelled() or failure is not None else begin.result()
            if recording is not None:
                await recording.close()
