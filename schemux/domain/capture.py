"""Reading a pane's screen by reference: snapshots, delta cursors and exact deltas.

Each read takes two tmux round trips. The first checks the reference (the generation
must be the live server's for that pane id, see ``schemux.tmux.references``) and that no
``after-capture-pane`` hook is set anywhere it would run (a hook would run on every
capture); only then does the second one capture, in one command line, so tmux runs it
whole without taking pane output in between: the server's identity again (a server
restarted in between cannot hand over another pane's rows), the pane's state, and the
rows (``schemux.text.screen``).

A delta cursor (the contract's ``cursor`` and ``next_cursor``: a random token, not a
position on the screen) names a tracked capture; a read with it returns the splice from
that capture's rows to the new ones. They live in this process (``ScreenTracker``), at
most ``MAX_DELTA_CURSORS`` of them, the oldest forgotten first; a delta cursor stays
usable until then, so a read can be retried with the same one.
"""

from __future__ import annotations

import re
import secrets
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import NoReturn

from schemux.config import TrackingSetting
from schemux.errors import ConnectionLost, Refused, TmuxCommandError, TrackingUnavailable
from schemux.names import OWNED_SESSION
from schemux.panes.identity import ProcessHandle, ProcessIdentity, open_process
from schemux.text.screen import EncodedRows, Splice, encode_rows, limit_rows
from schemux.text.screen import splice_between as splice_rows
from schemux.tmux.command import THEN
from schemux.tmux.format import option, parse_row, row_format, tmux_row
from schemux.tmux.owned_session import CONTROL_MARK, is_control_window
from schemux.tmux.references import IdentityRow, ServerIdentity, server_identity
from schemux.tmux.server import TmuxServer
from schemux.versions import parse_version

MAX_DELTA_CURSORS = 128
HOOK = "after-capture-pane"
_HOOK_SET = re.compile(rf"^{HOOK}\[\d+\]")


@tmux_row
class _AtCapture(IdentityRow):
    pane_dead: bool
    pane_pid: int | None


@tmux_row
class _Check(_AtCapture):
    version: str
    session_name: str
    control: bool = option(CONTROL_MARK)


@dataclass(frozen=True)
class CaptureLimits:
    """How much one capture may read: the contract's ``scope`` (``Scope``), as the call
    gave it (its defaults are the request model's, from ``schemas/model_defaults.json``)."""

    max_lines: int
    max_bytes: int
    history_lines: int


@dataclass(frozen=True)
class PaneReference:
    pane_id: str
    generation: str


@dataclass(frozen=True)
class Capture:
    capture_id: str
    rows: EncodedRows
    truncated: bool
    started: float
    finished: float


@dataclass(frozen=True)
class Tracked:
    """What a delta cursor stands for: the capture it was issued with, and the pane's
    process."""

    reference: PaneReference
    scope: CaptureLimits
    capture: Capture
    process: ProcessHandle | None


@dataclass(frozen=True)
class Delta:
    base_capture_id: str
    reset: bool
    splice: Splice
    next_cursor: str


@dataclass(frozen=True)
class Read:
    """One read's outcome: the capture, and for tracked reads the process and the next
    delta cursor (for a delta read, in ``delta``)."""

    reference: PaneReference
    scope: CaptureLimits
    capture: Capture
    process_generation: str | None
    next_cursor: str | None
    delta: Delta | None


