"""The audit log: one JSON line per tool call, written by a thread of its own.

Each ``tools/call`` (``serving.server.call_tool``, wrapped by :meth:`AuditLog.recording`) runs
inside :meth:`AuditLog.call`, which makes a :class:`CallRecord` of what is known at once
(time, client, MCP session, tool, arguments, ``traceparent``); what the call finds out
on its way is noted on that record, which the call carries (``Call.notes``) to the code
that learns it: the pane it resolved (``targets``), the program it started or read
(``programs.store``), its recording (``audit.recordings``), the hosts it ran on, and its
error code (the pipeline's refusals
and ``SchemuxError.code``). When the call ends, the record goes to a bounded queue, and the
writer thread turns it into a line (arguments cut and redacted, see
:func:`recorded_arguments`) and appends it to the file, the records of
``BATCH_SECONDS`` in one write. Nothing here blocks the event loop or fails a call: a
full queue drops the record, an unwritable file is one warning (a ``gap`` line counts
what was lost once writing works again). A write that fails part way (a disk that fills
up) is taken back to the last whole line, so no record is ever glued to the next.

The file is 0600 (the directories schemux makes for it 0700), never another user's nor
reached through a symbolic link (``system.private_files``: refused at start by
:func:`check_file`, and when the writer opens it), and rotates by size: at
``max_bytes`` it becomes ``audit.jsonl.1``, the older ones move up, and ``BACKUPS`` old
files are kept. Several schemux processes may share it: each batch is written under an
``flock`` of the directory, and a process whose file was rotated by another opens the
new one.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import queue
import re
import threading
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from schemux.calls.sessions import session_of
from schemux.config import ENV_AUDIT_LOG, AuditSettings
from schemux.errors import CANCELLED, INTERNAL_ERROR, ConfigError
from schemux.generated.argument_facts import REDACTED_ARGUMENTS, TARGET_ARGUMENTS
from schemux.system.private_files import ADVICE, check_private, make_directories, open_private

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext
    from mcp_types import CallToolRequestParams, CallToolResult

    CallHandler = Callable[
        [ServerRequestContext[Any], CallToolRequestParams], Awaitable[CallToolResult]
    ]
    RecordedHandler = Callable[
        [ServerRequestContext[Any], CallToolRequestParams, "CallRecord"],
        Awaitable[CallToolResult],
    ]

logger = logging.getLogger("schemux")

OK = "ok"
BACKUPS = 4
QUEUE_RECORDS = 1024  # calls waiting to be written; beyond, a record is dropped and counted
CLOSE_SECONDS = 2.0  # for the writer to write what is queued, at exit
BATCH_SECONDS = 0.05  # the writer's pause after a write: later records are written together

_TRACEPARENT = re.compile(r"[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}")


@dataclass(frozen=True)
class ArgumentLimits:
    """How much of a call's arguments a record keeps: a longer string is cut to its
    first ``text`` characters (with its length and hash), a key to ``key`` characters, a
    list or object to its first ``items`` members, nesting below ``depth`` is dropped;
    once ``total`` characters of text are kept, later strings are kept as length and hash
    only, and after ``values`` values, a list or object ends there. Each cut path is
    listed in the record's ``cut``."""

    text: int = 1024
    key: int = 64
    items: int = 64
    depth: int = 8
    total: int = 16384
    values: int = 1024


LIMITS = ArgumentLimits()


def digest(text: str) -> dict[str, Any]:
    """``{"length": characters, "sha256": hex of its UTF-8}``; a lone surrogate (which
    JSON can spell) is hashed as Python's ``surrogatepass`` encodes it."""
    data = text.encode("utf-8", "surrogatepass")
    return {"length": len(text), "sha256": hashlib.sha256(data).hexdigest()}


