"""A read of a program waits for what it waits on, sees output as soon as the copy has it,
gives every byte exactly whether memory or the file holds it, and never says a program
ended with all its output when its text is gone (schemux.programs.program,
schemux.programs.output). Pure: a Program with no tmux behind it."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any, BinaryIO, cast

import anyio
import pytest

from schemux.errors import SchemuxError
from schemux.hosts.programs import host
from schemux.hosts.programs.gate import Ending
from schemux.hosts.programs.host import TextFiles
from schemux.programs.output import (
    PAGE_BYTES,
    WRITE_BYTES,
    _append,
    _write,
    first_text_line,
    page_at,
    text_tail,
)
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
    lines = "".join(f"line {number:06d}\n" for number in range(WRITE_BYTES // 12 + 1))
    copy = asyncio.ensure_future(_append(started, cast(Any, files), lines, 1 << 20))
    with anyio.fail_after(10):
        page = await started.until_some(lambda: page_at(started, cast(Any, files), 0, 1), 5)
    assert page is not None
    assert page.text == "line 000000\n"
    assert not copy.done()  # its write to the file waits
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


async def test_a_page_of_wide_characters_is_as_long_as_any_other(
    anyio_backend: str, tmp_path: Path
) -> None:
    """A page's first read takes two bytes a character; a page of characters of four
    bytes reads again, so that it still holds up to PAGE_CHARACTERS of them."""
    files = SlowFiles()
    files.go.set()
    started = running(tmp_path)
    lines = ["\U0001f600" * 99 + "\n", "a" * 99 + "\n"] * 300
    await _append(started, cast(Any, files), "".join(lines), 1 << 30)
    started.ending, started.output_done = Ending("completed", 0, None), True
    first = await page_at(started, cast(Any, files), 0, None)
    assert first is not None
    assert first.text == "".join(lines[:240])  # 24,000 characters, 59,640 bytes
    second = await page_at(started, cast(Any, files), first.cursor >> 16, None)
    assert second is not None
    assert second.text == "".join(lines[240:480])
    started.let_go_of_text()


class CountedFiles:
    """Text files that note each append's offset and size."""

    def __init__(self) -> None:
        self.appends: list[tuple[int, int]] = []

    async def append(self, file: BinaryIO, offset: int, data: bytes) -> None:
        self.appends.append((offset, len(data)))
        await TextFiles.append(file, offset, data)

    read_at = staticmethod(TextFiles.read_at)


async def test_the_file_is_written_in_batches_and_the_rest_at_the_end(
    anyio_backend: str, tmp_path: Path
) -> None:
    """A trip to a thread for each chunk the copy reads cost a quarter of its CPU: the
    text is written once ``WRITE_BYTES`` of it wait, all of them in one write, and what
    is left by ``_write`` at the copy's end; the file then has the whole text."""
    files = CountedFiles()
    started = running(tmp_path)
    chunk = "x" * 999 + "\n"
    chunks = WRITE_BYTES // len(chunk) + 1
    for _ in range(chunks):
        await _append(started, cast(Any, files), chunk, 1 << 30)
    assert files.appends == [(0, chunks * len(chunk))]
    await _append(started, cast(Any, files), "tail\n", 1 << 30)
    assert len(files.appends) == 1
    await _write(started, cast(Any, files))
    assert files.appends[1] == (chunks * len(chunk), 5)
    assert started.text is not None
    assert await TextFiles.read_at(started.text, 0, 1 << 20) == (chunk * chunks + "tail\n").encode()
    started.let_go_of_text()


async def test_a_tail_and_a_first_line_have_the_text_not_written_yet(
    anyio_backend: str, tmp_path: Path
) -> None:
    """A result's tail and first line are read across the file and memory: the text the
    copy holds back from the file is in them."""
    files = CountedFiles()
    started = running(tmp_path)
    lines = [f"{number:06d} ✓\n" for number in range(100_000)]
    for at in range(0, len(lines), 1000):
        await _append(started, cast(Any, files), "".join(lines[at : at + 1000]), 1 << 30)
    assert started.recent.start > 0  # the first line is in the file alone
    assert started.recent.unwritten > 0  # the last ones in memory alone
    tail, skipped = await text_tail(started, cast(Any, files), 1000)
    assert "".join(lines).encode()[skipped:].decode("utf-8", "replace") == tail
    assert tail.endswith(lines[-1])
    assert await first_text_line(started, cast(Any, files), 1 << 16) == lines[0]
    started.let_go_of_text()


async def test_a_read_of_the_file_gives_what_pread_gives(
    anyio_backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read the page cache has whole takes no trip to a thread; one it has not (here, a
    read past the end, short) does; both give what pread gives."""
    file = TextFiles.make_text(tmp_path)
    data = bytes(range(256)) * 4000
    await TextFiles.append(file, 0, data)
    reads = [(0, 48_000), (1000, 96_000), (len(data) - 10, 48_000), (len(data), 10)]
    expected = [data[offset : offset + length] for offset, length in reads]
    threads = []
    pread = os.pread

    def in_thread(fd: int, length: int, offset: int) -> bytes:
        threads.append(offset)
        return pread(fd, length, offset)

    monkeypatch.setattr(os, "pread", in_thread)
    assert [await TextFiles.read_at(file, offset, length) for offset, length in reads] == expected
    assert threads == [len(data) - 10, len(data)]
    threads.clear()
    monkeypatch.setattr(host, "_cached", lambda fd, offset, length: None)
    assert [await TextFiles.read_at(file, offset, length) for offset, length in reads] == expected
    assert threads == [offset for offset, _ in reads]
    file.close()


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
