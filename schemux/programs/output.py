"""A program's output: the copy of its pane's bytes into its text file (cut at the output
limit), read back in pages, addressed by cursors, its last bytes kept in memory too
(``program.RecentText``: a reader that keeps up reads them there, with no trip to a
thread); and its recording, which has the bytes as they came and each resize of its pane
(``follow_resizes``)."""

from __future__ import annotations

import asyncio
import codecs
import zlib
from dataclasses import dataclass

import anyio

from schemux.errors import SchemuxError
from schemux.hosts.programs.gate import Report, scan
from schemux.hosts.programs.host import COPY_BUFFER, ProgramHost, tail_start
from schemux.programs.panes import unlink_for_layouts
from schemux.programs.program import Program
from schemux.text.terminal import TextFilter
from schemux.tmux.control.connection import Notification, resized_to

PAGE_CHARACTERS = 24_000
PAGE_BYTES = PAGE_CHARACTERS * 4  # what a page's read takes at most: 4 bytes a character
# what a page's first read takes: enough for nearly all text (the benchmark's averages 1.1
# bytes a character); a page of wider characters reads again, up to PAGE_BYTES
_PAGE_FIRST_BYTES = PAGE_CHARACTERS * 2
# Text a copy holds in memory alone before it writes it to the file, in one trip to a
# thread: a trip a chunk (17 KB on average with 50 programs streaming) cost the process
# about 0.1 ms of CPU each, a quarter of all the copy's work.
WRITE_BYTES = 256 * 1024
_CURSOR_TAG_BITS = 16


def _salt(program: Program) -> int:
    return zlib.crc32(program.id.encode()) & ((1 << _CURSOR_TAG_BITS) - 1)


def cursor_for(program: Program, offset: int) -> int:
    """A cursor is a byte offset in the text file, tagged with the program's own salt so
    that one program's cursor is refused by another."""
    return (offset << _CURSOR_TAG_BITS) | _salt(program)


def offset_of(program: Program, cursor: int) -> int:
    if cursor == 0:
        return 0
    if cursor & ((1 << _CURSOR_TAG_BITS) - 1) != _salt(program):
        raise SchemuxError(
            f"cursor {cursor} is not one that read_program returned for {program.id}",
            suggestion="pass the cursor of this program's previous read, or omit it",
        )
    offset = cursor >> _CURSOR_TAG_BITS
    if offset > program.text_size:
        raise SchemuxError(
            f"cursor {cursor} is past the end of {program.id}'s output",
            suggestion="pass the cursor of the previous read, or omit it",
        )
    return offset


async def text_at(program: Program, host: ProgramHost, offset: int, length: int) -> bytes:
    """Up to ``length`` bytes of the program's text from ``offset`` (before its
    ``text_size``): from memory, and from the file for what memory no longer holds."""
    recent = program.recent
    if offset >= recent.start:
        return recent.get(offset, length)
    assert program.text is not None
    head = await host.read_at(program.text, offset, min(length, recent.start - offset))
    if offset + length <= recent.start or len(head) < recent.start - offset:
        return head
    return head + recent.get(recent.start, offset + length - recent.start)


async def text_tail(program: Program, host: ProgramHost, ceiling: int) -> tuple[str, int]:
    """The end of the program's text, as much as can reach a result (``ceiling`` bytes and
    a line's worth more), and how many bytes before it were not read."""
    size = program.text_size
    start = tail_start(size, ceiling)
    data = await text_at(program, host, start, size - start)
    return data.decode("utf-8", "replace"), start


async def first_text_line(program: Program, host: ProgramHost, ceiling: int) -> str:
    """The first line of the program's text (its first ``ceiling`` bytes at most)."""
    data = await text_at(program, host, 0, min(program.text_size, ceiling))
    end = data.find(b"\n")
    return data[: end + 1 if end >= 0 else len(data)].decode("utf-8", "replace")


async def copy_output(program: Program, host: ProgramHost, limit: int) -> Report | None:
    """Copy the pane's bytes to the text file (and, as they come, to the program's
    recording) until the end marker or the copy's end; the gate's report, or None when
    the copy ended without it. The text goes to the file in writes of ``WRITE_BYTES``,
    and the rest at the end (a copy cancelled before it leaves that rest in memory,
    where reads find it)."""
    async with host.open_copy(program.copy_path) as reader:
        program.copy_open = True
        program.changed()
        text_filter = TextFilter()
        # the recording's output is the terminal's own bytes, a character cut between
        # two reads kept for the next
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        pending = b""
        report: Report | None = None
        while report is None:
            chunk = await reader.read(COPY_BUFFER)
            if not chunk:
                break
            data, pending, report = scan(pending + chunk, program.secret)
            await _record(program, decoder.decode(data))
            await _append(program, host, text_filter.feed(data), limit)
        if report is None:
            await _record(program, decoder.decode(pending))
            await _append(program, host, text_filter.feed(pending), limit)
        await _record(program, decoder.decode(b"", final=True))
        await _append(program, host, text_filter.finish(), limit)
        await _write(program, host)
    return report


