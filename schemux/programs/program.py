"""One program: what it was started with, how it stands, the background tasks that serve it,
and the one way to wait for a change in it."""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

import anyio

from schemux.audit.recordings import Recording
from schemux.hosts.programs.gate import Ending, Outcome
from schemux.hosts.programs.gate_process import TABLE_BYTES
from schemux.tmux.server import TmuxServer

T = TypeVar("T")
logger = logging.getLogger("schemux")
RECENT_BYTES = 96_000  # a page's read at most (``output.PAGE_BYTES``): 24,000 characters


@dataclass(frozen=True)
class ProgramSpec:
    argv: list[str]
    start_directory: str
    environment: dict[str, str]
    stdin_text: str | None = None
    separate_stderr: bool = False
    from_pane: str | None = None
    from_session: str | None = None
    placement: str = "window"
    width: int | None = None
    height: int | None = None
    lifetime: float = 600.0
    keep: bool = False
    hold: bool = False


class Tasks:
    """Every background task of one owner, each observed: one that fails is logged and
    handed to ``on_failure`` (which ends the program, visibly), and ``cancel`` ends and
    awaits those still running, so that none outlives its owner unseen."""

    def __init__(
        self, owner: str, on_failure: Callable[[BaseException], None] | None = None
    ) -> None:
        self._owner = owner
        self._on_failure = on_failure
        self._running: set[asyncio.Task[None]] = set()

    def spawn(self, name: str, work: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.get_running_loop().create_task(work, name=f"{self._owner} {name}")
        self._running.add(task)
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Task[None]) -> None:
        self._running.discard(task)
        error = None if task.cancelled() else task.exception()
        if error is None:
            return
        logger.error("%s failed", task.get_name(), exc_info=error)
        if self._on_failure is not None:
            self._on_failure(error)

    @property
    def running(self) -> bool:
        return bool(self._running)

    async def cancel(self) -> None:
        """Cancel every task (but the one calling) and wait until each has ended."""
        others = [task for task in self._running if task is not asyncio.current_task()]
        for task in others:
            task.cancel()
        await asyncio.gather(*others, return_exceptions=True)


class RecentText:
    """The last bytes of a program's text, in memory as they are appended: at least
    ``keep`` of them (one page's read), and every byte whose write to the text file is
    still under way, so that together the file and this hold the whole text at every
    moment. A page read here costs no thread and no system call; a reader that keeps up
    (nearly every read) finds its page here."""

    __slots__ = ("_data", "_keep", "_written", "start")

    def __init__(self, keep: int = RECENT_BYTES) -> None:
        self._keep = keep
        self._data = bytearray()
        self.start = 0  # the text offset of the first byte held
        self._written = 0  # the text offset up to which the file has every byte

    @property
    def end(self) -> int:
        return self.start + len(self._data)

    def add(self, data: bytes) -> None:
        """The next bytes of the text, before they are written to the file."""
        self._data += data

    @property
    def unwritten(self) -> int:
        """How many of the bytes held the file does not have yet."""
        return self.end - self._written

    def to_write(self) -> tuple[int, bytes]:
        """The text offset from which the file lacks bytes, and the bytes held from there."""
        return self._written, bytes(self._data[self._written - self.start :])

    def written(self, end: int) -> None:
        """The file has every byte before ``end``: what is beyond ``keep`` and written
        may go (in steps of at least ``keep``, so that each byte is moved once or twice)."""
        self._written = max(self._written, end)
        surplus = min(len(self._data) - self._keep, self._written - self.start)
        if surplus >= self._keep:
            del self._data[:surplus]
            self.start += surplus

    def get(self, offset: int, length: int) -> bytes:
        """The bytes held from ``offset`` (at least ``start``), ``length`` at most."""
        at = offset - self.start
        return bytes(self._data[at : at + length])

    def clear(self) -> None:
        """Hold nothing more (the text file was let go)."""
        self._data = bytearray()
        self.start = self._written = 0


@dataclass(eq=False)
class Program:
    id: str
    server: TmuxServer
    directory: Path
    pane_id: str = ""
    gate_fd: int = -1  # a pidfd of the gate (signals reach it, never a reused pid) till it exits
    keep: bool = False
    hold: bool = False
    session: str | None = None  # the MCP session that started it (``sessions``): its alone
    # the gate's tokens, one per report it can make (schemux.hosts.programs.gate_process)
    secret: bytes = field(default_factory=lambda: secrets.token_bytes(TABLE_BYTES), repr=False)
    secret_fd: int = -1  # the secret FIFO's, held until the program ends
    text: BinaryIO | None = None  # the text file (``TextFiles``), open until it is let go
    text_size: int = 0
    recent: RecentText = field(default_factory=RecentText)  # the text's last bytes
    copy_open: bool = False  # the copy FIFO's reader and writer have it: it has no name
    output_done: bool = False
    output_cut: bool = False
    lost_end: bool = False
    ending: Ending | None = None
    ended_by: Outcome | None = None  # stopped or expired while schemux ends it
    tasks: Tasks = field(init=False)
    recording: Recording | None = None  # its asciicast recording, until its copy ends
    size: tuple[int, int] = (0, 0)  # its pane's columns and rows, as its recording last had
    unfollow_resizes: Callable[[], None] | None = None  # ends what ``follow_resizes`` began
    # the link of its window into _schemux that tells its resizes, and the link's mark
    layout_link: tuple[str, str] | None = None
    copy_task: asyncio.Task[None] | None = None
    lifetime_task: asyncio.Task[None] | None = None
    _changed: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def stderr_path(self) -> Path:
        return self.directory / "stderr"

    @property
    def copy_path(self) -> Path:
        return self.directory / "copy"

    def let_go_of_text(self) -> None:
        """Close the text file (it has no name: closed, it is gone)."""
        if self.text is not None:
            self.text.close()
            self.text = None
        self.recent.clear()

    @property
    def finished(self) -> bool:
        """Ended, and every byte of its output copied."""
        return self.ending is not None and self.output_done

    @property
    def output_complete(self) -> bool:
        """Ended on its own, with nothing of its output cut or lost."""
        return (
            self.ending is not None
            and self.ending.outcome in ("completed", "not_started")
            and not (self.output_cut or self.lost_end)
        )

    def changed(self) -> None:
        """Wake every wait on this program (``until``)."""
        self._changed.set()
        self._changed = asyncio.Event()

    async def until(self, condition: Callable[[], bool], timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for ``condition``, checked at each change;
        whether it holds."""

        async def check() -> bool | None:
            return True if condition() else None

        return await self.until_some(check, timeout) is not None

    async def until_some(
        self, attempt: Callable[[], Awaitable[T | None]], timeout: float
    ) -> T | None:
        """What ``attempt`` gives first, tried now and at each change for up to
        ``timeout`` seconds; None when it gave nothing by then."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            # the event of the state the attempt sees, taken before it: a change while
            # it awaits (a page read in a thread) sets this one, and the wait sees it
            changed = self._changed
            if (result := await attempt()) is not None:
                return result
            remaining = deadline - loop.time()
            if remaining <= 0:
                return None
            with anyio.move_on_after(remaining):
                await changed.wait()
