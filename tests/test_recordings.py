"""Recordings (asciicast v3): the writer and the bounds alone, then programs and the
agent's calls recorded against real tmux through a real MCP client, each recording
checked line by line and replayed through a terminal emulator (pyte) to the screen tmux
shows; --no-record; hostile commands and output kept as data; every way a recording
ends leaves no watcher, link or open file."""

from __future__ import annotations

import dataclasses
import io
import json
import logging
import os
import shlex
import stat
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pyte
import pytest
from mcp import Client
from mcp_types import TextResourceContents

from schemux.audit import recordings
from schemux.audit.recordings import (
    CUT_MARKER,
    FLUSH_BYTES,
    MIME_TYPE,
    Cast,
    Recordings,
    Stored,
    beyond_bounds,
    file_name,
    read_cast,
)
from schemux.audit.replay import find, play
from schemux.config import (
    ENV_NO_RECORD,
    AuditSettings,
    RecordingSettings,
    SettingOptions,
    Settings,
    recording_settings,
)
from schemux.domain import pane_recording, pane_watch
from schemux.domain.pane_recording import output_bytes, screen_drawing
from schemux.errors import ConfigError
from schemux.generated.bindings import BINDINGS
from schemux.names import OWNED_SESSION
from schemux.panes.claims import BUSY_OPTION
from schemux.serving.state import ServingState
from schemux.tmux.control import connection, engine
from schemux.tmux.control.connection import layout_size
from tests.contexts import client_of
from tests.support import new_pane, tmux, until, wait_until, watching_clients

HOSTILE = '$(touch /tmp/schemux-recording-pwned); `id`; "]\n[0, "x", "0"]\n\x1b]0;t\x07'


# ---- the writer and the bounds, with no tmux


def test_cast_is_asciicast_v3_with_monotonic_timing() -> None:
    cast = Cast(
        100, 30, command=HOSTILE, title="t", started=1_800_000_000.5, now=10.0, limit=1 << 20
    )
    cast.output("a\x1b[31mb\r\n", 10.25)
    cast.resize(80, 24, 10.5)
    cast.output("late but earlier clock", 10.4)  # a clock that went back: interval 0
    cast.marker("m1", 11.0)
    cast.exit(3, 12.0)
    header, events = read_cast(cast.take().decode("ascii"))
    assert header == {
        "version": 3,
        "term": {"cols": 100, "rows": 30, "type": "tmux-256color"},
        "timestamp": 1_800_000_000,
        "command": HOSTILE,
        "title": "t",
    }
    assert events == [
        (0.25, "o", "a\x1b[31mb\r\n"),
        (0.25, "r", "80x24"),
        (0.0, "o", "late but earlier clock"),
        (0.5, "m", "m1"),
        (1.0, "x", "3"),
    ]
    assert cast.take() == b""


def test_cast_cut_at_its_limit_keeps_its_exit() -> None:
    cast = Cast(80, 24, command="c", title="t", started=0.0, now=0.0, limit=400)
    for index in range(50):
        cast.output(f"line {index}\r\n", index / 10)
    cast.exit(0, 6.0)
    data = cast.take()
    assert len(data) <= 400 + 80  # the cut marker and the exit past the limit only
    _, events = read_cast(data.decode())
    assert (events[-2][1], events[-2][2]) == ("m", CUT_MARKER)
    assert events[-1][1:] == ("x", "0")
    assert cast.cut


@pytest.mark.parametrize("text", ["", "{}\n", '{"version": 2}\n', '{"version": 3, "term": {}}\n'])
def test_read_cast_refuses_what_is_not_v3(text: str) -> None:
    with pytest.raises(ValueError, match=r"empty|header"):
        read_cast(text)


def test_read_cast_refuses_a_bad_event_and_leaves_out_an_unfinished_line() -> None:
    head = '{"version": 3, "term": {"cols": 2, "rows": 1}}\n'
    with pytest.raises(ValueError, match="line 2"):
        read_cast(head + '[-1, "o", "x"]\n')
    with pytest.raises(ValueError, match="line 2"):
        read_cast(head + '[0, "z", "x"]\n')
    assert read_cast(head + '[0, "o", "x"]\n[0.1, "o"')[1] == [(0.0, "o", "x")]


def test_bounds_remove_the_oldest_by_count_and_size_never_one_being_made() -> None:
    files = [Stored(f"f{index}", modified=index, size=100) for index in range(5)]
    assert beyond_bounds(files, max_files=3, max_bytes=10_000) == ["f0", "f1"]
    assert beyond_bounds(files, max_files=10, max_bytes=250) == ["f0", "f1", "f2"]
    assert beyond_bounds(files, max_files=3, max_bytes=10_000, keep={"f0"}) == ["f1", "f2"]
    assert beyond_bounds(files, max_files=5, max_bytes=500) == []


def test_output_bytes_and_layout_sizes() -> None:
    assert output_bytes("a\\033[1mb\\015\\012\\134") == b"a\x1b[1mb\r\n\\"
    # bytes that are not UTF-8 came through surrogateescape: given back as they were
    assert output_bytes(b"\xff\xc3".decode("utf-8", "surrogateescape")) == b"\xff\xc3"
    layout = "b7c1,160x48,0,0{80x48,0,0,3,79x48,81,0[79x24,81,0,4,79x23,81,25,12]}"
    assert layout_size(layout, "%3") == (80, 48)
    assert layout_size(layout, "%12") == (79, 23)
    assert layout_size(layout, "%1") is None
    assert layout_size("a1b2,80x24,0,0,1", "%1") == (80, 24)


