"""Recordings in asciicast v3 (https://docs.asciinema.org/manual/asciicast/v3/): what a
program wrote, or what the agent's pane showed while a call drove it, with its timing.

A recording is a file ``recording-ID.cast`` beside the audit log (its directory, 0600,
never another user's nor reached through a symbolic link: ``system.private_files``). Its
first line is the header (the terminal's size, the time, the command); each line after it
is an event ``[seconds since the previous event, code, data]``: ``"o"`` output, ``"r"``
a resize (``"COLSxROWS"``), ``"m"`` a marker, ``"x"`` the exit status. What was recorded
is data in JSON strings: nothing in a recording is ever run.

Events are kept in memory (``Cast``, pure: the clock is given) until ``FLUSH_BYTES`` are
pending (``Recording.due``: the recorder then flushes) and written by a thread
(``Recording.flush``, ``close``), so the event loop never waits on the disk; a recording
holds no file open between writes. One recording is cut at ``file_limit`` bytes (a marker
says so; its exit is still written), and the directory's recordings are bounded by count
and total size, the oldest removed first (``beyond_bounds``, ``Recordings.prune``), never
one this process is still making; the directory is scanned at most every
``RESCAN_SECONDS``, and between two scans a prune counts what this process finished.

A call's recording is ended after its call returned (``Recordings.end_later``: its watch
given back and its events written, off the call's path); a read of it here waits for that
(``until_ended``), and closing schemux awaits every end. Another process reading the file
(``schemux replay``) may find its last events not written yet for a few milliseconds
after the call's audit line.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import logging
import os
import secrets
import stat
import time
from collections.abc import Coroutine, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from schemux.config import RecordingSettings
from schemux.logs import RepeatedLog
from schemux.system.private_files import make_directories, not_private, open_private

logger = logging.getLogger("schemux")

MIME_TYPE = "application/x-asciicast"
PREFIX = "recording-"
SUFFIX = ".cast"
TERM_TYPE = "tmux-256color"  # what a pane's programs are told they write to (tmux's default)
FLUSH_BYTES = 64 * 1024  # pending events a program's recording writes at once
CUT_MARKER = "recording cut: it reached its size limit"


def file_name(recording_id: str) -> str:
    return f"{PREFIX}{recording_id}{SUFFIX}"


def recording_id(name: str) -> str | None:
    """The id in a recording's file name; None for any other file."""
    if name.startswith(PREFIX) and name.endswith(SUFFIX) and len(name) > len(PREFIX + SUFFIX):
        return name[len(PREFIX) : -len(SUFFIX)]
    return None


def call_recording_id() -> str:
    """A new call recording's id: ``c`` and 12 hex digits (a program's is its id)."""
    return f"c{secrets.token_hex(6)}"


class Cast:
    """The lines of one asciicast v3 recording, made from events as they come (pure: each
    event is given the ``time.monotonic`` reading it happened at). Intervals are never
    negative; after ``limit`` bytes, output and resizes are dropped behind one marker."""

    def __init__(
        self,
        cols: int,
        rows: int,
        *,
        command: str,
        title: str,
        started: float,
        now: float,
        limit: int,
    ) -> None:
        header: dict[str, Any] = {
            "version": 3,
            "term": {"cols": cols, "rows": rows, "type": TERM_TYPE},
            "timestamp": int(started),
            "command": command,
            "title": title,
        }
        self._pending = [_json_line(header)]
        self._last = now
        self.limit = limit
        self.size = len(self._pending[0])
        self.cut = False

    def output(self, data: str, now: float) -> None:
        if data:
            self._event(now, "o", data)

    def resize(self, cols: int, rows: int, now: float) -> None:
        self._event(now, "r", f"{cols}x{rows}")

    def marker(self, label: str, now: float) -> None:
        self._event(now, "m", label)

    def exit(self, status: int, now: float) -> None:
        self._event(now, "x", str(status), always=True)

    @property
    def pending(self) -> int:
        return sum(len(line) for line in self._pending)

    def take(self) -> bytes:
        """The lines made since the last take."""
        data, self._pending = b"".join(self._pending), []
        return data

    def _event(self, now: float, code: str, data: str, *, always: bool = False) -> None:
        if self.cut and not always:
            return
        interval = max(0.0, now - self._last)
        self._last = max(now, self._last)
        line = _json_line([round(interval, 6), code, data])
        if not always and self.size + len(line) > self.limit:
            self.cut = True
            line = _json_line([round(interval, 6), "m", CUT_MARKER])
        self._pending.append(line)
        self.size += len(line)


def _json_line(value: Any) -> bytes:
    # ASCII: a lone surrogate or control character a program wrote is an escape, never raw
    return (json.dumps(value, ensure_ascii=True) + "\n").encode("ascii")


