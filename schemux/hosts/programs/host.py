"""Where programs' files and processes live: this machine, or a host reached over ssh.

Everything programs do to a filesystem or a process goes through a ``ProgramHost``: the
runtime directory and each program's directory in it, the FIFOs, the gate and its
process, the launch checks. ``LocalPrograms`` is this machine (the gate's pidfd, FIFOs read
here); ``schemux.hosts.programs.remote.RemotePrograms`` is a host reached with OpenSSH, through one
helper process there. The text files that reads page through are always this machine's
(``TextFiles``). Blocking work runs in threads, never on the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import tempfile
from collections.abc import AsyncIterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import BinaryIO, Literal, Protocol

from schemux.hosts.programs.gate import Gate
from schemux.system.processes import descriptor_path, pidfd_exit, pidfd_signal
from schemux.system.runtime_identity import make_runtime_directory

COPY_BUFFER = 1 << 20
# why a launch check failed (``check_launch``); schemux.programs.launch words each one
LaunchProblem = Literal["notdir", "denied", "missing", "noexec", "notfound"]


class ProgramHost(Protocol):
    """What the store, the copy and the launch checks need of a host. A program's
    ``directory`` is its directory in ``root`` on this machine (its text file); the
    host's own files of that program (FIFOs, stdin, stderr) are in ``gate_directory``.
    Process handles and FIFO handles are ints, -1 for none."""

    @property
    def root(self) -> Path: ...
    def make_directory(self, program_id: str) -> Path: ...
    def gate_directory(self, directory: Path) -> str: ...
    async def gate(self) -> Gate: ...
    def copy_command(self, program_id: str) -> str: ...
    async def prepare(self, directory: Path, stdin_text: str | None, stderr: bool) -> int: ...
    async def write_secret(self, fd: int, secret: bytes) -> bool: ...
    def open_copy(self, path: Path) -> AbstractAsyncContextManager[asyncio.StreamReader]: ...
    def unblock_copy(self, path: Path) -> None: ...
    def make_text(self, directory: Path) -> BinaryIO: ...
    async def append(self, file: BinaryIO, offset: int, data: bytes) -> None: ...
    async def read_at(self, file: BinaryIO, offset: int, length: int) -> bytes: ...
    async def read_stderr(self, path: Path, ceiling: int) -> tuple[str, int]: ...
    async def remove(self, directory: Path) -> None: ...
    def open_process(self, pid: int) -> int: ...
    async def watching(self, pidfd: int) -> None: ...
    def signal(self, pidfd: int, signum: int) -> None: ...
    async def exited(self, pidfd: int) -> None: ...
    def close_descriptor(self, fd: int) -> None: ...
    async def default_path(self) -> str: ...
    async def default_directory(self) -> str: ...
    async def check_launch(
        self, directory: str, program: str | None, path: str
    ) -> LaunchProblem | None: ...
    def lost(self, directory: Path) -> str | None: ...
    async def close(self) -> None: ...


class TextFiles:
    """The text files of programs, on this machine whatever host runs them. A text file
    has no name (``O_TMPFILE``): schemux alone writes and reads it, through its own
    descriptor, at the offsets it wrote, so no other process can find it in a directory,
    and bytes written past the text schemux copied are never read."""

    @staticmethod
    def make_text(directory: Path) -> BinaryIO:
        return tempfile.TemporaryFile(dir=directory, buffering=0)

    @staticmethod
    async def append(file: BinaryIO, offset: int, data: bytes) -> None:
        def write() -> None:
            written = 0
            while written < len(data):
                written += os.pwrite(file.fileno(), data[written:], offset + written)

        await asyncio.to_thread(write)

    @staticmethod
    async def read_at(file: BinaryIO, offset: int, length: int) -> bytes:
        """Up to ``length`` bytes from ``offset``: at once when the page cache has all of
        them (nearly always: schemux wrote them moments ago), else in a thread. A trip to
        a thread for each page read from the file was a twentieth of the server's main
        thread with 50 programs streaming."""
        cached = _cached(file.fileno(), offset, length)
        if cached is not None:
            return cached
        return await asyncio.to_thread(os.pread, file.fileno(), length, offset)


class LocalPrograms(TextFiles):
    """The runtime directory of one running schemux (mode 0700, named after this process
    so that a later schemux can reap it once this one is gone), made when first needed
    and removed by ``close``; programs run under ``gate``."""

    def __init__(self, max_running: int, gate: Gate) -> None:
        self._root: Path | None = None
        self._root_fd = -1
        self._gate = gate
        # opening a FIFO blocks until its writer opens it: one thread per running program
        # at most, of its own, so that nothing else in the process can starve the copies
        self._openers = ThreadPoolExecutor(max_running, "schemux-copy")
        # each copy FIFO a thread opens, or will open once a thread is free, until it has
        self._opening: dict[Path, asyncio.Future[int]] = {}
        # each program's stderr file, opened before its gate removes its name
        self._stderr: dict[Path, int] = {}

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

    @staticmethod
    def gate_directory(directory: Path) -> str:
        return str(directory)

    async def gate(self) -> Gate:
        return self._gate

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
        if stderr:
            self._stderr[directory] = os.open(
                directory / "stderr", os.O_RDONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600
            )
        if stdin_text is not None:
            await asyncio.to_thread(_write_private, directory / "stdin", stdin_text.encode())
        return os.open(directory / "secret", os.O_RDWR | os.O_NONBLOCK)

    @staticmethod
    async def write_secret(fd: int, secret: bytes) -> bool:
        """Write the gate's table in one write: of PIPE_BUF bytes at most, it is all or
        nothing, and the FIFO (empty, at least a page) takes it."""
        try:
            return os.write(fd, secret) == len(secret)
        except OSError:
            return False

    @contextlib.asynccontextmanager
    async def open_copy(self, path: Path) -> AsyncIterator[asyncio.StreamReader]:
        """The copy FIFO's bytes, as they come, once its writer has opened it. A read
        takes all that waits (up to the buffer's 1 MiB): while one append is in its
        thread, the pipe fills the buffer, and the next append takes it in one hop."""
        pipe = await self._open_copy(path)
        reader = asyncio.StreamReader(limit=COPY_BUFFER)
        try:
            transport, _ = await asyncio.get_running_loop().connect_read_pipe(
                lambda: asyncio.StreamReaderProtocol(reader), pipe
            )
        except BaseException:
            pipe.close()
            raise
        try:
            yield reader
        finally:
            transport.close()

    async def _open_copy(self, path: Path) -> BinaryIO:
        """The copy FIFO, opened for reading once its writer has opened it (a thread waits
        for that). Cancelled meanwhile, the descriptor the thread still gets is closed."""
        future = asyncio.get_running_loop().run_in_executor(
            self._openers, os.open, path, os.O_RDONLY | os.O_CLOEXEC
        )
        self._opening[path] = future
        future.add_done_callback(lambda _: self._opening.pop(path, None))
        try:
            fd = await asyncio.shield(future)
        except asyncio.CancelledError:
            future.add_done_callback(_close_opened)
            raise
        # its writer has it open: from now on no other process can open it by its name
        with contextlib.suppress(OSError):
            os.unlink(path)
        os.set_blocking(fd, False)
        return os.fdopen(fd, "rb", buffering=0)

    def unblock_copy(self, path: Path) -> None:
        """Return an ``open_copy`` still waiting for its writer, by holding the FIFO open
        for writing (and reading: such an open neither blocks nor fails for want of a
        reader) until that open has returned. Its thread may not have begun the open yet,
        when every thread is busy, so an end opened and closed at once would not do."""
        future = self._opening.get(path)
        if future is None:
            return
        try:
            fd = os.open(path, os.O_RDWR | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:  # its name is gone: an open not begun fails, as it should
            return
        future.add_done_callback(lambda _: os.close(fd))

    async def read_stderr(self, path: Path, ceiling: int) -> tuple[str, int]:
        """The end of the program's stderr, through the descriptor opened with it (its
        gate removes the name once the program has it)."""
        fd = self._stderr.get(path.parent)
        if fd is None:
            return "", 0
        # a descriptor of the read's own: ``remove`` may close the program's meanwhile
        with os.fdopen(os.dup(fd), "rb", buffering=0) as file:
            return await asyncio.to_thread(_read_tail, file.fileno(), ceiling)

    async def remove(self, directory: Path) -> None:
        fd = self._stderr.pop(directory, None)
        if fd is not None:
            os.close(fd)
        await asyncio.to_thread(shutil.rmtree, directory, ignore_errors=True)

    @staticmethod
    def open_process(pid: int) -> int:
        return os.pidfd_open(pid)

    @staticmethod
    async def watching(pidfd: int) -> None:
        """Nothing to wait for: pidfd_open opened the process or raised."""

    @staticmethod
    def signal(pidfd: int, signum: int) -> None:
        pidfd_signal(pidfd, signum)

    @staticmethod
    async def exited(pidfd: int) -> None:
        await pidfd_exit(pidfd)

    @staticmethod
    def close_descriptor(fd: int) -> None:
        os.close(fd)

    @staticmethod
    async def default_path() -> str:
        return os.environ.get("PATH", os.defpath)

    @staticmethod
    async def default_directory() -> str:
        return os.getcwd()

    @staticmethod
    async def check_launch(directory: str, program: str | None, path: str) -> LaunchProblem | None:
        """The start directory enterable, and ``program`` (unless None) as the gate's
        exec will find it: on ``path``, or a path from the start directory."""
        return await asyncio.to_thread(_launch_problem, directory, program, path)

    @staticmethod
    def lost(directory: Path) -> str | None:
        """Nothing between schemux and this machine can be lost."""
        return None

    async def close(self) -> None:
        """Remove the runtime directory (its programs ended and forgotten), returning
        any copy FIFO open still waiting, so that no thread is left blocked in it."""
        for path in list(self._opening):
            self.unblock_copy(path)
        self._openers.shutdown(wait=False)
        for fd in self._stderr.values():
            os.close(fd)
        self._stderr.clear()
        if self._root is not None:
            await asyncio.to_thread(shutil.rmtree, self._root, ignore_errors=True)
            os.close(self._root_fd)
            self._root, self._root_fd = None, -1  # closed: a second close has nothing to end


def _write_private(path: Path, data: bytes) -> None:
    """A new file only its owner may open (a program's stdin: its gate removes the name)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "wb") as file:
        file.write(data)


def _cached(fd: int, offset: int, length: int) -> bytes | None:
    """The ``length`` bytes from ``offset`` when the page cache has every one of them;
    None otherwise. ``RWF_NOWAIT`` makes the kernel say so rather than wait for the disk,
    so the event loop never waits on this read."""
    buffer = bytearray(length)
    try:
        read = os.preadv(fd, [buffer], offset, os.RWF_NOWAIT)
    except OSError:  # not all cached, or no such reads here: the thread's read tells
        return None
    return bytes(buffer) if read == length else None


def tail_start(size: int, ceiling: int) -> int:
    """Where the tail of ``size`` bytes that can reach a result begins: ``ceiling`` bytes
    and a line's worth more before the end."""
    return max(0, size - ceiling - 4096)


def _read_tail(fd: int, ceiling: int) -> tuple[str, int]:
    """The end of the file (``tail_start``), and how many bytes before it were not read."""
    size = os.fstat(fd).st_size
    start = tail_start(size, ceiling)
    return os.pread(fd, size - start, start).decode("utf-8", "replace"), start


def _close_opened(future: Future[int] | asyncio.Future[int]) -> None:
    if not future.cancelled() and future.exception() is None:
        os.close(future.result())


def _launch_problem(directory: str, program: str | None, path: str) -> LaunchProblem | None:
    if not os.path.isdir(directory):
        return "notdir"
    if not os.access(directory, os.X_OK):
        return "denied"
    if program is None:
        return None
    if "/" in program:
        candidate = os.path.join(directory, program)
        if not os.path.isfile(candidate):
            return "missing"
        return None if os.access(candidate, os.X_OK) else "noexec"
    return None if shutil.which(program, path=path) is not None else "notfound"