def test_screen_drawing_draws_the_rows_and_puts_the_cursor_back() -> None:
    screen = replayed(
        [
            (0.0, "o", "junk everywhere\r\n" * 3),
            (0.0, "o", screen_drawing(["\x1b[31mab", "", "c"], 1, 2)),
        ],
        cols=10,
        rows=4,
    )
    assert [row.rstrip() for row in screen.display] == ["ab", "", "c", ""]
    assert screen.buffer[0][0].fg == "red"
    assert (screen.cursor.x, screen.cursor.y) == (1, 2)


def test_recording_settings_follow_the_audit_and_turn_off() -> None:
    audit = AuditSettings(Path("/state/schemux/audit.jsonl"))
    assert recording_settings({}, audit).directory == Path("/state/schemux")
    assert recording_settings({}, audit, no_record=True).directory is None
    assert recording_settings({ENV_NO_RECORD: "1"}, audit).directory is None
    assert recording_settings({}, AuditSettings()).directory is None  # --no-audit
    with pytest.raises(ConfigError):
        recording_settings({ENV_NO_RECORD: "maybe"}, audit)
    # an audit log that is a device (--audit-log /dev/null, as the benchmarks give) keeps
    # nothing: no recordings beside it, in /dev (made there before, as root)
    assert recording_settings({}, AuditSettings(Path(os.devnull))).directory is None
    env = {"HOME": "/home/x", ENV_NO_RECORD: "0"}
    assert SettingOptions(no_record=True).settings(env).recording.directory is None
    assert SettingOptions().settings(env).recording.directory == Path(
        "/home/x/.local/state/schemux"
    )


class CountedEntries:
    """``os.scandir`` of a directory, counting the stats of its entries."""

    def __init__(self) -> None:
        self.stats = 0
        self.real = os.scandir

    def __call__(self, path: Any) -> Any:
        counter = self

        class Entry:
            def __init__(self, entry: os.DirEntry[str]) -> None:
                self.name = entry.name
                self._entry = entry

            def stat(self, *, follow_symlinks: bool = True) -> os.stat_result:
                counter.stats += 1
                return self._entry.stat(follow_symlinks=follow_symlinks)

        class Scan:
            def __enter__(self) -> Any:
                self._scan = counter.real(path)
                return [Entry(entry) for entry in self._scan]

            def __exit__(self, *exc: object) -> None:
                self._scan.close()

        return Scan()


@pytest.mark.anyio
async def test_a_prune_after_each_call_stats_only_the_recordings_that_may_have_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A thousand finished recordings were a thousand stats after every call; the
    bounds still hold over what the last scan found (failed before: 81 stats, not 41)."""
    store = Recordings(RecordingSettings(tmp_path, max_bytes=1 << 20, max_files=40))
    old = time.time() - 1000
    for index in range(40):
        path = tmp_path / file_name(f"c{index:012x}")
        path.write_bytes(b"x" * 10)
        os.utime(path, (old + index, old + index))
    counted = CountedEntries()
    monkeypatch.setattr(os, "scandir", counted)
    await store.prune()
    assert counted.stats == 40
    recording = store.begin("c0000000000ff", "s", 80, 24, command="c", title="t")
    assert recording is not None
    recording.output("y" * 10)
    await recording.close(0)  # prunes: the new one as its write left it, one old one removed
    assert counted.stats == 40
    assert len(list(tmp_path.glob("*.cast"))) == 40
    assert not (tmp_path / file_name(f"c{0:012x}")).exists()


@pytest.mark.anyio
async def test_a_prune_after_a_burst_of_calls_stats_none_of_those_this_process_finished(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Recordings this process wrote to their end are as its last write left them: a
    burst of calls (each recording modified a moment before the next prune) stats none
    of them again (failed before: every one of them after every call, 1,230 stats for
    50 calls), and the bounds still hold over them."""
    store = Recordings(RecordingSettings(tmp_path, max_bytes=1 << 20, max_files=40))
    counted = CountedEntries()
    monkeypatch.setattr(os, "scandir", counted)
    for index in range(50):
        recording = store.begin(f"c{index:012x}", "s", 80, 24, command="c", title="t")
        assert recording is not None
        recording.output("y" * index)
        await recording.close(0)
    assert counted.stats == 0
    kept = sorted(path.name for path in tmp_path.glob("*.cast"))
    assert kept == [file_name(f"c{index:012x}") for index in range(10, 50)]


class CountedScans(CountedEntries):
    """``os.scandir`` counting the scans too."""

    def __init__(self) -> None:
        super().__init__()
        self.scans = 0

    def __call__(self, path: Any) -> Any:
        self.scans += 1
        return super().__call__(path)


def old_recordings(directory: Path, count: int) -> None:
    """``count`` finished recordings of 10 bytes, oldest first by name, long settled."""
    old = time.time() - 1000
    for index in range(count):
        path = directory / file_name(f"c{index:012x}")
        path.write_bytes(b"x" * 10)
        os.utime(path, (old + index, old + index))


