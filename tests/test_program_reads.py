"""A read of a program waits for what it waits on, and never says a program ended with all
its output when its text is gone (schemux.programs.program, schemux.programs.output).
Pure: a Program with no tmux behind it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, cast

import anyio
import pytest

from schemux.errors import SchemuxError
from schemux.hosts.programs.gate import Ending
from schemux.programs.output import page_at
from schemux.programs.program import Program
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