@dataclass
class _Recording:
    """One walk over a call's arguments: the paths it redacted and cut, and the text
    budget left."""

    redact: bool
    limits: ArgumentLimits
    budget: int
    values: int
    redacted: list[str] = field(default_factory=list)
    cut: list[str] = field(default_factory=list)

    def value(self, value: Any, path: str, depth: int, redacting: bool) -> Any:
        self.values -= 1
        if isinstance(value, str):
            return self.text(value, path, redacting)
        if isinstance(value, bool | int | float) or value is None:
            return value
        if depth >= self.limits.depth:
            self.cut.append(path)
            return None
        if isinstance(value, Mapping):
            kept: dict[str, Any] = {}
            for key, item in value.items():
                if not self._room(path, len(kept)):
                    break
                name = str(key)[: self.limits.key]
                inner = f"{path}.{name}" if path else name
                if len(name) < len(str(key)):
                    self.cut.append(inner)
                redact = redacting or name in REDACTED_ARGUMENTS  # a batch's too
                kept[name] = self.value(item, inner, depth + 1, redact)
            return kept
        if isinstance(value, list | tuple):
            listed = []
            for index, item in enumerate(value):
                if not self._room(path, index):
                    break
                listed.append(self.value(item, f"{path}[{index}]", depth + 1, redacting))
            return listed
        return repr(value)[: self.limits.text]  # JSON gives none other; a caller's own

    def _room(self, path: str, kept: int) -> bool:
        """Whether a list or object at ``path`` with ``kept`` members takes one more."""
        if kept < self.limits.items and self.values > 0:
            return True
        self.cut.append(path or "(arguments)")
        return False

    def text(self, text: str, path: str, redacting: bool) -> Any:
        if redacting and self.redact:
            self.redacted.append(path)
            return digest(text)
        keep = min(len(text), self.limits.text, self.budget)
        self.budget -= keep
        if keep == len(text):
            return text
        self.cut.append(path)
        cut = digest(text)
        if keep:
            cut["head"] = text[:keep]
        return cut


def recorded_arguments(
    arguments: Mapping[str, Any], redact: bool, limits: ArgumentLimits = LIMITS
) -> dict[str, Any]:
    """``{"arguments": ..., "redacted": [paths], "cut": [paths]}`` (the lists only when
    not empty): the arguments as the record keeps them. A redacted string is
    ``{"length", "sha256"}``; a cut one ``{"head", "length", "sha256"}``."""
    walk = _Recording(redact, limits, limits.total, limits.values)
    recorded: dict[str, Any] = {"arguments": walk.value(arguments, "", 0, False)}
    if walk.redacted:
        recorded["redacted"] = walk.redacted
    if walk.cut:
        recorded["cut"] = walk.cut
    return recorded


def argument_targets(arguments: Mapping[str, Any]) -> dict[str, str]:
    """The target ids the arguments name (``TARGET_ARGUMENTS``, from the tools'
    overlays), each at most 64
    characters: what a record shows for a call that resolved no target."""
    found = {}
    for kind, names in TARGET_ARGUMENTS.items():
        for name in names:
            value = arguments.get(name)
            if isinstance(value, Mapping):
                value = value.get("id")
            if isinstance(value, str) and value:
                found[kind] = value[:64]
                break
    return found


def traceparent(meta: Mapping[str, Any] | None) -> str | None:
    """The request's W3C ``traceparent``, when ``_meta`` carries a well-formed one."""
    value = None if meta is None else meta.get("traceparent")
    if isinstance(value, str) and _TRACEPARENT.fullmatch(value):
        return value
    return None