@pytest.mark.anyio
async def test_between_two_scans_a_prune_at_the_bounds_removes_the_oldest_without_a_scan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At the bounds every call's recording removes the oldest: from what the last scan
    found, not from a scan of 1,000 files after every call (failed before: 21 scans)."""
    store = Recordings(RecordingSettings(tmp_path, max_bytes=1 << 20, max_files=40))
    old_recordings(tmp_path, 40)
    counted = CountedScans()
    monkeypatch.setattr(os, "scandir", counted)
    await store.prune()
    for index in range(20):
        recording = store.begin(f"d{index:012x}", "s", 80, 24, command="c", title="t")
        assert recording is not None
        recording.output("y")
        await recording.close(0)
    assert counted.scans == 1
    kept = sorted(path.name for path in tmp_path.glob("*.cast"))
    assert kept == sorted(
        [file_name(f"c{index:012x}") for index in range(20, 40)]
        + [file_name(f"d{index:012x}") for index in range(20)]
    )


@pytest.mark.anyio
async def test_what_another_process_added_is_pruned_at_the_next_scan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Recordings that appeared since the last scan count from the next one, at most
    ``RESCAN_SECONDS`` later; the bounds then hold over them too, oldest first."""
    store = Recordings(RecordingSettings(tmp_path, max_bytes=1 << 20, max_files=10))
    await store.prune()
    old_recordings(tmp_path, 15)  # another process's, meanwhile
    await store.prune()
    assert len(list(tmp_path.glob("*.cast"))) == 15  # not scanned yet
    monkeypatch.setattr(recordings, "RESCAN_SECONDS", 0.0)
    await store.prune()
    kept = sorted(path.name for path in tmp_path.glob("*.cast"))
    assert kept == [file_name(f"c{index:012x}") for index in range(5, 15)]


@pytest.mark.anyio
async def test_recordings_on_disk_are_private_bounded_and_hold_no_file(tmp_path: Path) -> None:
    store = Recordings(RecordingSettings(tmp_path, max_bytes=1 << 20, max_files=2))
    made = []
    for index in range(3):
        recording = store.begin(f"c00000000000{index}", "s", 80, 24, command="c", title="t")
        assert recording is not None
        recording.output("x" * 100)
        await recording.flush()
        assert stat.S_IMODE(os.stat(recording.path).st_mode) == 0o600
        assert not open_files(recording.path)  # a write opens and closes the file
        os.utime(recording.path, (index, index))  # their order, whatever the clock's grain
        made.append(recording)
    # three exist while all are being made: none is removed under its writer
    assert len(list(tmp_path.glob("*.cast"))) == 3
    for recording in made:
        await recording.close(0)
    assert sorted(path.name for path in tmp_path.iterdir()) == [
        file_name("c000000000001"),
        file_name("c000000000002"),
    ]
    assert store.made_for("c000000000002", "s") is not None
    assert store.made_for("c000000000002", "another session") is None
    assert store.made("s") == ["c000000000001", "c000000000002"]
    _, events = read_cast(made[2].path.read_text())
    assert events[-1][1:] == ("x", "0")
    made[2].output("after its close")  # closed: nothing more
    await made[2].flush()
    assert read_cast(made[2].path.read_text())[1] == events


