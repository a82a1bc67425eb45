"""A program's text read back in pages: where a page ends, and the cursor after it."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from schemux.programs import Program

PAGE_CHARACTERS = 24_000


@dataclass(frozen=True)
class Page:
    text: str
    cursor: int
    ended: bool


async def page_at(program: Program, offset: int, max_lines: int | None) -> Page | None:
    """What a read from ``offset`` returns now, or None while there is nothing to give.

    A page ends on a line break: after ``max_lines`` lines, or the last break within
    ``PAGE_CHARACTERS``. Only a line longer than a page, or the unterminated last
    line of a finished program, ends elsewhere. The program's state is taken at once;
    the file is read in a thread, off the event loop.
    """
    size, finished = program.text_size, program.finished
    available = size - offset
    data = b""
    if available > 0:
        length = min(available, PAGE_CHARACTERS * 4)
        data = await asyncio.to_thread(_read_at, program.text_path, offset, length)
    # the file is our own UTF-8: "ignore" only drops a character cut at the read's end
    text = data.decode("utf-8", "ignore")[:PAGE_CHARACTERS]
    cut = _after_lines(text, max_lines)
    if cut == 0:
        if len(text) >= PAGE_CHARACTERS or (finished and len(text.encode()) == available):
            cut = len(text)
        elif not text and finished:
            return Page("", program.cursor_for(offset), True)
        else:
            return None  # a line still being written: wait for its end
    end = offset + len(text[:cut].encode())
    return Page(text[:cut], program.cursor_for(end), finished and end == size)


def _read_at(path: Path, offset: int, length: int) -> bytes:
    with path.open("rb") as text_file:
        text_file.seek(offset)
        return text_file.read(length)


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