def follow_resizes(program: Program, window_id: str, size: tuple[int, int]) -> None:
    """Note each resize of the program's pane in its recording, from ``size`` (columns,
    rows) on, as the ``%layout-change`` of its window comes to the shared control client
    (``ControlEngine.listen``), until ``end_recording``. tmux tells a control client the
    layouts of its own session's windows only: a program placed beside a pane, in
    another session's window, has that window linked into ``_schemux`` meanwhile
    (``panes.link_for_layouts``)."""
    program.size = size

    def notify(notification: Notification) -> None:
        resized = resized_to(notification, window_id, program.pane_id)
        if resized is not None and resized != program.size and program.recording is not None:
            program.size = resized
            program.recording.resize(*resized)

    program.unfollow_resizes = program.server.engine.listen(notify)


async def end_recording(program: Program, exit_status: int | None = None) -> None:
    """Stop following the program's resizes, and close its recording (with its exit
    status, when known)."""
    if program.unfollow_resizes is not None:
        program.unfollow_resizes()
        program.unfollow_resizes = None
    if program.layout_link is not None:
        window_id, mark = program.layout_link
        program.layout_link = None
        await unlink_for_layouts(program.server, window_id, mark)
    if program.recording is not None:
        await program.recording.close(exit_status)


# turns of the event loop for a line waiting in the shared client's pipe to reach its
# listeners: one polls the pipe (its protocol wakes the reader task), the next runs that
# task, one more for the order the ready callbacks run in
_TURNS_TO_A_NOTIFICATION = 3


async def _resizes_read() -> None:
    """Let the event loop read what tmux wrote to the shared client before this output.

    tmux writes a ``%layout-change`` to its control clients before it resizes the pane's
    terminal, so before the program's redraw at the new size; but that redraw comes by
    another way (the pane's copy, read in a thread), which may reach this task first (4
    times in 10 on a loaded machine, here). A few turns of the loop read the
    notification already in the pipe first, so a recording's resize comes before the
    output drawn at that size (a few microseconds a chunk)."""
    for _ in range(_TURNS_TO_A_NOTIFICATION):
        await asyncio.sleep(0)


async def _record(program: Program, data: str) -> None:
    recording = program.recording
    if recording is not None and data:
        if program.unfollow_resizes is not None:
            await _resizes_read()
        recording.output(data)
        if recording.due:
            await recording.flush()


async def _append(program: Program, host: ProgramHost, text: str, limit: int) -> None:
    if not text or program.output_cut or program.text is None:
        return
    data = text.encode()
    room = limit - program.text_size
    if len(data) > room:
        data = data[:room]
        data = data[: data.rfind(b"\n") + 1]  # cut on a line break
        program.output_cut = True
    # readers see the bytes at once, from memory, which holds them until they are written
    program.recent.add(data)
    program.text_size += len(data)
    program.changed()
    if program.recent.unwritten >= WRITE_BYTES:
        await _write(program, host)


async def _write(program: Program, host: ProgramHost) -> None:
    """Write the text that memory alone holds to the file. The write is carried to its end
    even when the copy is cancelled, so that the file holds every byte memory lets go."""
    if program.text is None:
        return
    offset, data = program.recent.to_write()
    if data:
        with anyio.CancelScope(shield=True):
            await host.append(program.text, offset, data)
        program.recent.written(offset + len(data))


@dataclass(frozen=True)
class Page:
    text: str
    cursor: int
    ended: bool


async def page_at(
    program: Program, host: ProgramHost, offset: int, max_lines: int | None
) -> Page | None:
    """What a read from ``offset`` returns now, or None while there is nothing to give.

    A page ends on a line break: after ``max_lines`` lines, or the last break within
    ``PAGE_CHARACTERS``. Only a line longer than a page, or the unterminated last
    line of a finished program, ends elsewhere. The program's state is taken at once;
    what memory no longer holds is read from the file in a thread, off the event loop.
    """
    size, finished = program.text_size, program.finished
    available = size - offset
    text = ""
    if available > 0:
        text = await _text_from(program, host, offset, min(available, _PAGE_FIRST_BYTES))
        if len(text) < PAGE_CHARACTERS and available > _PAGE_FIRST_BYTES:
            text = await _text_from(program, host, offset, min(available, PAGE_BYTES))
        text = text[:PAGE_CHARACTERS]
    cut = _after_lines(text, max_lines)
    if cut == 0:
        if len(text) >= PAGE_CHARACTERS or (finished and len(text.encode()) == available):
            cut = len(text)
        elif not text and finished:
            return Page("", cursor_for(program, offset), True)
        else:
            return None  # a line still being written: wait for its end
    end = offset + len(text[:cut].encode())
    return Page(text[:cut], cursor_for(program, end), finished and end == size)


async def _text_from(program: Program, host: ProgramHost, offset: int, length: int) -> str:
    """Up to ``length`` bytes of the program's text from ``offset``, as text."""
    if program.text is None:  # let go while this read waited: not an end
        raise SchemuxError(
            f"the output of {program.id} was let go while this read waited, after "
            f"enough later programs ended: {program.text_size - offset} bytes of it after "
            "the cursor were not read",
            suggestion="read a program's output to its end before many later programs end",
        )
    data = await text_at(program, host, offset, length)
    # the file is our own UTF-8: "ignore" only drops a character cut at the read's end
    return data.decode("utf-8", "ignore")


def _after_lines(text: str, max_lines: int | None) -> int:
    """Where the text of up to ``max_lines`` complete lines ends (all of them for None)."""
    if max_lines is None:
        return text.rfind("\n") + 1
    end = 0
    for _ in range(max_lines):
        found = text.find("\n", end)
        if found < 0:
            break
        end = found + 1
    return end