@pytest.mark.anyio
async def test_a_recording_refuses_a_file_planted_at_its_name(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = Recordings(RecordingSettings(tmp_path))
    target = tmp_path / "elsewhere"
    target.write_text("")
    (tmp_path / file_name("c000000000009")).symlink_to(target)
    recording = store.begin("c000000000009", None, 80, 24, command="c", title="t")
    assert recording is not None
    recording.output("secret")
    with caplog.at_level(logging.WARNING, logger="schemux"):
        await recording.close()
    assert target.read_text() == ""
    assert "cannot be written" in caplog.text


@pytest.mark.anyio
async def test_a_full_disk_is_one_warning_then_a_count(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Every recording fails at once when the disk is full (the soak logged 27 lines in
    its 20 s): the first says so, the rest are counted when the store closes."""
    store = Recordings(RecordingSettings(tmp_path))
    with caplog.at_level(logging.WARNING, logger="schemux"):
        for index in range(5):
            recording_id = f"c00000000001{index}"
            (tmp_path / file_name(recording_id)).symlink_to(tmp_path / "elsewhere")
            recording = store.begin(recording_id, None, 80, 24, command="c", title="t")
            assert recording is not None
            recording.output("x")
            await recording.close()
        store.close()
    lines = [record.getMessage() for record in caplog.records]
    assert len(lines) == 2, lines
    assert lines[0].startswith(f"recordings in {tmp_path} cannot be written")
    assert lines[1].endswith("(4 more times within 10 s)")


def test_replay_plays_in_time_faster_and_with_idle_cut(tmp_path: Path) -> None:
    path = tmp_path / file_name("p0123456789ab")
    cast = Cast(80, 24, command="c", title="t", started=0.0, now=0.0, limit=1 << 20)
    cast.output("one ", 1.0)
    cast.marker("m", 1.5)
    cast.output("two", 11.5)
    cast.exit(0, 12.0)
    path.write_bytes(cast.take())
    waits: list[float] = []
    out = io.StringIO()
    play(path, out, sleep=waits.append)
    assert (out.getvalue(), waits) == ("one two", [1.0, 0.5, 10.0, 0.5])
    waits.clear()
    play(path, io.StringIO(), speed=2, idle_limit=2, sleep=waits.append)
    assert waits == [0.5, 0.25, 1.0, 0.25]
    assert find("p0123456789ab", tmp_path) == path
    assert find("tmux://local/program/p0123456789ab/recording", tmp_path) == path
    assert find(str(path), Path("/nonexistent")) == path
    with pytest.raises(ConfigError, match="no recording c0123456789ab"):
        find("c0123456789ab", tmp_path)
    with pytest.raises(ConfigError, match="no recording"):
        find("../../etc/passwd;", tmp_path)
    (tmp_path / "bad.cast").write_text("not json\n")
    with pytest.raises(ConfigError, match="not an asciicast v3"):
        play(tmp_path / "bad.cast", io.StringIO())


# ---- helpers


def replayed(events: list[tuple[float, str, str]], cols: int, rows: int) -> pyte.Screen:
    """The screen a terminal of ``cols`` x ``rows`` shows after the events' output and
    resizes."""
    screen = pyte.Screen(cols, rows)
    stream = pyte.Stream(screen)
    for _, code, data in events:
        if code == "o":
            stream.feed(data)
        elif code == "r":
            width, height = (int(part) for part in data.split("x"))
            screen.resize(height, width)
    return screen


def checked(path: Path) -> tuple[dict[str, Any], list[tuple[float, str, str]]]:
    """The recording at ``path``, every line checked: a v3 header with a size, the time
    and a command; events with intervals (so times that never go back), known codes."""
    text = path.read_text()
    assert text.endswith("\n")
    header, events = read_cast(text)
    assert isinstance(header["timestamp"], int)
    assert abs(header["timestamp"] - time.time()) < 600
    assert isinstance(header["command"], str)
    assert all(interval >= 0 for interval, _, _ in events)
    return header, events


def open_files(path: Path) -> list[str]:
    """This process's descriptors open on ``path``."""
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") == str(path):
                found.append(fd)
        except OSError:
            continue
    return found


def tmux_screen(socket: str, pane_id: str) -> list[str]:
    return tmux(socket, "capture-pane", "-p", "-t", pane_id).split("\n")[:-1]


def audit_records(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


@asynccontextmanager
async def recorded(
    socket: str, directory: Path, **recording: Any
) -> AsyncIterator[tuple[Client, ServingState]]:
    """schemux in this process on ``socket``, auditing and recording into ``directory``
    (closed, as on every exit path, when this ends)."""
    settings = Settings(
        socket_name=socket,
        audit=AuditSettings(directory / "audit.jsonl"),
        recording=RecordingSettings(directory, **recording),
    )
    context = ServingState(settings)
    try:
        async with client_of(context, BINDINGS) as client:
            yield client, context
    finally:
        await context.close()


async def read_to_end(client: Client, program_id: str) -> None:
    """Read the program's output until it ended."""
    cursor = 0
    for _ in range(1000):
        read = await client.call_tool(
            "read_program", {"programId": program_id, "cursor": cursor, "timeoutMs": 20_000}
        )
        page = read.structured_content
        assert page is not None, read.content
        if page["ended"]:
            return
        cursor = page["cursor"]
    raise AssertionError(f"{program_id} did not end")


def links(socket: str) -> list[str]:
    options = tmux(socket, "show-options", "-s", check=False)
    return [line for line in options.splitlines() if line.startswith("@schemux-link")]


# ---- against real tmux


@pytest.mark.anyio
async def test_a_run_command_is_recorded_linked_and_replays_to_the_pane(
    tmux_socket: str, tmp_path: Path
) -> None:
    pane = new_pane(tmux_socket, width=90, height=20)
    tmux(tmux_socket, "send-keys", "-t", pane.pane_id, "-l", "echo before-the-call\r")
    wait_until(lambda: "before-the-call" in "\n".join(tmux_screen(tmux_socket, pane.pane_id)[1:]))
    command = "printf '\\033[31mred\\033[0m \\343\\201\\202wide\\nend-of-output\\n'"
    async with recorded(tmux_socket, tmp_path) as (client, _):
        result = await client.call_tool(
            "run_command", {"command": command, "pane_id": pane.pane_id}
        )
        assert not result.is_error
        shown = tmux_screen(tmux_socket, pane.pane_id)
    records = audit_records(tmp_path / "audit.jsonl")
    recording_id = records[-1]["recording"]
    header, events = checked(tmp_path / file_name(recording_id))
    assert header["term"] == {"cols": 90, "rows": 20, "type": "tmux-256color"}
    assert header["command"] == command
    screen = replayed(events, 90, 20)
    mine = [row.rstrip() for row in screen.display]
    # what the pane showed before the call (the first event draws it) and the command's
    # output are where tmux shows them; the prompt after may come after the call ended
    end = next(index for index, row in enumerate(shown) if row == "end-of-output")
    assert mine[: end + 1] == [row.rstrip() for row in shown[: end + 1]]
    assert any("before-the-call" in row for row in mine[:end])
    red = next(row for row in range(end) if mine[row].startswith("red"))
    assert screen.buffer[red][0].fg == "red"
    assert mine[red] == "red あwide"  # a wide character takes two cells: one char in pyte
    assert sum(code == "o" for _, code, _ in events) > 1
    assert watching_clients(tmux_socket) == 0
    assert not links(tmux_socket)


@pytest.mark.anyio
async def test_a_program_is_recorded_and_replays_to_its_last_screen(
    tmux_socket: str, tmp_path: Path
) -> None:
    go = tmp_path / "go"
    script = (
        "printf '\\033[1mbold\\033[0m\\n'; for i in $(seq 1 40); do echo row $i; done; "
        "printf '\\033[2J\\033[5;3Hplaced \\033[42mgreen\\033[0m'; "
        f"while [ ! -e {go} ]; do sleep 0.02; done; exit 3"
    )
    async with recorded(tmux_socket, tmp_path) as (client, _):
        started = await client.call_tool(
            "start_program", {"argv": ["sh", "-c", script], "width": 50, "height": 12}
        )
        program = started.structured_content
        assert program is not None
        pane_id = program["paneId"]
        wait_until(lambda: "green" in "\n".join(tmux_screen(tmux_socket, pane_id)), 20)
        shown = tmux_screen(tmux_socket, pane_id)
        go.touch()
        await read_to_end(client, program["programId"])
        resource = await client.read_resource(
            f"tmux://local/program/{program['programId']}/recording"
        )
    path = tmp_path / file_name(program["programId"])
    header, events = checked(path)
    assert (header["term"]["cols"], header["term"]["rows"]) == (50, 12)
    assert header["command"] == f"sh -c {shlex.quote(script)}"
    assert events[-1][1:] == ("x", "3")
    assert {code for _, code, _ in events[:-1]} == {"o"}
    screen = replayed(events, 50, 12)
    assert [row.rstrip() for row in screen.display] == [row.rstrip() for row in shown]
    assert screen.buffer[4][9].bg == "green"
    content = resource.contents[0]
    assert isinstance(content, TextResourceContents)
    assert content.mime_type == MIME_TYPE
    assert read_cast(content.text)[1] == events
    assert audit_records(tmp_path / "audit.jsonl")[0]["recording"] == program["programId"]
    assert not open_files(path)


@pytest.mark.anyio
async def test_no_record_writes_nothing(tmux_socket: str, tmp_path: Path) -> None:
    settings = SettingOptions(no_record=True, audit_log=str(tmp_path / "audit.jsonl"))
    context = ServingState(
        dataclasses.replace(settings.settings(dict(os.environ)), socket_name=tmux_socket)
    )
    try:
        async with client_of(context, BINDINGS) as client:
            await client.call_tool("run_command", {"command": "echo unrecorded"})
            await client.call_tool("run_program", {"argv": ["echo", "unrecorded"]})
            listed = await client.list_resources()
            templates = await client.list_resource_templates()
    finally:
        await context.close()
    assert sorted(path.name for path in tmp_path.iterdir()) == ["audit.jsonl"]
    assert all("recording" not in record for record in audit_records(tmp_path / "audit.jsonl"))
    assert not [r for r in listed.resources if "recording" in str(r.uri)]
    assert not [t for t in templates.resource_templates if "recording" in t.uri_template]


@pytest.mark.anyio
async def test_hostile_commands_and_output_are_kept_as_data(
    tmux_socket: str, tmp_path: Path
) -> None:
    planted = Path("/tmp/schemux-recording-pwned")
    planted.unlink(missing_ok=True)
    hostile_output = '"]\\n[0, \\"x\\", \\"0\\"]\\n\\033]0;title\\007\\377\\376 end'
    async with recorded(tmux_socket, tmp_path) as (client, _):
        ran = await client.call_tool("run_command", {"command": f"# {HOSTILE}"})
        assert not ran.is_error
        program = await client.call_tool(
            "run_program", {"argv": ["printf", hostile_output + "\\n"]}
        )
        assert not program.is_error
        sent = await client.call_tool("send_keys", {"keys": HOSTILE, "literal": True})
        assert not sent.is_error
        await client.call_tool("send_keys", {"keys": "C-c", "literal": False})
    assert not planted.exists()
    by_tool = {r["tool"]: r for r in audit_records(tmp_path / "audit.jsonl")}
    header, _ = checked(tmp_path / file_name(by_tool["run_command"]["recording"]))
    assert header["command"] == f"# {HOSTILE}"
    header, events = checked(tmp_path / file_name(by_tool["run_program"]["recording"]))
    assert header["command"] == shlex.join(["printf", hostile_output + "\\n"])
    written = "".join(data for _, code, data in events if code == "o")
    assert '"]\r\n[0, "x", "0"]\r\n\x1b]0;title\x07\ufffd\ufffd end' in written
    assert events[-1][1:] == ("x", "0")  # the program's own exit, not the one it printed
    header, _ = checked(tmp_path / file_name(by_tool["send_keys"]["recording"]))
    assert header["command"] == "C-c"  # the last send_keys; every line ASCII JSON
    for path in tmp_path.glob("*.cast"):
        path.read_bytes().decode("ascii")


@pytest.mark.anyio
async def test_bounds_hold_with_real_programs(tmux_socket: str, tmp_path: Path) -> None:
    async with recorded(tmux_socket, tmp_path, max_files=2, max_bytes=64 * 1024) as (client, _):
        for index in range(3):
            await client.call_tool("run_program", {"argv": ["echo", f"run {index}"]})
        # a busy program: cut at an eighth of the bytes, its exit kept
        await client.call_tool("run_program", {"argv": ["seq", "1", "100000"]})
    kept = sorted(tmp_path.glob("*.cast"), key=lambda path: path.stat().st_mtime)
    assert len(kept) == 2
    assert sum(path.stat().st_size for path in kept) <= 64 * 1024
    _, events = checked(kept[-1])
    assert ("m", CUT_MARKER) in [(code, data) for _, code, data in events]
    assert events[-1][1:] == ("x", "0")
    programs = [r["recording"] for r in audit_records(tmp_path / "audit.jsonl")]
    assert [path.name for path in kept] == [file_name(p) for p in programs[-2:]]


@pytest.mark.anyio
async def test_a_recorded_call_returns_before_its_recording_ends_and_a_read_waits(
    tmux_socket: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A recording's end (the watch given back, the events written) runs after its call
    returned: held here, the call still returns; a read of the recording meanwhile waits
    for it and finds all of it; closing schemux leaves no watcher or link (failed before:
    the call waited for the held end and timed out)."""
    pane = new_pane(tmux_socket)
    release = anyio.Event()
    real = pane_watch.end_watch

    async def held(server: Any, watch: Any) -> None:
        await release.wait()
        await real(server, watch)

    monkeypatch.setattr(pane_recording, "end_watch", held)
    read: list[str] = []
    async with recorded(tmux_socket, tmp_path) as (client, context):
        with anyio.fail_after(10):
            ran = await client.call_tool(
                "run_command", {"command": "echo recorded-out", "pane_id": pane.pane_id}
            )
        assert not ran.is_error
        (recording_id,) = context.services.fleet.recordings.being_made()
        uri = f"tmux://local/call/{recording_id}/recording"

        async def reading() -> None:
            content = (await client.read_resource(uri)).contents[0]
            assert isinstance(content, TextResourceContents)
            read.append(content.text)

        async with anyio.create_task_group() as group:
            group.start_soon(reading)
            await anyio.wait_all_tasks_blocked()
            assert not read  # the read waits for the end
            release.set()
    _, events = read_cast(read[0])
    assert "recorded-out" in "".join(data for _, code, data in events if code == "o")
    assert watching_clients(tmux_socket) == 0
    assert not links(tmux_socket)


@pytest.mark.anyio
async def test_a_run_commands_recording_begins_in_parallel_and_before_the_keys(
    tmux_socket: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """run_command's first line (the pane's claim) goes while the recording's first line
    (the link and the screen, over the watcher) is held; the keys wait for that line
    (failed before: the claim waited for the recording's line, and the call timed out)."""
    pane = new_pane(tmux_socket)
    release, claimed = anyio.Event(), anyio.Event()
    typed_while_held: list[tuple[str, ...]] = []
    real = connection.answer

    async def held(link: Any, args: tuple[str, ...], timeout: float) -> list[str]:
        if "link-window" in args:
            await release.wait()
        if not release.is_set() and {"send-keys", "paste-buffer"} & set(args):
            typed_while_held.append(args)
        lines = await real(link, args, timeout)
        if BUSY_OPTION in args:
            claimed.set()
        return lines

    async with recorded(tmux_socket, tmp_path) as (client, context):
        monkeypatch.setattr(engine, "answer", held)
        async with anyio.create_task_group() as group:
            ran: list[Any] = []

            async def calling() -> None:
                ran.append(
                    await client.call_tool(
                        "run_command", {"command": "echo in-parallel", "pane_id": pane.pane_id}
                    )
                )

            group.start_soon(calling)
            try:
                with anyio.fail_after(10):
                    await claimed.wait()
                await anyio.wait_all_tasks_blocked()
            finally:
                release.set()
        assert not ran[0].is_error
        assert ran[0].structured_content["output"] == ["in-parallel"]
        await context.services.fleet.recordings.ended()
    assert not typed_while_held
    (path,) = tmp_path.glob("recording-c*.cast")
    _, events = checked(path)
    assert "in-parallel" in "".join(data for _, code, data in events if code == "o")


@pytest.mark.anyio
async def test_a_recorded_call_begins_its_recording_in_one_command_line(
    tmux_socket: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The watcher's output turned on in the line that links the pane's window and reads
    its screen; the pane's state not read first for a pane of a session of its own: the
    recording begins in one command line (failed before: three)."""
    pane = new_pane(tmux_socket)
    lines: list[tuple[str, ...]] = []
    real = connection.answer

    async def counted(link: Any, args: tuple[str, ...], timeout: float) -> list[str]:
        lines.append(tuple(args))
        return await real(link, args, timeout)

    async with recorded(tmux_socket, tmp_path) as (client, context):
        await client.call_tool("run_command", {"command": "true", "pane_id": pane.pane_id})
        await context.services.fleet.recordings.ended()  # the first call's, after it
        monkeypatch.setattr(engine, "answer", counted)
        ran = await client.call_tool("run_command", {"command": "echo hi", "pane_id": pane.pane_id})
        assert not ran.is_error
    watcher = [line for line in lines if {"link-window", "unlink-window"} & set(line)]
    assert len(watcher) == 2
    output_on, output_off = (
        ("refresh-client", "-f", "!no-output"),
        ("refresh-client", "-f", "no-output"),
    )
    assert watcher[0][:3] == output_on
    assert watcher[1][0] == "set-option"  # the unlink: its output off after it
    assert output_on not in lines
    assert lines.count(output_off) == 1
    assert not [line for line in lines if line[0] == "display-message" and len(line) == 5]
    assert not links(tmux_socket)
    assert watching_clients(tmux_socket) == 0


@pytest.mark.anyio
async def test_every_exit_path_leaves_no_watcher_link_or_file(
    tmux_socket: str, tmp_path: Path
) -> None:
    pane = new_pane(tmux_socket)
    async with recorded(tmux_socket, tmp_path) as (client, context):
        # a call cancelled while its command runs
        with anyio.move_on_after(1.5):
            await client.call_tool(
                "run_command", {"command": "sleep 30", "pane_id": pane.pane_id, "timeout": 60}
            )
        # the server's handler ends after the client's cancellation reaches it
        await until(lambda: watching_clients(tmux_socket) == 0)
        assert not links(tmux_socket)
        # a program stopped, and one still running when schemux closes
        stopped = await client.call_tool("start_program", {"argv": ["sleep", "30"]})
        running = await client.call_tool(
            "start_program", {"argv": ["sh", "-c", "yes | head -c 100000; sleep 30"]}
        )
        assert stopped.structured_content is not None
        assert running.structured_content is not None
        await client.call_tool(
            "stop_program", {"programId": stopped.structured_content["programId"]}
        )
        recordings = context.services.fleet.recordings
    assert recordings.being_made() == []  # the close awaited every end
    for path in tmp_path.glob("*.cast"):
        checked(path)
        assert not open_files(path)
    assert len(list(tmp_path.glob("*.cast"))) == 3
    stopped_events = checked(tmp_path / file_name(stopped.structured_content["programId"]))[1]
    assert stopped_events[-1][1] == "x"
    assert watching_clients(tmux_socket) == 0
    assert not links(tmux_socket)


@pytest.mark.anyio
async def test_send_keys_batch_is_recorded_with_markers_and_served(
    tmux_socket: str, tmp_path: Path
) -> None:
    pane = new_pane(tmux_socket)
    async with recorded(tmux_socket, tmp_path) as (client, _):
        batch = await client.call_tool(
            "send_keys_batch",
            {
                "operations": [
                    {"keys": "echo one", "pane_id": pane.pane_id},
                    {"keys": "Enter", "literal": False, "pane_id": pane.pane_id},
                ]
            },
        )
        assert not batch.is_error
        listed = await client.list_resources()
        # the call's recording is listed, and served once its end (after the call) is done
        (uri,) = [str(each.uri) for each in listed.resources if "/call/" in str(each.uri)]
        read = await client.read_resource(uri)
        content = read.contents[0]
        assert isinstance(content, TextResourceContents)
        assert content.mime_type == MIME_TYPE
        _, events = read_cast(content.text)
        markers = [data for _, code, data in events if code == "m"]
        assert markers == [
            f"operation 0: keys to {pane.pane_id}",
            f"operation 1: keys to {pane.pane_id}",
        ]


def test_schemux_audit_and_replay_show_and_play_a_recording(tmp_path: Path) -> None:
    recording_id = "c0123456789ab"
    cast = Cast(80, 24, command="echo hi", title="t", started=time.time(), now=0.0, limit=1 << 20)
    cast.output("hi \x1b[31mthere\x1b[0m\r\n", 5.0)
    cast.exit(0, 5.1)
    (tmp_path / file_name(recording_id)).write_bytes(cast.take())
    line = {"time": "2026-12-01T10:00:00.000Z", "tool": "run_command", "outcome": "ok",
            "duration_ms": 5.0, "pane": "%1", "recording": recording_id,
            "arguments": {"command": "echo hi"}}  # fmt: skip
    (tmp_path / "audit.jsonl").write_text(json.dumps(line) + "\n")
    env = {**os.environ, "SCHEMUX_AUDIT_LOG": str(tmp_path / "audit.jsonl")}
    audit = subprocess.run(
        [sys.executable, "-m", "schemux", "audit"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert f"[replay {recording_id}]" in audit.stdout
    began = time.monotonic()
    replay = subprocess.run(
        [sys.executable, "-m", "schemux", "replay", recording_id,
         "--idle-limit", "0.2", "--speed", "2"],
        env=env, capture_output=True, check=True,
    )  # fmt: skip
    assert replay.stdout == b"hi \x1b[31mthere\x1b[0m\r\n"
    assert time.monotonic() - began < 5  # 5 s of pause cut to 0.1
    refused = subprocess.run(
        [sys.executable, "-m", "schemux", "replay", "c0000000000ff", "--speed", "0"],
        env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert refused.returncode == 2
    assert "--speed" in refused.stderr


@pytest.mark.anyio
async def test_the_first_recording_makes_its_directory_private(tmp_path: Path) -> None:
    """A first call recorded before the audit log's first line (which makes the
    directory) is still written: the directory is made, 0700, with its parents."""
    directory = tmp_path / "state" / "schemux"
    store = Recordings(RecordingSettings(directory))
    recording = store.begin("c0000000000aa", None, 80, 24, command="c", title="t")
    assert recording is not None
    recording.output("first")
    await recording.close()
    _, events = read_cast(recording.path.read_text())
    assert [(code, data) for _, code, data in events] == [("o", "first")]
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert stat.S_IMODE(directory.parent.stat().st_mode) == 0o700


@pytest.mark.anyio
async def test_a_resize_during_a_call_is_a_resize_event(tmux_socket: str, tmp_path: Path) -> None:
    pane = new_pane(tmux_socket, width=90, height=20)
    go = tmp_path / "go"
    command = f"while [ ! -e {go} ]; do sleep 0.02; done; echo after-resize"
    async with recorded(tmux_socket, tmp_path) as (client, _), anyio.create_task_group() as group:
        group.start_soon(
            client.call_tool, "run_command", {"command": command, "pane_id": pane.pane_id}
        )
        # linked in the line that read the screen: from here on its changes are told
        await until(lambda: links(tmux_socket) != [])
        tmux(tmux_socket, "resize-window", "-t", pane.window_id, "-x", "70", "-y", "15")
        go.touch()
    _, events = checked(
        tmp_path / file_name(audit_records(tmp_path / "audit.jsonl")[-1]["recording"])
    )
    assert ("r", "70x15") in [(code, data) for _, code, data in events]
    screen = replayed(events, 90, 20)
    assert (screen.columns, screen.lines) == (70, 15)
    assert "after-resize" in [row.rstrip() for row in screen.display]


@pytest.mark.anyio
@pytest.mark.parametrize("placement", ["own", "window", "split"])
async def test_a_resize_of_a_program_is_a_resize_event_and_replays_to_its_screen(
    tmux_socket: str, tmp_path: Path, placement: str
) -> None:
    """A program's pane resized while it runs: its recording has the new size at that
    moment (before the output it drew at that size), and replays to the screen tmux
    shows; in its own window of schemux's session, or placed beside a person's pane (a
    window of another session, or a split of that pane), which tmux tells schemux's
    control client of only while that window is linked into its session too."""
    go = tmp_path / "go"
    script = f"trap 'stty size' WINCH; stty size; while [ ! -e {go} ]; do sleep 0.02; done"
    arguments: dict[str, object] = {"argv": ["sh", "-c", script], "width": 50, "height": 12}
    if placement != "own":
        beside = new_pane(tmux_socket, width=100, height=30)
        arguments |= {"fromPaneId": beside.pane_id, "placement": placement}
    async with recorded(tmux_socket, tmp_path) as (client, _):
        started = await client.call_tool("start_program", arguments)
        program = started.structured_content
        assert program is not None, started.content
        pane_id = program["paneId"]

        def size() -> tuple[int, int]:
            shown = tmux(tmux_socket, "display-message", "-p", "-t", pane_id, SIZE_FORMAT)
            columns, rows = shown.split()
            return int(columns), int(rows)

        first = size()
        await until(lambda: f"{first[1]} {first[0]}" in tmux_screen(tmux_socket, pane_id))
        if placement == "split":  # one of two panes, one above the other
            tmux(tmux_socket, "resize-pane", "-t", pane_id, "-y", str(first[1] + 3))
        else:
            window = tmux(tmux_socket, "display-message", "-p", "-t", pane_id, "#{window_id}")
            tmux(tmux_socket, "resize-window", "-t", window.strip(), "-x", "70", "-y", "15")
        now = size()
        assert now != first
        window = program_window(tmux_socket, pane_id)
        if placement != "own":  # linked into schemux's session while it runs
            assert window in owned_windows(tmux_socket)
        await until(lambda: f"{now[1]} {now[0]}" in tmux_screen(tmux_socket, pane_id))
        shown = tmux_screen(tmux_socket, pane_id)
        go.touch()
        await read_to_end(client, program["programId"])
        resource = await client.read_resource(
            f"tmux://local/program/{program['programId']}/recording"
        )
        # the link that told the resizes is gone with the program's end (a split's
        # window is the person's, and stays)
        if placement != "own":
            await until(lambda: window not in owned_windows(tmux_socket))
        if placement == "split":
            assert window in tmux(tmux_socket, "list-windows", "-a", "-F", "#{window_id}")
    content = resource.contents[0]
    assert isinstance(content, TextResourceContents)
    header, events = read_cast(content.text)
    assert (header["term"]["cols"], header["term"]["rows"]) == first
    coded = [(code, data) for _, code, data in events]
    assert ("r", f"{now[0]}x{now[1]}") in coded, coded
    resized = coded.index(("r", f"{now[0]}x{now[1]}"))
    drawn = next(
        i for i, (code, data) in enumerate(coded) if code == "o" and f"{now[1]} {now[0]}" in data
    )
    assert resized < drawn, coded
    screen = replayed(events, *first)
    assert (screen.columns, screen.lines) == now
    assert [row.rstrip() for row in screen.display] == [row.rstrip() for row in shown]


SIZE_FORMAT = "#{pane_width} #{pane_height}"


def program_window(socket: str, pane_id: str) -> str:
    return tmux(socket, "display-message", "-p", "-t", pane_id, "#{window_id}").strip()


def owned_windows(socket: str) -> list[str]:
    """The windows in schemux's own session."""
    listed = tmux(socket, "list-windows", "-t", f"={OWNED_SESSION}", "-F", "#{window_id}")
    return listed.split()


@pytest.mark.long
@pytest.mark.anyio
async def test_a_long_call_is_written_as_it_runs_and_recorded_whole(
    tmux_socket: str, tmp_path: Path
) -> None:
    """A call that prints a lot: its recording is on disk well before the call ends (so
    a long call's recording is never held whole in memory), and complete after."""
    pane = new_pane(tmux_socket, width=80, height=10)
    go = tmp_path / "go"
    command = f"seq 1 40000; while [ ! -e {go} ]; do sleep 0.02; done; echo finished"

    def written() -> int:
        return sum(path.stat().st_size for path in tmp_path.glob("recording-c*.cast"))

    async with recorded(tmux_socket, tmp_path) as (client, _), anyio.create_task_group() as group:
        group.start_soon(
            client.call_tool,
            "run_command",
            {"command": command, "pane_id": pane.pane_id, "timeout": 120},
        )
        await until(lambda: "40000" in "\n".join(tmux_screen(tmux_socket, pane.pane_id)), 30)
        await until(lambda: written() > 3 * FLUSH_BYTES, 30)  # the call still runs
        assert not go.exists()
        go.touch()
    _, events = checked(
        tmp_path / file_name(audit_records(tmp_path / "audit.jsonl")[-1]["recording"])
    )
    printed = "".join(data for _, code, data in events if code == "o")
    assert all(f"\n{number}\r" in printed for number in range(2, 40001))
    screen = replayed(events, 80, 10)
    assert "finished" in [row.rstrip() for row in screen.display]
