"""Programs on another host (``schemux.hosts``: over ssh, through a command prefix): the
gate and the ``pipe-pane`` copy run there, and one helper process there
(``remote_helper.pl``, perl-base only) serves all of them.

Why one helper and not a session per program: sshd allows a connection ten sessions at
once by default (``MaxSessions``), which the control-mode engine and one-off tmux
commands share. The helper is one more session (``Host.exec_command``, its script and
the gate's an argument each, which the host's kind passes as one word each). It speaks
frames on its stdin and stdout (see the script): it makes the remote runtime directory
(0700) and each program's FIFOs and files there, writes the gate's token table to its
FIFO, reads every copy FIFO and streams the bytes back, watches each gate (by pidfd
where the kernel has one) and signals it, and answers the launch checks (start
directory, argv[0] on the remote PATH) as the remote host sees them. Its stdin
closing, whatever closed it (schemux's exit, a kill -9, the connection dropping), ends
it: the gates it watches get SIGHUP and the remote runtime directory goes.

The text files stay on this machine (``TextFiles``): reads and cursors are the same as
for a local program. A helper that ends (the connection dropped) ends its programs as
gone at once: their copies end, their gates count as exited, and ``lost`` says why.
The next program starts a new helper (and ``Host.connect`` a new connection).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import shutil
import struct
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

import anyio

from schemux.errors import SchemuxError, ServerUnavailable, shorten
from schemux.hosts.programs.gate import PERL_GATE, PERL_SYSCALLS, Gate
from schemux.hosts.programs.host import COPY_BUFFER, LaunchProblem, TextFiles
from schemux.hosts.protocol import HelperHost
from schemux.system.runtime_identity import make_runtime_directory
from schemux.system.tethered import tethered

HELPER = Path(__file__).with_name("remote_helper.pl")
START_SECONDS = 30.0  # the helper's first frame (the master may be starting too)
CLOSE_SECONDS = 2.0  # the helper's end after its stdin closes, then it is killed
REQUEST_SECONDS = 10.0  # a request's answer; a helper this slow is as good as lost
_LENGTH = struct.Struct(">I")
_PROBLEMS: Mapping[bytes, LaunchProblem] = MappingProxyType(
    {
        b"notdir": "notdir",
        b"denied": "denied",
        b"missing": "missing",
        b"noexec": "noexec",
        b"notfound": "notfound",
    }
)


def encode_frame(*fields: bytes) -> bytes:
    body = b"".join(_LENGTH.pack(len(value)) + value for value in fields)
    return _LENGTH.pack(len(body)) + body


def decode_fields(body: bytes) -> list[bytes]:
    fields = []
    at = 0
    while at + 4 <= len(body):
        (size,) = _LENGTH.unpack_from(body, at)
        fields.append(body[at + 4 : at + 4 + size])
        at += 4 + size
    return fields


@dataclass(eq=False)
class _Helper:
    """One running helper: its process, what it said at start, and who waits on it."""

    process: asyncio.subprocess.Process
    root: str = ""
    machine: str = ""
    perl: str = ""
    path: str = ""
    directory: str = ""
    connection: int = 0  # the host's way there it started under (``Host.connection``)
    ended: str | None = None  # why it ended, once it has
    replies: dict[int, asyncio.Future[list[bytes]]] = field(default_factory=dict)
    copies: dict[str, asyncio.StreamReader] = field(default_factory=dict)
    exits: dict[int, asyncio.Future[None]] = field(default_factory=dict)
    reader: asyncio.Task[None] | None = None
    # shells' report pipes by pid (``ShellReports``), made at each shell's first call
    reports: dict[int, ShellReports] = field(default_factory=dict)

    def send(self, *fields: bytes) -> None:
        """Write a frame (asyncio buffers it: no wait); nothing once the helper ended."""
        stdin = self.process.stdin
        if self.ended is not None or stdin is None or stdin.is_closing():
            return
        stdin.write(encode_frame(*fields))


@dataclass(eq=False)
class ShellReports:
    """The pipes one shell's run_command wrapper reports through to the helper (its
    ``report`` operation): the helper's pid and the descriptors the shell opens through
    ``/proc/PID/fd``; the call armed with its token, if any (``hosts.protocol``)."""

    helper: _Helper
    pid: int
    helper_pid: int
    writes: int
    reads: int
    token: str | None = None
    lines: asyncio.Queue[str | None] | None = None
    unanswered: int = 0  # reports given to the armed call and not answered yet

    def arm(self, token: str) -> asyncio.Queue[str | None]:
        self.token, self.lines = token, asyncio.Queue()
        if self.helper.ended is not None:
            self.lines.put_nowait(None)
        return self.lines

    def reported(self, line: str) -> None:
        """A report from the shell: to the call armed for it, else answered at once (a
        call that timed out, was cancelled, or a schemux of the past's)."""
        token = line.split(" ", 1)[0]
        if self.lines is not None and token == self.token:
            self.unanswered += 1
            self.lines.put_nowait(line)
        else:
            self._answer(token)

    def go_on(self) -> None:
        if self.unanswered > 0 and self.token is not None:
            self.unanswered -= 1
            self._answer(self.token)

    def disarm(self, token: str) -> None:
        if self.token != token:
            return
        for _ in range(self.unanswered):
            self._answer(token)
        self.token, self.lines, self.unanswered = None, None, 0

    def ended(self) -> None:
        if self.lines is not None:
            self.lines.put_nowait(None)

    def _answer(self, token: str) -> None:
        """The answer the shell waits for: the token of the report it sent."""
        self.helper.send(b"answer", b"0", str(self.pid).encode(), token.encode())


class RemotePrograms(TextFiles):
    """Programs on ``host``, their text files in a local runtime directory. The host
    that made it offers its helper for shell facts too (``Host.facts_helper``)."""

    def __init__(self, host: HelperHost) -> None:
        self._host = host
        # this machine's side: the runtime directory of the text files, made when needed
        self._root: Path | None = None
        self._helper: _Helper | None = None
        self._starting = asyncio.Lock()
        self._warming: asyncio.Task[None] | None = None  # a start for the shell facts
        self._numbers = itertools.count(1)  # requests and handles, never reused
        self._helpers: dict[str, _Helper] = {}  # program id -> the helper serving it
        # a gate's handle -> the helper watching it, and its exit
        self._exits: dict[int, tuple[_Helper | None, asyncio.Future[None]]] = {}
        # a gate's handle -> its pid and the helper's answer to watch, until ``watching``
        self._watches: dict[int, tuple[int, asyncio.Future[list[bytes]]]] = {}

    @property
    def root(self) -> Path:
        if self._root is None:
            self._root = make_runtime_directory()
        return self._root

    @property
    def remote_root(self) -> str | None:
        """The remote runtime directory of the running helper, if one runs."""
        helper = self._helper
        return None if helper is None or helper.ended is not None else helper.root

    def make_directory(self, program_id: str) -> Path:
        directory = self.root / program_id
        directory.mkdir(mode=0o700)
        return directory

    def gate_directory(self, directory: Path) -> str:
        return f"{self._serving(directory.name).root}/{directory.name}"

    def _serving(self, program_id: str) -> _Helper:
        helper = self._helpers.get(program_id)
        if helper is None:
            raise SchemuxError(f"program {program_id} has no helper on {self._host.describe()}")
        return helper

    async def _running(self) -> _Helper:
        """The helper, started when there is none (or the last one ended)."""
        async with self._starting:
            helper = self._helper
            if helper is None or helper.ended is not None:
                helper = self._helper = await self._start()
            return helper

    async def _start(self) -> _Helper:
        await self._host.connect()
        connection = self._host.connection
        script = HELPER.read_text("utf-8")
        gate = PERL_GATE.read_text("utf-8")
        process = await asyncio.create_subprocess_exec(
            *tethered(self._host.exec_command(["perl", "-e", script, gate])),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            limit=COPY_BUFFER,
        )
        helper = _Helper(process, connection=connection)
        try:
            with anyio.fail_after(START_SECONDS):
                fields = await _read_frame(process)
        except (TimeoutError, asyncio.IncompleteReadError):
            fields = None
        if fields is None or len(fields) != 6 or fields[0] != b"ready":
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            said = await _stderr_of(process)
            raise ServerUnavailable(
                f"the program helper could not start on {self._host.describe()}: {said}",
                suggestion="programs on another host need perl (perl-base) and /proc there",
            )
        root, machine, perl, path, directory = (
            value.decode("utf-8", "surrogateescape") for value in fields[1:]
        )
        helper.root, helper.machine, helper.perl = root, machine, perl
        helper.path, helper.directory = path, directory
        helper.reader = asyncio.get_running_loop().create_task(
            self._dispatch(helper), name=f"program helper on {self._host.describe()}"
        )
        return helper

    async def _dispatch(self, helper: _Helper) -> None:
        """Hand each frame of the helper to what waits for it, until the helper ends; then
        everything still waiting learns that it ended."""
        try:
            while (fields := await _read_frame(helper.process)) is not None:
                kind = fields[0]
                if kind == b"data":
                    copy = helper.copies.get(fields[1].decode())
                    if copy is not None:
                        copy.feed_data(fields[2])
                elif kind == b"eof":
                    copy = helper.copies.pop(fields[1].decode(), None)
                    if copy is not None:
                        copy.feed_eof()
                elif kind == b"exit":
                    exited = helper.exits.pop(int(fields[1]), None)
                    if exited is not None and not exited.done():
                        exited.set_result(None)
                elif kind == b"report":
                    reports = helper.reports.get(int(fields[1]))
                    if reports is not None:
                        reports.reported(fields[2].decode("utf-8", "replace"))
                elif kind == b"unreport":  # a gone shell's: its numbers may serve others
                    helper.reports.pop(int(fields[1]), None)
                else:
                    reply = helper.replies.pop(int(fields[1]), None)
                    if reply is not None and not reply.done():
                        reply.set_result(fields)
        except (asyncio.IncompleteReadError, ConnectionError, ValueError):
            pass
        finally:
            status = await _status_of(helper.process)
            self._ended(helper, await _stderr_of(helper.process), status)

    def _ended(self, helper: _Helper, said: str, status: int | None) -> None:
        lost = self._host.lost(helper.connection, status)
        helper.ended = lost or f"the program helper on {self._host.describe()} ended: {said}"
        error = ServerUnavailable(helper.ended)
        for reply in helper.replies.values():
            if not reply.done():
                reply.set_exception(error)
        for copy in helper.copies.values():
            copy.feed_eof()
        for exited in helper.exits.values():
            if not exited.done():
                exited.set_result(None)
        for reports in helper.reports.values():
            reports.ended()
        helper.replies.clear()
        helper.copies.clear()
        helper.exits.clear()
        helper.reports.clear()

    async def _ask(
        self,
        helper: _Helper,
        operation: bytes,
        *fields: bytes,
        seconds: float = REQUEST_SECONDS,
    ) -> list[bytes]:
        """A request and its reply's fields (within ``seconds``); SchemuxError with the
        helper's reason."""
        if helper.ended is not None:
            raise ServerUnavailable(helper.ended)
        number = next(self._numbers)
        reply: asyncio.Future[list[bytes]] = asyncio.get_running_loop().create_future()
        helper.replies[number] = reply
        helper.send(operation, str(number).encode(), *fields)
        try:
            with anyio.fail_after(seconds):
                answer = await reply
        except TimeoutError:
            raise ServerUnavailable(
                f"the program helper on {self._host.describe()} did not answer within {seconds:g} s"
            ) from None
        finally:
            helper.replies.pop(number, None)
        if answer[0] != b"ok":
            reason = answer[2].decode("utf-8", "replace") if len(answer) > 2 else "no reason"
            raise SchemuxError(f"on {self._host.describe()}: {shorten(reason, 300)}")
        return answer[2:]

    async def gate(self) -> Gate:
        """The Perl gate, from the remote runtime directory, with the remote machine's
        system call numbers (the helper is Perl: the Python gate is never needed there)."""
        helper = await self._running()
        numbers = PERL_SYSCALLS.get(helper.machine)
        if numbers is None:
            raise SchemuxError(
                f"programs cannot run on {self._host.describe()}: the system call numbers of "
                f"its architecture {helper.machine!r} are not known"
            )
        syscalls = ",".join(str(number) for number in numbers)
        script = f"{helper.root}/program_gate.pl"
        return Gate("perl", (helper.perl, "-X", "-t", "-C0", script, syscalls))

    def copy_command(self, program_id: str) -> str:
        """pipe-pane's shell command on the remote host: the helper's directory is made of
        plain characters (the helper sees to it) and the id of hex digits. Once it has the
        FIFO open, the FIFO's name goes: no other process can open it from then on (the
        helper's end, open without blocking, cannot tell when a writer came)."""
        fifo = f"{self._serving(program_id).root}/{program_id}/copy"
        return f"exec 3> {fifo} && rm -f {fifo} && exec cat >&3 3>&-"

    async def prepare(self, directory: Path, stdin_text: str | None, stderr: bool) -> int:
        helper = await self._running()
        program_id = directory.name
        handle = next(self._numbers)
        self._helpers[program_id] = helper
        helper.copies[program_id] = asyncio.StreamReader(limit=COPY_BUFFER)
        await self._ask(
            helper, b"prepare", program_id.encode(), str(handle).encode(),
            b"1" if stdin_text is not None else b"", (stdin_text or "").encode(),
            b"1" if stderr else b"",
        )  # fmt: skip
        return handle

    async def write_secret(self, fd: int, secret: bytes) -> bool:
        helper = self._helper
        if helper is None:
            return False
        try:
            await self._ask(helper, b"secret", str(fd).encode(), secret)
        except SchemuxError:
            return False
        return True

    @contextlib.asynccontextmanager
    async def open_copy(self, path: Path) -> AsyncIterator[asyncio.StreamReader]:
        helper = self._serving(path.parent.name)
        copy = helper.copies.get(path.parent.name)
        if copy is None:  # the helper ended already: an ended copy
            copy = asyncio.StreamReader()
            copy.feed_eof()
        yield copy

    def unblock_copy(self, path: Path) -> None:
        """Nothing waits for a remote copy's writer here."""

    async def read_stderr(self, path: Path, ceiling: int) -> tuple[str, int]:
        helper = self._serving(path.parent.name)
        data, start = await self._ask(
            helper, b"tail", path.parent.name.encode(), str(ceiling).encode()
        )
        return data.decode("utf-8", "replace"), int(start)

    async def remove(self, directory: Path) -> None:
        helper = self._helpers.pop(directory.name, None)
        if helper is not None:
            helper.copies.pop(directory.name, None)
            with contextlib.suppress(SchemuxError):
                await self._ask(helper, b"remove", directory.name.encode())
        await asyncio.to_thread(shutil.rmtree, directory, ignore_errors=True)

    def open_process(self, pid: int) -> int:
        """A handle at once; the helper's answer (whether the pid is this helper's gate)
        is ``watching``'s."""
        helper = self._helper
        handle = next(self._numbers)
        loop = asyncio.get_running_loop()
        exited: asyncio.Future[None] = loop.create_future()
        if helper is None or helper.ended is not None:
            exited.set_result(None)  # nothing it started is watched any more
        else:
            helper.exits[handle] = exited
            number = next(self._numbers)
            answer: asyncio.Future[list[bytes]] = loop.create_future()
            helper.replies[number] = answer
            # an answer nobody awaits (the launch failed first) is not an unretrieved error
            answer.add_done_callback(lambda done: done.cancelled() or done.exception())
            self._watches[handle] = (pid, answer)
            helper.send(b"watch", str(number).encode(), str(handle).encode(), str(pid).encode())
        self._exits[handle] = (helper, exited)
        return handle

    async def watching(self, pidfd: int) -> None:
        """Raise when the helper could not take the pid tmux reported for the gate as its
        gate: a tmux server in another pid namespace than the helper's session reports pids
        that mean other processes (or none) where the helper runs, and a signal to one
        would reach the wrong process. The gate then counts as exited: nothing watches it."""
        pid, answer = self._watches.pop(pidfd, (0, None))
        if answer is None:
            return
        try:
            with anyio.fail_after(REQUEST_SECONDS):
                fields = await answer
        except TimeoutError:
            fields = [b"err", b"", b"no answer"]
        if fields[0] == b"ok":
            return
        helper, exited = self._exits.get(pidfd, (None, None))
        if helper is not None:
            helper.exits.pop(pidfd, None)
        if exited is not None and not exited.done():
            exited.set_result(None)
        reason = fields[2].decode("utf-8", "replace") if len(fields) > 2 else "no reason"
        if not reason.startswith("unseen:"):
            raise SchemuxError(f"on {self._host.describe()}: {shorten(reason, 300)}")
        raise SchemuxError(
            f"the gate's process (pid {pid}, as the tmux server reports it) is not to be seen "
            f"on {self._host.describe()} where the program helper runs: the tmux server runs "
            "in another pid namespace than the helper's session (or the pane was closed at "
            "once)",
            suggestion="programs on another host need the tmux server started on that host, "
            "in the pid namespace its sessions get (e.g. by schemux through that host), not "
            "one reached through a forwarded socket",
        )

    def signal(self, pidfd: int, signum: int) -> None:
        helper, _ = self._exits.get(pidfd, (None, None))
        if helper is not None:
            helper.send(b"signal", b"0", str(pidfd).encode(), str(signum).encode())

    async def exited(self, pidfd: int) -> None:
        _, exited = self._exits[pidfd]
        await asyncio.shield(exited)

    def close_descriptor(self, fd: int) -> None:
        helper, _ = self._exits.pop(fd, (self._helper, None))
        self._watches.pop(fd, None)
        if helper is not None:
            helper.send(b"close", b"0", str(fd).encode())

    async def default_path(self) -> str:
        return (await self._running()).path

    async def default_directory(self) -> str:
        return (await self._running()).directory

    async def check_launch(
        self, directory: str, program: str | None, path: str
    ) -> LaunchProblem | None:
        helper = await self._running()
        (problem,) = await self._ask(
            helper, b"check", directory.encode("utf-8", "surrogateescape"),
            (program or "").encode("utf-8", "surrogateescape"),
            path.encode("utf-8", "surrogateescape"),
        )  # fmt: skip
        return _PROBLEMS.get(problem)

    async def shell_facts(
        self,
        operation: bytes,
        server: tuple[int, int],
        *fields: bytes,
        seconds: float = REQUEST_SECONDS,
    ) -> list[bytes] | None:
        """The helper's answer to a shell facts request (``facts``, ``echo`` or
        ``answers``, the terminal barrier: see the script) about the tmux server ``server``
        (its pid and start time, as tmux says them), as a list of one value, within
        ``seconds``; an empty list when that is no process of the helper's pid namespace;
        None when no helper runs yet."""
        helper = self._helper
        if helper is None or helper.ended is not None:
            # not yet: started in the background, the facts read another way meanwhile
            # (a helper's start is a session's on the host: a call should not wait for it)
            if self._warming is None or self._warming.done():
                self._warming = asyncio.get_running_loop().create_task(self._warm())
            return None
        pid, started = server
        answer = await self._ask(
            helper, operation, str(pid).encode(), str(started).encode(), *fields, seconds=seconds
        )
        return answer[1:2] if answer[0] == b"same" else []

    async def shell_reports(self, pid: int) -> ShellReports | None:
        helper = self._helper
        if helper is None or helper.ended is not None:
            return None  # the shell facts start it (``shell_facts``): until then, none
        found = helper.reports.get(pid)
        if found is None:
            try:
                answer = await self._ask(helper, b"report", str(int(pid)).encode())
            except SchemuxError:
                return None  # another pid namespace's shell, or the helper ended
            helper_pid, writes, reads = (int(value) for value in answer[:3])
            found = helper.reports.setdefault(
                pid, ShellReports(helper, pid, helper_pid, writes, reads)
            )
        return found

    async def _warm(self) -> None:
        """Start the helper; a failure shows when a program needs it."""
        with contextlib.suppress(SchemuxError):
            await self._running()

    def lost(self, directory: Path) -> str | None:
        """Why the helper that ran this program ended, if it did."""
        helper = self._helpers.get(directory.name)
        return None if helper is None else helper.ended

    async def close(self) -> None:
        """End the helper (it removes the remote runtime directory) and the local one."""
        if self._warming is not None:
            await self._warming  # a helper it starts is ended below
        helper, self._helper = self._helper, None
        if helper is not None:
            stdin = helper.process.stdin
            if stdin is not None:
                stdin.close()
            try:
                with anyio.fail_after(CLOSE_SECONDS):
                    await helper.process.wait()
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    helper.process.kill()
                await helper.process.wait()
            if helper.reader is not None:
                await helper.reader
        if self._root is not None:
            await asyncio.to_thread(shutil.rmtree, self._root, ignore_errors=True)
            self._root = None


async def _read_frame(process: asyncio.subprocess.Process) -> list[bytes] | None:
    """The next frame's fields; None at the end of the helper's output."""
    stdout = process.stdout
    assert stdout is not None
    try:
        head = await stdout.readexactly(4)
    except asyncio.IncompleteReadError as error:
        if not error.partial:
            return None
        raise
    (length,) = _LENGTH.unpack(head)
    return decode_fields(await stdout.readexactly(length))


async def _stderr_of(process: asyncio.subprocess.Process) -> str:
    """What the ended helper (or the way to its host) wrote to stderr, as one line."""
    if process.stderr is None:
        return "no reason given"
    with anyio.move_on_after(1.0):
        said = (await process.stderr.read(4096)).decode("utf-8", "replace")
        lines = [line.strip() for line in said.splitlines() if line.strip()]
        if lines:
            return shorten(" ".join(lines), 300)
    return f"exit status {process.returncode}"


async def _status_of(process: asyncio.subprocess.Process) -> int | None:
    """The ended helper's exit status (its end on stdout comes a moment before its
    exit), or None when it does not come within a second."""
    with anyio.move_on_after(1.0):
        return await process.wait()
    return None
