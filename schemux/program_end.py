"""How a program's end is told: the gate's end marker, read back and verified."""

from __future__ import annotations

import hmac
import signal as signals
from dataclasses import dataclass
from typing import Literal

from schemux.program_gate import TABLE_BYTES, TOKEN_BYTES, token_index

SIGNAL_NAMES = {int(number): number.name for number in signals.Signals}
MARKER_PREFIX = b"\x1b]7777;schemux-end;"
MAX_MARKER = 128  # an unterminated "marker" longer than this is plain output
Report = tuple[int, str]  # the exit status (128+N for signal N), and "x" or "n" (not run)
Outcome = Literal["completed", "not_started", "expired", "stopped", "gone", "timed_out"]


@dataclass(frozen=True)
class Ending:
    outcome: Outcome
    exit_status: int | None
    signal: str | None


def ending_from_marker(status: int, flag: str) -> Ending:
    """The contracts' reading of the gate's report: a program that could not be run is
    not_started; a status above 128 is a signal (so an exit 130 reads as SIGINT)."""
    if flag == "n":
        return Ending("not_started", status, None)
    if status > 128 and status - 128 in SIGNAL_NAMES:
        return Ending("completed", None, SIGNAL_NAMES[status - 128])
    return Ending("completed", status, None)


def report_token(table: bytes, status: int, flag: str) -> bytes:
    """The token a gate holding ``table`` marks this report with (both gates take it from
    the same place): a copy of one genuine marker (a descendant can read the copy's FIFO)
    tells nothing of another report's token."""
    at = token_index(status, flag) * TOKEN_BYTES
    return table[at : at + TOKEN_BYTES].hex().encode()


def verified(body: bytes, table: bytes) -> Report | None:
    """The report in a marker's ``STATUS;FLAG;TOKEN``, if the gate holding ``table`` made
    it (one verifier for both gates)."""
    fields = body.split(b";")
    if len(fields) != 3 or len(table) != TABLE_BYTES:
        return None
    status, flag, token = fields
    if not status.isdigit() or len(status) > 3 or int(status) > 255 or flag not in (b"x", b"n"):
        return None
    if not hmac.compare_digest(token, report_token(table, int(status), flag.decode())):
        return None
    return int(status), flag.decode()


def scan(data: bytes, table: bytes) -> tuple[bytes, bytes, Report | None]:
    """Split copied bytes into output to pass on now, bytes to hold back (the start of what
    may be a marker, to be completed by the next read), and the gate's report when a
    genuine marker (by ``table``) is in ``data`` (nothing the gate prints follows it).
    Anything that only looks like a marker is output (the text filter drops it as an OSC
    sequence)."""
    start = 0
    while True:
        at = data.find(MARKER_PREFIX, start)
        if at < 0:
            held = max(start, marker_start(data, MARKER_PREFIX))
            return data[:held], data[held:], None
        end = data.find(b"\x07", at)
        if end < 0:
            if len(data) - at > MAX_MARKER:
                start = at + 1
                continue
            return data[:at], data[at:], None
        report = verified(data[at + len(MARKER_PREFIX) : end], table)
        if report is not None:
            return data[:at], b"", report
        start = at + 1  # a look-alike may hold the genuine marker: look inside it


def marker_start(data: bytes, marker: bytes) -> int:
    """Where a marker that may be cut off at the end of ``data`` would begin; ``len(data)``
    when the end cannot be the start of one. Everything before that goes out at once, so
    a line reaches readers as soon as it is written."""
    start = data.rfind(b"\x1b", max(0, len(data) - len(marker) - 24))
    if start < 0:
        return len(data)
    tail = data[start:]
    if marker.startswith(tail) or (tail.startswith(marker) and b"\x07" not in tail):
        return start
    return len(data)