# A file not written to for this long is taken to be finished: a prune takes its size and
# time from the last scan, for up to RESTAT_SECONDS, instead of a stat of its own (a
# program's recording resumed after a pause is seen again within that)
SETTLED_SECONDS = 10.0
RESTAT_SECONDS = 60.0
# A prune scans the directory at most this often; in between it counts what this process
# finished since the last scan (at 1,000 recordings a scan after every call took 0.8 ms
# of CPU a call), so what another process or a person added or removed meanwhile is seen
# at the next scan
RESCAN_SECONDS = 10.0


@dataclass(frozen=True)
class Stored:
    """One recording file as the directory has it."""

    name: str
    modified: float
    size: int


def beyond_bounds(
    files: Sequence[Stored], max_files: int, max_bytes: int, keep: Iterable[str] = ()
) -> list[str]:
    """The names to remove, oldest first, so that at most ``max_files`` recordings of at
    most ``max_bytes`` together are left; those named in ``keep`` (being made) stay and
    count (pure)."""
    count, total = len(files), sum(stored.size for stored in files)
    if count <= max_files and total <= max_bytes:
        return []  # within the bounds: nothing to sort (a prune after every call)
    kept = set(keep)
    removed = []
    for stored in sorted(files, key=lambda stored: (stored.modified, stored.name)):
        if count <= max_files and total <= max_bytes:
            break
        if stored.name in kept:
            continue
        removed.append(stored.name)
        count -= 1
        total -= stored.size
    return removed


class Recording:
    """One recording being made (``Recordings.begin``): events noted at once, written
    by ``flush`` and ``close`` in a thread. Closed, it takes no more events."""

    def __init__(self, store: Recordings, recording_id: str, cast: Cast) -> None:
        self.id = recording_id
        self.path = store.path(recording_id)
        self._store = store
        self._cast = cast
        self._created = False
        self._lost = False  # removed from outside, or unwritable: nothing more is written
        self._lock = anyio.Lock()
        self.closed = False
        self.written: Stored | None = None  # the file as the last write left it

    def output(self, data: str, now: float | None = None) -> None:
        """Output at ``now`` (a ``time.monotonic`` reading; None: now)."""
        if not self.closed:
            self._cast.output(data, time.monotonic() if now is None else now)

    def resize(self, cols: int, rows: int, now: float | None = None) -> None:
        if not self.closed:
            self._cast.resize(cols, rows, time.monotonic() if now is None else now)

    def marker(self, label: str) -> None:
        if not self.closed:
            self._cast.marker(label, time.monotonic())

    @property
    def due(self) -> bool:
        """Whether enough is pending for a write now."""
        return self._cast.pending >= FLUSH_BYTES

    async def flush(self) -> None:
        """Write what is pending (in a thread)."""
        async with self._lock:
            data = self._cast.take()
            if not data or self._lost:
                return
            try:
                self.written = await anyio.to_thread.run_sync(self._write, data)
            except OSError as error:
                self._lost = True
                self.written = None
                self._store.unwritable(error)

    def _write(self, data: bytes) -> Stored:
        if not self._created:  # the first recording may come before the audit's first line
            make_directories(self.path.parent)
            fd = open_private(self.path, os.O_WRONLY | os.O_APPEND | os.O_EXCL)
            self._created = True
        else:
            fd = _open_existing(self.path)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            status = os.fstat(fd)
        finally:
            os.close(fd)
        return Stored(self.path.name, status.st_mtime, status.st_size)

    async def close(self, exit_status: int | None = None) -> None:
        """The exit (when known) and all that is pending written; the directory pruned.
        Shielded: every way a call or program ends closes its recording."""
        if self.closed:
            return
        if exit_status is not None:
            self._cast.exit(exit_status, time.monotonic())
        self.closed = True
        with anyio.CancelScope(shield=True):
            await self.flush()
            self._store.finished(self)
            await self._store.prune()