class ScreenTracker:
    """The delta cursors and the process identity backend of one schemux process."""

    def __init__(self, tracking: TrackingSetting = "auto") -> None:
        self._delta_cursors: OrderedDict[str, Tracked] = OrderedDict()
        self.identity = ProcessIdentity(tracking)

    def remember(self, tracked: Tracked) -> str:
        cursor = secrets.token_hex(16)
        self._delta_cursors[cursor] = tracked
        while len(self._delta_cursors) > MAX_DELTA_CURSORS:
            self._delta_cursors.popitem(last=False)
        return cursor

    def recall(self, cursor: str, reference: PaneReference) -> Tracked:
        tracked = self._delta_cursors.get(cursor)
        if tracked is None:
            raise Refused(
                "cursor_unknown",
                f"cursor {cursor} is not one this schemux server issued, or it was "
                f"forgotten (only the newest {MAX_DELTA_CURSORS} are kept, and none survives a "
                "restart of schemux); take a new snapshot with track: true",
                "not_sent",
            )
        if tracked.reference != reference:
            raise Refused(
                "cursor_target_mismatch",
                f"cursor {cursor} tracks pane {tracked.reference.pane_id} (generation "
                f"{tracked.reference.generation}), not pane {reference.pane_id} (generation "
                f"{reference.generation}); pass the target it was issued for",
                "not_sent",
            )
        self._delta_cursors.move_to_end(cursor)
        return tracked

    def close(self) -> None:
        self._delta_cursors.clear()
        self.identity.close()


@dataclass(frozen=True)
class _Pane:
    """The pane as the check found it."""

    identity: ServerIdentity
    version: tuple[int, int]
    dead: bool
    pid: int | None


async def snapshot(
    server: TmuxServer,
    tracker: ScreenTracker,
    reference: PaneReference,
    scope: CaptureLimits,
    track: bool,
) -> Read:
    pane = await _check(server, reference)
    process = None
    if track:
        if pane.dead:
            raise Refused(
                "pane_dead",
                f"pane {reference.pane_id} is dead (its program ended): there is no process "
                "to track; read it without track, or respawn it (tmux respawn-pane)",
            )
        process = await _process_before(server, tracker, pane, None)
    capture, dead, pid = await _capture(server, reference, pane, scope)
    next_cursor = None
    if track:
        process = _process_after(process, dead, pid)
        next_cursor = tracker.remember(Tracked(reference, scope, capture, process))
    generation = process.generation if process is not None else None
    return Read(reference, scope, capture, generation, next_cursor, None)


async def read_delta(
    server: TmuxServer, tracker: ScreenTracker, reference: PaneReference, cursor: str
) -> Read:
    base = tracker.recall(cursor, reference)
    pane = await _check(server, reference)
    process = None if pane.dead else await _process_before(server, tracker, pane, base.process)
    capture, dead, pid = await _capture(server, reference, pane, base.scope)
    process = _process_after(process, dead, pid)
    old, new = base.capture.rows, capture.rows
    replaced = process is not None and (
        base.process is None or process.generation != base.process.generation
    )
    splice = splice_rows(old.rows, new.rows)
    shared = len(old.rows) - splice.delete
    reset = replaced or old.encoding != new.encoding or (bool(old.rows) and shared == 0)
    if reset:
        splice = Splice(0, len(old.rows), list(new.rows))
    next_cursor = tracker.remember(Tracked(reference, base.scope, capture, process))
    delta = Delta(base.capture.capture_id, reset, splice, next_cursor)
    generation = process.generation if process is not None else None
    return Read(reference, base.scope, capture, generation, None, delta)


async def _check(server: TmuxServer, reference: PaneReference) -> _Pane:
    """The first round trip: the reference is live and no capture hook is set."""
    target = reference.pane_id
    check = (
        "display-message", "-p", "-t", target, row_format(_Check), THEN,
        "show-hooks", "-g", HOOK, THEN,
        "show-hooks", "-t", target, HOOK, THEN,
        "show-hooks", "-w", "-t", target, HOOK, THEN,
        "show-hooks", "-p", "-t", target, HOOK,
    )  # fmt: skip
    try:
        try:
            lines = await server.run(*check)
        except ConnectionLost:
            # the connection of a server that has exited since the last call; the check
            # changes nothing, so it goes again, to whichever server runs there now
            lines = await server.run(*check)
    except TmuxCommandError as error:
        if not error.target_gone:
            raise
        await _gone(server, reference)
    row = parse_row(_Check, lines[0])
    identity = ServerIdentity.of(row)
    _check_generation(identity, reference)
    if is_control_window(row.session_name, row.control):
        raise Refused(
            "reserved_pane",
            f"pane {target} belongs to session {OWNED_SESSION!r}, schemux's own; it is never "
            "captured",
        )
    hooks = [line for line in lines[1:] if _HOOK_SET.match(line)]
    if hooks:
        raise Refused(
            "capture_hook_set",
            f"an {HOOK} hook is set ({'; '.join(hooks)}): it would run on every capture, so "
            f"nothing was captured; remove it (tmux set-hook -gu {HOOK}, or -u with the "
            "session, -w or -p) and retry",
        )
    return _Pane(identity, parse_version(row.version), row.pane_dead, row.pane_pid)


