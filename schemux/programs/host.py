"""Where programs' files and processes live: this machine.

Everything programs do to a filesystem or a process goes through ``LocalHost``: the
runtime directory and each program's directory in it, the FIFOs, the text files, and the
gate's pidfd. Blocking work runs in threads, never on the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import BinaryIO

from schemux.abandoned import make_runtime_directory
from schemux.processes import descriptor_path, pidfd_exit, pidfd_signal


class LocalHost:
    """The runtime directory of one running schemux (mode 0700, named after this process
    so that a later schemux can reap it once this one is gone), made when first needed
    and removed by ``close``."""

    def __init__(self, max_running: int) -> None:
        self._root: Path | None = None
        self._root_fd = -1
        # opening a FIFO blocks until its writer opens it: one thread per running program
        # at most, of its own, so that nothing else in the process can starve the copies
        self._openers = ThreadPoolExecutor(max_running, "schemux-copy")

    @property
    def root(self) -> Path:
        if self._root is None:
            root = make_runtime_directory()
            self._root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
            self._root = root
        return self._root

    def make_directory(self, program_id: str) -> Path:
        directory = self.root / program_id
        directory.mkdir(mode=0o700)
        return directory

    def copy_command(self, program_id: str) -> str:
        """The shell command that pipe-pane runs to write the pane's bytes into the
        program's copy FIFO. tmux expands it and sh runs it, so it holds digits, slashes
        and the program's id (hex digits) only: the runtime directory's path (which
        TMPDIR makes anything) is reached through a descriptor held until ``close``, so a
        late writer of a program already gone finds no such path (a descriptor of the
        program's own, closed, could by then name another program's directory)."""
        return f"exec cat > {descriptor_path(self._root_fd)}/{program_id}/copy"

    async def prepare(self, directory: Path, stdin_text: str | None, stderr: bool) -> int:
        """The program's FIFOs and files; returns the secret FIFO's descriptor, opened
        read-write: opening does not wait for the gate, and the FIFO keeps what is
        written until the gate reads it."""
        os.mkfifo(directory / "copy", 0o600)
        os.mkfifo(directory / "secret", 0o600)
        (directory / "text").touch(0o600)
        if stderr:
            (directory / "stderr").touch(0o600)
        if stdin_text is not None:
            await asyncio.to_thread((directory / "stdin").write_text, stdin_text, "utf-8")
        return os.open(directory / "secret", os.O_RDWR | os.O_NONBLOCK)

    @staticmethod
    def write_secret(fd: int, secret: bytes) -> bool:
        """Write the gate's table in one write: of PIPE_BUF bytes at most, it is all or
        nothing, and the FIFO (empty, at least a page) takes it."""
        try:
            return os.write(fd, secret) == len(secret)
        except OSError:
            return False

    async def open_copy(self, path: Path) -> BinaryIO:
        """The copy FIFO, opened for reading once its writer has opened it (a thread waits
        for that). Cancelled meanwhile, the descriptor the thread still gets is closed."""
        future = asyncio.get_running_loop().run_in_executor(
            self._openers, os.open, path, os.O_RDONLY | os.O_CLOEXEC
        )
        try:
            fd = await asyncio.shield(future)
        except asyncio.CancelledError:
            future.add_done_callback(_close_opened)
            raise
        os.set_blocking(fd, False)
        return os.fdopen(fd, "rb", buffering=0)

    @staticmethod
    def unblock_copy(path: Path) -> None:
        """Return an ``open_copy`` still waiting for its writer, by opening that end."""
        with contextlib.suppress(OSError):
            os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))

    @staticmethod
    async def open_text(path: Path) -> BinaryIO:
        return await asyncio.to_thread(open, path, "ab")

    @staticmethod
    async def append(file: BinaryIO, data: bytes) -> None:
        def write() -> None:
            file.write(data)
            file.flush()

        await asyncio.to_thread(write)

    @staticmethod
    async def read_at(path: Path, offset: int, length: int) -> bytes:
        def read() -> bytes:
            with path.open("rb") as file:
                file.seek(offset)
                return file.read(length)

        return await asyncio.to_thread(read)

    @staticmethod
    async def read_tail(path: Path, ceiling: int) -> tuple[str, int]:
        """The end of a file, as much as can reach a result (``ceiling`` bytes and a
        line's worth more), and how many bytes before it were not read."""

        def read() -> tuple[str, int]:
            with path.open("rb") as file:
                size = file.seek(0, 2)
                start = max(0, size - ceiling - 4096)
                file.seek(start)
                return file.read().decode("utf-8", "replace"), start

        return await asyncio.to_thread(read)

    @staticmethod
    async def first_line(path: Path, ceiling: int) -> str:
        def read() -> str:
            with path.open("rb") as file:
                return file.readline(ceiling).decode("utf-8", "replace")

        return await asyncio.to_thread(read)

    @staticmethod
    async def remove(directory: Path) -> None:
        await asyncio.to_thread(shutil.rmtree, directory, ignore_errors=True)

    @staticmethod
    def open_process(pid: int) -> int:
        return os.pidfd_open(pid)

    @staticmethod
    def signal(pidfd: int, signum: int) -> None:
        pidfd_signal(pidfd, signum)

    @staticmethod
    async def exited(pidfd: int) -> None:
        await pidfd_exit(pidfd)

    @staticmethod
    def close_descriptor(fd: int) -> None:
        os.close(fd)

    async def close(self) -> None:
        """Remove the runtime directory (its programs ended and forgotten)."""
        self._openers.shutdown(wait=False)
        if self._root is not None:
            await self.remove(self._root)
            os.close(self._root_fd)
            self._root_fd = -1


def _close_opened(future: Future[int] | asyncio.Future[int]) -> None:
    if not future.cancelled() and future.exception() is None:
        os.close(future.result())