def _open_existing(path: Path) -> int:
    """The recording's file opened to append, when it is still there and private."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC)
    problem = not_private(os.fstat(fd))
    if problem is not None:
        os.close(fd)
        raise PermissionError(errno.EPERM, problem)
    return fd


class Recordings:
    """The recordings of one running schemux (owned by its ``Services``): where they go,
    the ones being made, and which MCP session made each (a resource serves a session
    its own)."""

    def __init__(self, settings: RecordingSettings) -> None:
        self.settings = settings
        self._active: dict[str, Recording] = {}
        self._made: dict[str, str | None] = {}  # id -> the MCP session it was made for
        # each recording file the last prune found, and when it looked (``_stored``)
        self._seen: dict[str, tuple[Stored, float]] = {}
        # the recordings this process wrote to their end, as their last write left them,
        # and when (``_stored``)
        self._finished: dict[str, tuple[Stored, float]] = {}
        # the recordings the last scan left, oldest first, with those this process finished
        # since (the newest), and when that scan was (``time.monotonic``; None: none yet)
        self._kept: dict[str, Stored] = {}
        self._scanned: float | None = None
        self._pruning = asyncio.Lock()  # one prune at a time: each acts on what the last left
        # a full disk fails every recording at once: one warning, then counts
        self._warnings = RepeatedLog(logger)
        # the ends of calls' recordings that run after their call returned, and of those
        # the recording's id each ends (``end_later``)
        self._ending: set[asyncio.Task[None]] = set()
        self._ends: dict[str, asyncio.Task[None]] = {}

    @property
    def enabled(self) -> bool:
        return self.settings.directory is not None

    def unwritable(self, error: OSError) -> None:
        """Say that a recording cannot be written (its call or program goes on), once,
        then how many more could not within the log's period."""
        self._warnings.log(
            logging.WARNING,
            f"recordings in {self.settings.directory} cannot be written "
            f"({error.strerror or error}); calls and programs go on unrecorded",
        )

    def close(self) -> None:
        """Log the count of warnings not yet logged."""
        self._warnings.close()

    def end_later(self, ending: Coroutine[Any, Any, None], recording_id: str | None) -> None:
        """Run ``ending``, the end of a call's recording (``recording_id``'s; None: its
        watch only, the recording never began), once the call has returned: its result
        does not wait for it. An error is logged; ``until_ended`` and ``ended`` wait."""
        task = asyncio.ensure_future(ending)
        self._ending.add(task)
        if recording_id is not None:
            self._ends[recording_id] = task
        task.add_done_callback(lambda done: self._ended(done, recording_id))

    def _ended(self, task: asyncio.Task[None], recording_id: str | None) -> None:
        self._ending.discard(task)
        if recording_id is not None and self._ends.get(recording_id) is task:
            del self._ends[recording_id]
        if not task.cancelled() and task.exception() is not None:
            logger.error("a recording's end failed", exc_info=task.exception())

    async def until_ended(self, recording_id: str) -> None:
        """Wait for the end of the call's recording ``recording_id`` when it is still
        being written after its call (a read then finds all of it)."""
        task = self._ends.get(recording_id)
        if task is not None:
            await asyncio.wait({task})

    async def ended(self) -> None:
        """Wait for the end of every call's recording still being ended (before the
        control clients they give back are closed)."""
        while self._ending:
            await asyncio.wait(set(self._ending))

    def path(self, recording_id: str) -> Path:
        assert self.settings.directory is not None
        return self.settings.directory / file_name(recording_id)

    def begin(
        self,
        recording_id: str,
        session: str | None,
        cols: int,
        rows: int,
        *,
        command: str,
        title: str,
    ) -> Recording | None:
        """A new recording (None when recording is off)."""
        if self.settings.directory is None:
            return None
        limit = max(self.settings.max_bytes // 8, 4096)
        cast = Cast(
            cols, rows, command=command, title=title, started=time.time(),
            now=time.monotonic(), limit=limit,
        )  # fmt: skip
        recording = Recording(self, recording_id, cast)
        self._active[recording_id] = recording
        self._made[recording_id] = session
        return recording

    def finished(self, recording: Recording) -> None:
        self._active.pop(recording.id, None)
        written = recording.written
        if written is not None:
            self._finished[written.name] = (written, time.time())
            self._kept.pop(written.name, None)
            self._kept[written.name] = written  # the newest

    def made_for(self, recording_id: str, session: str | None) -> Path | None:
        """The file of a recording this process made for ``session`` (one still being
        made has what was written of it so far); None for another session's, another
        process's, or one removed to keep within the bounds."""
        if self.settings.directory is None or self._made.get(recording_id, "") != session:
            return None
        return self.path(recording_id)

    def being_made(self) -> list[str]:
        """The ids of the recordings still being made (their call or program runs)."""
        return list(self._active)

    def made(self, session: str | None, prefix: str = "") -> list[str]:
        """The ids of the recordings this process made for ``session`` and still has,
        whose ids begin with ``prefix`` (``c``: calls', ``p``: programs'), oldest first."""
        return [
            recording_id
            for recording_id, made_for in self._made.items()
            if made_for == session and recording_id.startswith(prefix)
        ]

    def _stored(
        self,
        entry: os.DirEntry[str],
        now: float,
        made_here: bool,
        finished: Mapping[str, tuple[Stored, float]],
    ) -> Stored | None:
        """What the directory holds of ``entry`` (None: no regular file): as the last
        scan found it when that found it written to last more than ``SETTLED_SECONDS``
        before, less than ``RESTAT_SECONDS`` ago, and this process is not making it; read
        again otherwise. A scan stats only the recordings that may have changed, not a
        thousand files after every call. One this process wrote to its end is as its last
        write left it, for as long (a burst of calls does not stat each call's again)."""
        written = finished.get(entry.name)
        if written is not None and not made_here and now - written[1] < RESTAT_SECONDS:
            return written[0]
        seen = self._seen.get(entry.name)
        if seen is not None and not made_here:
            found, when = seen
            if when - found.modified > SETTLED_SECONDS and now - when < RESTAT_SECONDS:
                return found
        try:
            status = entry.stat(follow_symlinks=False)
        except OSError:
            return None
        if not stat.S_ISREG(status.st_mode):
            return None
        return Stored(entry.name, status.st_mtime, status.st_size)

    async def prune(self) -> None:
        """Remove the oldest recordings beyond the bounds (in a thread): those a scan of
        the directory finds, or between two scans (``RESCAN_SECONDS``), those the last one
        found and this process finished since; a prune within the bounds then does
        nothing."""
        directory = self.settings.directory
        if directory is None:
            return
        async with self._pruning:
            scanned = self._scanned
            if scanned is None or time.monotonic() - scanned >= RESCAN_SECONDS:
                await self._scan(directory)
            else:
                await self._prune_counted(directory)

    async def _prune_counted(self, directory: Path) -> None:
        """Prune from what the last scan found and this process finished since."""
        doomed = beyond_bounds(
            list(self._kept.values()),
            self.settings.max_files,
            self.settings.max_bytes,
            (file_name(recording_id) for recording_id in self._active),
        )
        if doomed:
            for name in doomed:
                del self._kept[name]
                self._made.pop(recording_id(name) or "", None)
            await anyio.to_thread.run_sync(_remove, directory, doomed)

    async def _scan(self, directory: Path) -> None:
        """Prune from a scan of the directory."""
        finished = dict(self._finished)
        found = await anyio.to_thread.run_sync(self._prune, directory, finished)
        self._scanned = time.monotonic()
        self._kept = {
            stored.name: stored
            for stored in sorted(found, key=lambda stored: (stored.modified, stored.name))
        }
        for name, (stored, _) in self._finished.items():
            if name not in finished:  # finished while the scan ran
                self._kept.pop(name, None)
                self._kept[name] = stored
        now = time.time()
        self._finished = {
            name: (stored, when)
            for name, (stored, when) in self._finished.items()
            if (name in self._kept or name not in finished) and now - when < RESTAT_SECONDS
        }

    def _prune(self, directory: Path, finished: Mapping[str, tuple[Stored, float]]) -> list[Stored]:
        """Remove what is beyond the bounds; the recordings left."""
        keep = {file_name(recording_id) for recording_id in self._active}
        seen = self._seen
        stored = []
        now = time.time()
        with contextlib.suppress(OSError), os.scandir(directory) as entries:
            for entry in entries:
                name = entry.name  # a name seen before is a recording's: not parsed again
                if name not in seen and name not in finished and recording_id(name) is None:
                    continue
                found = self._stored(entry, now, name in keep, finished)
                if found is not None:
                    stored.append(found)
        self._seen = {found.name: (found, now) for found in stored}
        doomed = beyond_bounds(stored, self.settings.max_files, self.settings.max_bytes, keep)
        _remove(directory, doomed)
        for name in doomed:
            self._made.pop(recording_id(name) or "", None)
        gone = set(doomed)
        return [found for found in stored if found.name not in gone]


def _remove(directory: Path, names: Iterable[str]) -> None:
    """Remove these recordings from ``directory`` (one gone already is no matter)."""
    for name in names:
        with contextlib.suppress(OSError):
            os.unlink(directory / name)


def read_cast(text: str) -> tuple[dict[str, Any], list[tuple[float, str, str]]]:
    """A recording's header and events; ValueError saying what is wrong when it is not
    asciicast v3 as this module writes it (an unfinished last line is left out)."""
    lines = text.split("\n")
    if lines and lines[-1] and not text.endswith("\n"):
        lines.pop()  # being written
    lines = [line for line in lines if line]
    if not lines:
        raise ValueError("it is empty")
    header = json.loads(lines[0])
    if not isinstance(header, dict) or header.get("version") != 3:
        raise ValueError("its first line is not an asciicast v3 header")
    term = header.get("term")
    if not isinstance(term, dict) or not all(
        isinstance(term.get(key), int) and term[key] > 0 for key in ("cols", "rows")
    ):
        raise ValueError("its header has no terminal size")
    events = []
    for number, line in enumerate(lines[1:], start=2):
        event = json.loads(line)
        if (
            not isinstance(event, list)
            or len(event) != 3
            or not isinstance(event[0], int | float)
            or event[0] < 0
            or event[1] not in ("o", "i", "r", "m", "x")
            or not isinstance(event[2], str)
        ):
            raise ValueError(f"line {number} is not an event")
        events.append((float(event[0]), event[1], event[2]))
    return header, events