async def _gone(server: TmuxServer, reference: PaneReference) -> NoReturn:
    """The pane does not exist: raise why, from the server's identity."""
    _check_generation(await server_identity(server), reference)
    raise Refused(
        "pane_closed",
        f"pane {reference.pane_id} was closed; find another pane with tmux_snapshot",
    )


def _check_generation(identity: ServerIdentity, reference: PaneReference) -> None:
    if identity.generation(reference.pane_id) != reference.generation:
        raise Refused(
            "stale_reference",
            f"the reference to pane {reference.pane_id} (generation {reference.generation}) "
            f"is outside this live binding: it was not taken from the tmux server now "
            f"running on {identity.socket_path} (pid {identity.pid}), which restarted since or "
            "is another one, so its pane ids name other panes; take a new reference from "
            "tmux_snapshot",
        )


async def _process_before(
    server: TmuxServer, tracker: ScreenTracker, pane: _Pane, known: ProcessHandle | None
) -> ProcessHandle | None:
    """The pane's process as the check saw it, held before the capture (None if it
    ended in between)."""
    host = server.address.host
    if not host.pids_here:
        # pids and pidfds are this machine's: none can hold a process on another host
        raise TrackingUnavailable(
            f"the tmux server is on {host.describe()}, reached over {host.kind}: schemux "
            "holds processes by pidfd, which only works on this machine; read without track"
        )
    await tracker.identity.check_server(pane.identity, lambda: server_identity(server))
    if known is not None and known.alive() and known.pid == pane.pid:
        return known
    if pane.pid is None:
        return None
    try:
        return open_process(pane.pid)
    except ProcessLookupError:
        return None


def _process_after(held: ProcessHandle | None, dead: bool, pid: int | None) -> ProcessHandle | None:
    """The pane's process at the capture: the one held when it still runs there; a pane
    respawned between the check and the capture has its new process opened now."""
    if dead or pid is None:
        return None
    if held is not None and held.alive() and held.pid == pid:
        return held
    try:
        return open_process(pid)
    except ProcessLookupError:
        return None


async def _capture(
    server: TmuxServer, reference: PaneReference, pane: _Pane, scope: CaptureLimits
) -> tuple[Capture, bool, int | None]:
    """The second round trip: the rows, and whether the pane was dead and its pid then."""
    target = reference.pane_id
    start = "0" if scope.history_lines == 0 else str(-scope.history_lines)
    # tmux 3.4 pads -N rows with the empty cells up to the width unless -T is given
    only_used = ("-T",) if pane.version >= (3, 4) else ()
    started = time.monotonic()
    try:
        lines = await server.run(
            "display-message", "-p", "-t", target, row_format(_AtCapture), THEN,
            "capture-pane", "-p", "-N", *only_used, "-t", target, "-S", start,
        )  # fmt: skip
    except TmuxCommandError as error:
        if not error.target_gone:
            raise
        await _gone(server, reference)
    finished = time.monotonic()
    row = parse_row(_AtCapture, lines[0])
    _check_generation(ServerIdentity.of(row), reference)
    rows = [line + "\n" for line in lines[1:]]
    kept, truncated = limit_rows(rows, scope.max_lines, scope.max_bytes)
    capture = Capture(secrets.token_hex(8), encode_rows(kept), truncated, started, finished)
    return capture, row.pane_dead, row.pane_pid
