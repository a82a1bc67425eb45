"""``schemux audit``: the audit log (``schemux.audit.log``) as a person reads it, one line per
call: local time, tool, target, outcome, duration, what it ran, cut short, and the id of
its recording when it has one (``[replay ID]``: ``schemux replay ID`` plays it). Old files
are read first; ``--since`` keeps the calls from a time on, ``--follow`` prints calls as
they are written, across rotation. Whatever a call sent is shown with its control
characters escaped, so no argument can write to the reader's terminal."""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from types import MappingProxyType
from typing import Any, TextIO

from schemux.audit.log import BACKUPS, rotated
from schemux.errors import ConfigError

COMMAND_CHARACTERS = 72  # of what a call ran, on its line
FOLLOW_SECONDS = 0.2  # between looks at the file when following it
_DURATION = re.compile(r"(\d+)([smhdw])")
_UNITS = MappingProxyType({"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800})
# the fields showing what a call ran, per tool family, in this order
_RAN = ("command", "keys", "argv", "patterns", "channel")


def parse_since(text: str, now: datetime | None = None) -> datetime:
    """``10m``, ``2h``, ``1d``, ``1h30m`` ago; ``today``, ``yesterday`` (local
    midnight); or an ISO 8601 time or date (local time when it names no zone)."""
    now = now or datetime.now().astimezone()
    spoken = text.strip().lower()
    if spoken in ("today", "yesterday"):
        midnight = now.replace(hour=0, minute=0, second=0, microsecond=0)
        return midnight - timedelta(days=1) if spoken == "yesterday" else midnight
    if spoken and _DURATION.sub("", spoken) == "":
        seconds = sum(int(n) * _UNITS[unit] for n, unit in _DURATION.findall(spoken))
        return now - timedelta(seconds=seconds)
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ConfigError(
            f"--since {text[:40]!r}: give a duration (10m, 2h, 1d), today, yesterday, or "
            "an ISO time (2026-12-01T09:30)"
        ) from None
    return moment if moment.tzinfo is not None else moment.astimezone()


def visible(text: str) -> str:
    """``text`` with every control character (and DEL, and C1) written as an escape."""
    return "".join(char if char.isprintable() or char == " " else repr(char)[1:-1] for char in text)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _shown(value: Any) -> str:
    """An argument as the record keeps it: text, a list of texts (argv), or a redacted
    or cut text (``{"length", "sha256"}``, with ``head`` when cut)."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and "sha256" in value:
        if "head" in value:
            return f"{value['head']}…({value.get('length')} characters)"
        return f"[redacted: {value.get('length')} characters, sha256 {str(value['sha256'])[:12]}]"
    if isinstance(value, list):
        return shlex.join(_shown(item) for item in value)
    return json.dumps(value, ensure_ascii=False)


def ran(record: dict[str, Any]) -> str:
    """What the call ran or typed, on one line, cut short."""
    arguments = record.get("arguments")
    if not isinstance(arguments, dict):
        return ""
    for name in _RAN:
        if name in arguments:
            return _cut(visible(_shown(arguments[name])), COMMAND_CHARACTERS)
    operations = arguments.get("operations")  # send_keys_batch: each operation's keys
    if isinstance(operations, list):
        typed = [_shown(o.get("keys")) for o in operations if isinstance(o, dict) and "keys" in o]
        return _cut(visible(" | ".join(typed)), COMMAND_CHARACTERS)
    return ""


def target(record: dict[str, Any]) -> str:
    """``%3``, ``p1a2b…``, with the host when not local and the tmux server when the
    call named one."""
    parts = [str(record[key]) for key in ("program", "pane") if record.get(key)]
    shown = " ".join(parts) or "-"
    arguments = record.get("arguments")
    if isinstance(arguments, dict) and isinstance(arguments.get("socket_name"), str):
        shown += f" -L {arguments['socket_name']}"
    host = record.get("host")
    if host and host != "local":
        shown = f"{host}: {shown}"
    return visible(_cut(shown, 60))


def _when(record: dict[str, Any]) -> datetime | None:
    try:
        return datetime.fromisoformat(str(record["time"])).astimezone()
    except (KeyError, ValueError):
        return None


def line(record: dict[str, Any]) -> str:
    """One call (or one gap) as the person reads it: the whole line escaped, whatever
    field a record holds (the fields are escaped before they are padded or cut, too, so
    that the columns count what is shown)."""
    return visible(_columns(record))


def _columns(record: dict[str, Any]) -> str:
    when = _when(record)
    shown = when.strftime("%Y-%m-%d %H:%M:%S") if when is not None else "?"
    if "gap" in record:
        return f"{shown}  -- {record['gap']} calls not recorded: the audit log was unwritable"
    tool = visible(str(record.get("tool", "?")))
    duration = record.get("duration_ms")
    took = "?"
    if isinstance(duration, int | float):
        took = f"{duration:.0f} ms" if duration < 1000 else f"{duration / 1000:.1f} s"
    outcome = visible(str(record.get("outcome", "?")))
    columns = f"{shown}  {tool:<17} {target(record):<18} {outcome:<17} {took:>7}"
    command = ran(record)
    recording = record.get("recording")
    if isinstance(recording, str) and recording:
        command = f"{command}  [replay {recording}]" if command else f"[replay {recording}]"
    return f"{columns}  {command}" if command else columns


@dataclass
class Reading:
    """Lines of the files read so far, and how many were not records."""

    since: datetime | None
    unreadable: int = 0

    def records(self, lines: Iterator[bytes]) -> Iterator[dict[str, Any]]:
        for raw in lines:
            try:
                record = json.loads(raw)
            except ValueError:
                self.unreadable += 1
                continue
            if not isinstance(record, dict):
                self.unreadable += 1
                continue
            when = _when(record)
            if self.since is not None and (when is None or when < self.since):
                continue
            yield record


def _file_lines(path: Path) -> Iterator[bytes]:
    try:
        with path.open("rb") as opened:
            yield from opened
    except FileNotFoundError:
        return


def print_log(path: Path, since: datetime | None, follow: bool, out: TextIO) -> int:
    """Print the calls of ``path`` and its rotated files (oldest first); with
    ``follow``, go on printing calls as they come, until interrupted."""
    reading = Reading(since)
    files = [rotated(path, number) for number in range(BACKUPS, 0, -1)]
    if not follow and not any(file.exists() for file in [*files, path]):
        print(f"schemux: no audit log at {path} (no call recorded there yet)", file=sys.stderr)
        return 0
    for old in files:
        for record in reading.records(_file_lines(old)):
            print(line(record), file=out, flush=False)
    if not follow:
        for record in reading.records(_file_lines(path)):
            print(line(record), file=out)
        out.flush()
        return _report(reading, path)
    try:
        for raw in follow_lines(path):
            for record in reading.records(iter([raw])):
                print(line(record), file=out, flush=True)
    except KeyboardInterrupt:
        pass
    return _report(reading, path)


def _report(reading: Reading, path: Path) -> int:
    if reading.unreadable:
        print(
            f"schemux: {reading.unreadable} lines of {path} are no audit records (skipped)",
            file=sys.stderr,
        )
    return 0


def follow_lines(path: Path, poll: float = FOLLOW_SECONDS) -> Iterator[bytes]:
    """Every whole line of ``path`` from its start, then each one as it is appended;
    when the file is rotated (or made), the rest of the old one, then the new one's. A
    line not yet whole is read again from its start next time: a writer that could not
    write all of it takes its part back (``audit.log._append_whole``) and writes on there."""
    opened = None
    while True:
        if opened is None:
            try:
                opened = path.open("rb")
            except FileNotFoundError:
                time.sleep(poll)
                continue
        replaced = _replaced(path, opened.fileno())  # before the read: nothing is missed
        *whole, partial = opened.read().split(b"\n")
        opened.seek(-len(partial), os.SEEK_CUR)
        for raw in whole:
            yield raw + b"\n"
        if replaced:
            opened.close()
            opened = None
        elif not whole:
            time.sleep(poll)


def _replaced(path: Path, descriptor: int) -> bool:
    """Whether ``path`` names another file than the one open (rotated), or none."""
    try:
        named = os.stat(path)
    except FileNotFoundError:
        return True
    held = os.fstat(descriptor)
    return (named.st_dev, named.st_ino) != (held.st_dev, held.st_ino)


TAIL_BYTES = 256 * 1024  # of the log's end read when a page opens: its last calls


def timeline_entry(record: dict[str, Any]) -> dict[str, Any]:
    """One call (or gap) as the page's timeline shows it: the fields a line shows, each
    escaped as on the line, and the ids of its recording and program when it has them."""
    when = _when(record)
    entry: dict[str, Any] = {"time": when.isoformat(timespec="seconds") if when else None}
    if "gap" in record:
        entry["gap"] = record["gap"] if isinstance(record["gap"], int) else None
        return entry
    duration = record.get("duration_ms")
    entry.update(
        tool=visible(str(record.get("tool", "?"))),
        target=target(record),
        outcome=visible(str(record.get("outcome", "?"))),
        duration_ms=duration if isinstance(duration, int | float) else None,
        ran=ran(record),
    )
    for name in ("recording", "program"):
        value = record.get(name)
        if isinstance(value, str) and re.fullmatch(r"[A-Za-z0-9_-]{1,64}", value):
            entry[name] = value
    return entry


class LogTail:
    """The records appended to the audit log at ``path`` since the last look: at the
    first, those of its last ``TAIL_BYTES``; after a rotation, the new file's from its
    start. A look at a log whose file, size and time of change are those of the last
    look is one ``stat``: nothing is opened or read. Reads block: run them in a thread."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file: tuple[int, int] | None = None  # (device, inode) of the file read
        self._offset = 0  # where its next whole line begins
        self._looked: tuple[int, int, int, int] | None = None  # the last look's stat
        self.unreadable = 0

    def read(self) -> list[dict[str, Any]]:
        try:
            status = os.stat(self.path)
        except FileNotFoundError:
            return []
        looked = (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns)
        if looked == self._looked:
            return []
        self._looked = looked  # a line appended after this stat changes the next one
        try:
            with self.path.open("rb") as opened:
                held = os.fstat(opened.fileno())
                identity = (held.st_dev, held.st_ino)
                first = self._file is None
                if identity != self._file:
                    self._file = identity
                    self._offset = max(0, held.st_size - TAIL_BYTES) if first else 0
                if held.st_size < self._offset:  # cut short under us: read it again
                    self._offset = 0
                opened.seek(self._offset)
                data = opened.read()
        except FileNotFoundError:
            return []
        skip_partial = first and self._offset > 0
        *whole, _ = data.split(b"\n")
        self._offset += sum(len(raw) + 1 for raw in whole)
        if skip_partial and whole:
            whole = whole[1:]  # the line the tail began in the middle of
        reading = Reading(None)
        records = list(reading.records(iter(whole)))
        self.unreadable += reading.unreadable
        return records