def timestamp(seconds: float) -> str:
    """``2026-12-01T15:32:07.123Z``."""
    moment = datetime.fromtimestamp(seconds, UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


@dataclass
class CallRecord:
    """One tool call as the audit sees it; the pipeline and the code it runs note what
    they learn on it (``note_*``). Once the call has ended, notes are ignored: tasks the
    call started may outlive it, and what they learn is not its."""

    tool: str
    arguments: Mapping[str, Any]
    client: dict[str, str] | None = None
    session: str | None = None
    traceparent: str | None = None
    started: float = field(default_factory=time.time)
    began: float = field(default_factory=time.monotonic)
    duration: float = 0.0
    outcome: str = OK
    pane: str | None = None
    program: str | None = None
    recording: str | None = None  # the id of the call's recording (schemux.audit.recordings)
    host: str | None = None  # the host the call ran on, when it chose; several: by commas
    several_hosts: bool = False  # each has its own pane: the record names none of them
    returned: int = 0
    ended: bool = False  # tasks the call started may outlive it: their notes are not its

    def note_outcome(self, code: str) -> None:
        """The call failed with ``code``."""
        if not self.ended:
            self.outcome = code

    def note_pane(self, pane_id: str) -> None:
        """The call resolved its target to ``pane_id`` (on one of its hosts)."""
        if not self.ended and not self.several_hosts:
            self.pane = pane_id

    def note_program(self, program_id: str, pane_id: str) -> None:
        """The call started or names ``program_id``, in ``pane_id``."""
        if not self.ended:
            self.program = program_id
            self.pane = pane_id or self.pane

    def note_recording(self, recording_id: str) -> None:
        """The call was recorded (the agent's pane it drove, or the program it started)
        as ``recording_id``."""
        if not self.ended:
            self.recording = recording_id

    def note_hosts(self, names: Sequence[str]) -> None:
        """The call runs on each of the configured hosts ``names`` (one; or a fan-out, a
        list from every host): the record names them all, and a pane only with one."""
        if not self.ended:
            self.host = ",".join(names)
            self.several_hosts = len(names) > 1
            if self.several_hosts:
                self.pane = None

    def answered(self, result: CallToolResult) -> CallToolResult:
        """``result``, the bytes of its text counted."""
        self.returned = sum(
            len(getattr(item, "text", "").encode("utf-8", "surrogatepass"))
            for item in result.content
        )
        return result

    def line(self, host: str, pid: int, redact: bool) -> bytes:
        """The record as one line of JSON (ASCII: every control character, line
        separator and non-ASCII character escaped)."""
        targets = argument_targets(self.arguments)
        record: dict[str, Any] = {
            "time": timestamp(self.started),
            "client": self.client,
            "session": self.session,
            "pid": pid,
            "tool": self.tool[: LIMITS.text],
            "host": self.host or host,
        }
        pane = self.pane or targets.get("pane")
        program = self.program or targets.get("program")
        if pane is not None:
            record["pane"] = pane
        if program is not None:
            record["program"] = program
        if self.recording is not None:
            record["recording"] = self.recording
        try:
            record.update(recorded_arguments(self.arguments, redact))
        except Exception as error:  # a value no walk foresaw: the call is still recorded
            record["arguments"] = {"unrecordable": type(error).__name__}
        record["outcome"] = self.outcome
        record["duration_ms"] = round(self.duration * 1000, 1)
        record["bytes"] = self.returned
        if self.traceparent is not None:
            record["traceparent"] = self.traceparent
        return (json.dumps(record, ensure_ascii=True) + "\n").encode("ascii")


def _client(request_context: Any) -> dict[str, str] | None:
    params = getattr(request_context.session, "client_params", None)
    info = getattr(params, "client_info", None)
    if info is None:
        return None
    return {"name": str(info.name)[:200], "version": str(info.version)[:200]}


class AuditLog:
    """The audit of one running server (owned by its ``ServingState``, closed with it)."""

    def __init__(self, settings: AuditSettings, host: str) -> None:
        self.settings = settings
        self.host = host
        # stdio (or the in-memory transport) is one MCP session: this process's
        self.session = f"stdio-{uuid.uuid4().hex[:12]}"
        self._pid = os.getpid()
        self._queue: queue.Queue[CallRecord | None] = queue.Queue(QUEUE_RECORDS)
        self._writer: threading.Thread | None = None
        self._file = None if settings.path is None else AuditFile(settings.path, settings)
        self._closed = False
        self._closing = threading.Event()  # ends the writer's pause between batches

    def recording(self, handler: RecordedHandler) -> CallHandler:
        """``handler`` of ``tools/call``, each call it answers recorded (``handler`` is
        given the call's record, to note on)."""

        async def recorded(
            request_context: ServerRequestContext[Any], params: CallToolRequestParams
        ) -> CallToolResult:
            arguments = dict(params.arguments or {})
            with self.call(params.name, arguments, request_context) as call:
                return call.answered(await handler(request_context, params, call))

        return recorded

    def _transport_session(self, request_context: Any) -> str | None:
        """Over streamable HTTP, the session's id, or for a stateless request (MCP
        2026-07-28 has no session) the connection it came on, ``http-ADDRESS:PORT``, which
        groups a client's calls while it keeps its connection; over stdio (or in memory),
        this process's one session."""
        request = request_context.request
        if request is None:
            return self.session
        value = session_of(request_context)
        if value is not None:
            return value[:200]
        peer = getattr(request, "client", None)
        return None if peer is None else f"http-{peer.host}:{peer.port}"[:200]

    @contextlib.contextmanager
    def call(
        self, tool: str, arguments: Mapping[str, Any], request_context: Any
    ) -> Iterator[CallRecord]:
        """The record of the call run inside, written when it ends, whatever way."""
        record = CallRecord(tool, arguments)
        if self._file is not None:
            try:
                record.client = _client(request_context)
                record.session = self._transport_session(request_context)
                record.traceparent = traceparent(request_context.meta)
            except Exception:  # a request the SDK shaped otherwise: recorded without them
                logger.debug("the audit could not read the request's context", exc_info=True)
        try:
            yield record
        except BaseException as error:
            if record.outcome == OK:
                cancelled = isinstance(error, anyio.get_cancelled_exc_class())
                record.outcome = CANCELLED if cancelled else INTERNAL_ERROR
            raise
        finally:
            record.ended = True
            record.duration = time.monotonic() - record.began
            self._enqueue(record)

    def _enqueue(self, record: CallRecord) -> None:
        if self._file is None or self._closed:
            return
        try:
            if self._writer is None:
                writer = threading.Thread(target=self._write, name="schemux-audit", daemon=True)
                writer.start()
                self._writer = writer
            self._queue.put_nowait(record)
        except (queue.Full, RuntimeError):  # RuntimeError: no thread can be started now
            self._file.dropped()

    def _write(self) -> None:
        assert self._file is not None
        while True:
            batch = [self._queue.get()]
            with contextlib.suppress(queue.Empty):
                while len(batch) < QUEUE_RECORDS:
                    batch.append(self._queue.get_nowait())
            records = [record for record in batch if record is not None]
            try:
                redact = self.settings.redact
                self._file.append([record.line(self.host, self._pid, redact) for record in records])
            except Exception:  # a bug here must not end the writer: later calls are recorded
                logger.exception("the audit log lost %d calls", len(records))
            for record in records:  # a task the call started may hold it: not its arguments
                record.arguments = {}
            if len(records) < len(batch):
                return
            # the next calls' records gather meanwhile: one wake-up and one write a batch,
            # not one a call, however many calls there are
            self._closing.wait(BATCH_SECONDS)

    async def close(self) -> None:
        """Write what is queued (for at most ``CLOSE_SECONDS``); later calls are not
        recorded. Shielded: it runs on every exit path, cancelled or not."""
        if self._closed:
            return
        self._closed = True
        self._closing.set()
        writer = self._writer
        if writer is None:
            return
        with anyio.CancelScope(shield=True):
            with contextlib.suppress(queue.Full):  # a writer stuck in a write: let it be
                await anyio.to_thread.run_sync(
                    partial(self._queue.put, None, timeout=CLOSE_SECONDS)
                )
            await anyio.to_thread.run_sync(partial(writer.join, CLOSE_SECONDS))
        if writer.is_alive():
            logger.warning("the audit log was not written out within %g s", CLOSE_SECONDS)


class AuditFile:
    """The file's side, used by the writer thread alone: open (0600), lock, rotate,
    append; failures are one warning, and a ``gap`` line once writing works again."""

    def __init__(self, path: Path, settings: AuditSettings) -> None:
        self.path = path
        self.max_bytes = settings.max_bytes
        self._fd: int | None = None
        self._directory_fd: int | None = None
        self._lost = 0
        self._lost_lock = threading.Lock()
        self._failing = False

    def dropped(self) -> None:
        """A record was dropped before reaching the file (the queue was full)."""
        with self._lost_lock:
            self._lost += 1

    def append(self, lines: list[bytes]) -> None:
        with self._lost_lock:
            lost, self._lost = self._lost, 0
        data = b"".join(lines)
        if lost:
            gap = {"time": timestamp(time.time()), "gap": lost, "pid": os.getpid()}
            data = (json.dumps(gap) + "\n").encode("ascii") + data
        try:
            self._locked_append(data)
        except OSError as error:
            with self._lost_lock:
                self._lost += lost + len(lines)
            self._close_files()
            if not self._failing:
                self._failing = True
                logger.warning(
                    "the audit log %s cannot be written (%s); tool calls go on unrecorded "
                    "until it can",
                    self.path,
                    error.strerror or error,
                )
            return
        if self._failing:
            self._failing = False
            logger.warning("the audit log %s is written again (%d calls lost)", self.path, lost)

    def _locked_append(self, data: bytes) -> None:
        if self._directory_fd is None:
            self._directory_fd = _open_directory(self.path.parent)
        fcntl.flock(self._directory_fd, fcntl.LOCK_EX)
        try:
            fd = self._current_file()
            size = os.fstat(fd).st_size  # a device (/dev/full) has none: never rotated
            if size and size + len(data) > self.max_bytes:
                self._rotate()
                fd = self._current_file()
                size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                data = b"\n" + data  # a line cut short before (a crash): ours begin a line
            _append_whole(fd, data, size)
        finally:
            fcntl.flock(self._directory_fd, fcntl.LOCK_UN)

    def _current_file(self) -> int:
        """The open file at ``path``: opened again when another process rotated it (or
        a person moved it) since."""
        if self._fd is not None:
            try:
                named = os.stat(self.path)
            except FileNotFoundError:
                named = None
            held = os.fstat(self._fd)
            if named is not None and (named.st_dev, named.st_ino) == (held.st_dev, held.st_ino):
                return self._fd
            os.close(self._fd)
            self._fd = None
        # read too: the last byte says whether the file ends a line
        self._fd = open_private(self.path, os.O_RDWR | os.O_APPEND)
        return self._fd

    def _rotate(self) -> None:
        for number in range(BACKUPS, 0, -1):
            older = self.path if number == 1 else rotated(self.path, number - 1)
            with contextlib.suppress(FileNotFoundError):
                os.replace(older, rotated(self.path, number))

    def _close_files(self) -> None:
        for fd in (self._fd, self._directory_fd):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._fd = self._directory_fd = None


def _append_whole(fd: int, data: bytes, size: int) -> None:
    """Append ``data`` (whole lines) to the file ``size`` bytes long, all of it or none:
    a write that fails part way (a disk that fills up, a file size limit) is taken back
    to ``size``, so that no part of a line is left for the next write to be glued to."""
    view = memoryview(data)
    try:
        while view:
            view = view[os.write(fd, view) :]
    except OSError:
        if len(view) < len(data):
            with contextlib.suppress(OSError):  # else the next write begins a line itself
                os.ftruncate(fd, size)
        raise


def check_file(settings: AuditSettings) -> None:
    """At start: ConfigError when the audit log is a file schemux must not append to
    (``system.private_files.not_private``: another user's, a symbolic link)."""
    problem = None if settings.path is None else check_private(settings.path)
    if problem is not None:
        raise ConfigError(
            f"the audit log {settings.path}: {problem}: {ADVICE} (--audit-log, {ENV_AUDIT_LOG})"
        )


def rotated(path: Path, number: int) -> Path:
    """The ``number``-th newest old file: ``audit.jsonl.1`` is the one before ``path``."""
    return path.with_name(f"{path.name}.{number}")


def _open_directory(directory: Path) -> int:
    """The directory's descriptor (to lock), made 0700 with its missing parents."""
    make_directories(directory)
    return os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
