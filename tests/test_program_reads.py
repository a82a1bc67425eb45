"""A read of a program waits for what it waits on, sees output as soon as the copy has it,
gives every byte exactly whether memory or the file holds it, and never says a program
ended with all its output when its text is gone (schemux.programs.program,
schemux.programs.output). Pure: a Program with no tmux behind it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, BinaryIO, cast

import anyio
import pytest

from schemux.errors import SchemuxError
from schemux.hosts.programs.gate import Ending
from schemux.hosts.programs.host import TextFiles
from schemux.programs.output import PAGE_BYTES, _append, page_at
from schemux.programs.program import Program, RecentText
from schemux.tmux.server import TmuxServer


def program() -> Program:
    return Program("p0123456789ab", cast(TmuxServer, None), Path("/nonexistent"))


async def test_a_change_while_an_attempt_awaits_wakes_the_wait(anyio_backend: str) -> None:
    """The soak found a read_program that waited its whole 10 s for output that had come
    at once: the change landed while the attempt awaited (a page read in a thread), and
    the wait then began on the next change, which never came."""
    watched = program()
    landed = False

    async def attempt() -> str | None:
        nonlocal landed
        if landed:
            return "page"
        await asyncio.sleep(0)  # a read in a thread: the program changes meanwhile
        landed = True
        watched.changed()
        return None

    with anyio.fail_after(10):  # the wait's own timeout is an hour
        assert await watched.until_some(attempt, 3600.0) == "page"


async def test_a_read_of_text_let_go_does_not_say_all_was_read(anyio_backend: str) -> None:
    """A program whose text was let go (enough later programs ended) while a read of it
    waited: the read said it had ended with every byte returned, short of 1,357."""
    ended = program()
    ended.text_size = 9200
    ended.ending = Ending("completed", 0, None)
    ended.output_done = True
    assert ended.text is None
    with pytest.raises(SchemuxError, match="let go"):
        await page_at(ended, cast(Any, None), 7843, None)


async def test_a_read_at_the_end_of_text_let_go_has_ended(anyio_backend: str) -> None:
    """Nothing of it was unread: the end is the end, whether the text is kept or not."""
    ended = program()
    ended.text_size = 9200
    ended.ending = Ending("completed", 0, None)
    ended.output_done = True
    page = await page_at(ended, cast(Any, None), 9200, None)
    assert (page is not None and page.text, page is not None and page.ended) == ("", True)


class SlowFiles:
    """Text files whose appends wait until ``go`` is set: a write still under way."""

    def __init__(self) -> None:
        self.go = asyncio.Event()
        self.reads = 0

    async def append(self, file: BinaryIO, offset: int, data: bytes) -> None:
        await self.go.wait()
        await TextFiles.append(file, offset, data)

    async def read_at(self, file: BinaryIO, offset: int, length: int) -> bytes:
        self.reads += 1
        return await TextFiles.read_at(file, offset, length)


def running(tmp_path: Path) -> Program:
    started = Program("p0123456789ab", cast(TmuxServer, None), tmp_path)
    started.text = TextFiles.make_text(tmp_path)
    return started


async def test_a_reader_sees_output_before_its_write_to_the_file_ends(
    anyio_backend: str, tmp_path: Path
) -> None:
    """A waiting read wakes as the copy has the bytes, not after a trip to a thread that
    writes them to the text file (on a busy machine, milliseconds of wake-up latency)."""
    files = SlowFiles()
    started = running(tmp_path)
    copy = asyncio.ensure_future(_append(started, cast(Any, files), "line one\n", 1 << 20))
    with anyio.fail_after(10):
        page = await started.until_some(lambda: page_at(started, cast(Any, files), 0, None), 5)
    assert page is not None
    assert page.text == "line one\n"
    assert not copy.done()
    files.go.set()
    await copy
    started.let_go_of_text()


async def test_pages_are_exact_across_memory_and_file(anyio_backend: str, tmp_path: Path) -> None:
    """Whatever memory has let go is read from the file, the rest from memory; every page
    put together is the text, byte for byte, however far behind the reader is."""
    files = SlowFiles()
    files.go.set()
    started = running(tmp_path)
    lines = [f"{number:06d} {'é' * (number % 37)} ✓\n" for number in range(40_000)]
    for at in range(0, len(lines), 500):
        await _append(started, cast(Any, files), "".join(lines[at : at + 500]), 1 << 30)
    assert started.recent.start > 0  # memory has let the start go
    started.ending, started.output_done = Ending("completed", 0, None), True
    pages, offset = [], 0
    while True:
        page = await page_at(started, cast(Any, files), offset, 333)
        assert page is not None
        pages.append(page.text)
        offset = page.cursor >> 16
        if page.ended:
            break
    assert "".join(pages) == "".join(lines)
    assert files.reads > 0  # the start came from the file
    started.let_go_of_text()


def test_recent_text_holds_what_is_not_written_and_a_page_at_least() -> None:
    recent = RecentText(keep=10)
    recent.add(b"a" * 50)
    recent.written(0)  # nothing is in the file yet: all of it stays
    assert (recent.start, recent.end) == (0, 50)
    recent.written(45)
    assert recent.start == 40
    assert recent.get(40, 100) == b"a" * 10
    recent.add(b"bcd")
    recent.written(53)
    assert recent.get(50, 3) == b"bcd"
    assert recent.end == 53
    assert RecentText().get(0, 1) == b""


def test_memory_keeps_a_whole_page_read() -> None:
    assert RecentText()._keep >= PAGE_BYTES
