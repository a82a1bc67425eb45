"""The gate: the process a program's pane runs, holding the program until schemux is ready,
reporting its end, and ending everything it left behind.

Run as ``python -I -S program_gate.py DIRECTORY CWD STDIN STDERR GRACE N ENV*N ARGV...``
(stdlib only: no site, no environment variables of Python's, no import of schemux). It is
the fallback of the Perl gate (``program_gate.pl``, the same protocol, started five times
faster), where there is no ``perl`` or the architecture's system call numbers are not
known (``schemux.hosts.programs.gate``).

Its argv holds nothing secret; what makes its end marker believable is a table of random
tokens, one per report (exit status 0-255, and "x" run or "n" not run), that it reads from
a one-shot FIFO in the program's private directory before the program starts and keeps in
its own memory only (the gate is not dumpable: no ptrace, no /proc/PID/mem for the same
user). The marker carries the token of its report only, so a copy of one marker (a
descendant can read the copy's FIFO) tells nothing of another report's token. The program
cannot read the table from argv, the environment, the FIFO (gone, and empty, by then),
tmux, or a marker it copies.

It is a child subreaper (``PR_SET_CHILD_SUBREAPER``): every descendant whose parent ends,
also one that ``setsid``s and forks twice, becomes its child rather than init's, so the
whole tree stays reachable from it. Signals (blocked, taken with ``sigwaitinfo``):
SIGCHLD reaps; SIGUSR2 stops the program (SIGTERM to every descendant, SIGKILL to what is
left after GRACE seconds); SIGUSR1 releases the gate after its marker; SIGHUP and SIGTERM
(the pane going away) end the tree at once. On its way out the gate always kills and reaps
every descendant, so nothing it started outlives it.
"""

from __future__ import annotations

import errno
import os
import signal
import sys
import time
from types import MappingProxyType
from typing import Any

PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36
MARKER = "\x1b]7777;schemux-end;{status};{flag};{token}\x07"
TOKEN_BYTES = 8
TABLE_BYTES = 256 * 2 * TOKEN_BYTES  # 4096, PIPE_BUF: schemux writes it in one atomic write
WATCHED = frozenset({signal.SIGCHLD, signal.SIGHUP, signal.SIGTERM, signal.SIGUSR1, signal.SIGUSR2})
SETTLE_SECONDS = 5.0  # at most this long killing a tree that keeps forking
# rt_sigaction's system call number by os.uname().machine: x86_64's own table and
# asm-generic's (the last of schemux.hosts.programs.gate's PERL_SYSCALLS)
RT_SIGACTION = MappingProxyType({"x86_64": 13, "aarch64": 134, "riscv64": 134})
SIGRTMAX = 64  # Linux's last signal on each of those


def become_subreaper() -> Any:
    """A child subreaper, and not dumpable: a process of the same user (the program) can
    then neither ptrace the gate nor read its memory, whatever Yama's ptrace_scope. The C
    library, for ``default_dispositions``."""
    import ctypes  # only here: it is the gate's only import beyond os, signal, sys, time

    libc = ctypes.CDLL(None, use_errno=True)
    for option in (PR_SET_CHILD_SUBREAPER, PR_SET_DUMPABLE):
        if libc.prctl(option, 1 if option == PR_SET_CHILD_SUBREAPER else 0, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), f"prctl({option})")
    return libc


def default_dispositions(libc: Any) -> None:
    """Every catchable signal at its default disposition, as a fresh shell gives a program:
    the gate's C-c, what Python ignores for itself, and whatever the gate's own start
    ignored (nohup: SIGHUP; signals above 31, glibc's own 32 and 33 among them, which
    glibc's sigaction refuses: set here by the system call itself, where its number is
    known)."""
    for signum in signal.valid_signals() - {signal.SIGKILL, signal.SIGSTOP}:
        signal.signal(signum, signal.SIG_DFL)
    number = RT_SIGACTION.get(os.uname().machine)
    if number is None:
        return
    default = bytes(32)  # SIG_DFL, no flags, no mask: zeros in every layout of the struct
    for each in range(1, SIGRTMAX + 1):
        if each not in (signal.SIGKILL, signal.SIGSTOP):
            libc.syscall(number, each, default, None, 8)


def token_index(status: int, flag: str) -> int:
    """Where the token of a report is in the table (``hosts.programs.gate`` reads it alike)."""
    return 2 * status + (1 if flag == "n" else 0)


def read_table(directory: str) -> bytes:
    """The tokens schemux writes once the output copy is in place; the FIFO goes at once."""
    path = os.path.join(directory, "secret")
    # not blocking to open (without a writer, schemux has given up: the read sees the
    # end), blocking to read (until schemux writes, or closes its end)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    os.set_blocking(fd, True)
    table = b""
    try:
        while len(table) < TABLE_BYTES:
            got = os.read(fd, TABLE_BYTES - len(table))
            if not got:
                break
            table += got
    finally:
        os.close(fd)
        os.unlink(path)
    return table


def descendants(root: int) -> list[int]:
    """Every process below ``root``, from each thread's ``children`` list."""
    found: list[int] = []
    stack = [root]
    while stack:
        pid = stack.pop()
        try:
            threads = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for thread in threads:
            try:
                with open(f"/proc/{pid}/task/{thread}/children", "rb") as children:
                    kids = [int(kid) for kid in children.read().split()]
            except OSError:
                continue
            found.extend(kids)
            stack.extend(kids)
    return found


def signal_all(pids: list[int], signum: int) -> None:
    for pid in pids:
        try:  # noqa: SIM105 (the gate imports no more than it needs: it starts each program)
            os.kill(pid, signum)
        except ProcessLookupError:
            pass


def exit_code(wait_status: int) -> int:
    """As a shell reports it: the exit status, or 128+N for signal N."""
    code = os.waitstatus_to_exitcode(wait_status)
    return 128 - code if code < 0 else code


class Gate:
    def __init__(self, child: int, grace: float, table: bytes) -> None:
        self.child = child
        self.grace = grace
        self.table = table
        self.status: int | None = None
        self.reported = False
        self.kill_at: float | None = None  # while stopping: when SIGKILL follows SIGTERM

    def reap(self) -> None:
        while True:
            try:
                pid, wait_status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid == self.child:
                self.status = exit_code(wait_status)

    def report(self, flag: str) -> None:
        if self.status is None or self.reported:
            return
        self.reported = True
        # this report's token only: a descendant that reads this marker off the copy's
        # FIFO learns nothing of the token of any other report
        at = token_index(self.status, flag) * TOKEN_BYTES
        token = self.table[at : at + TOKEN_BYTES].hex()
        marker = MARKER.format(status=self.status, flag=flag, token=token)
        try:  # noqa: SIM105
            os.write(1, marker.encode())
        except OSError:  # the terminal is gone: schemux sees the pane go instead
            pass

    def run(self, flag: str) -> None:
        """Until released or the pane goes: report the end, carry out a stop."""
        while True:
            timeout = None if self.kill_at is None else max(0.0, self.kill_at - time.monotonic())
            info = (
                signal.sigwaitinfo(WATCHED)
                if timeout is None
                else signal.sigtimedwait(WATCHED, timeout)
            )
            signum = None if info is None else info.si_signo
            if signum == signal.SIGCHLD:
                self.reap()
            elif signum == signal.SIGUSR2 and self.kill_at is None:
                signal_all(descendants(os.getpid()), signal.SIGTERM)
                self.kill_at = time.monotonic() + self.grace
            elif signum in (signal.SIGUSR1, signal.SIGHUP, signal.SIGTERM):
                return
            if self.kill_at is not None and (signum is None or not descendants(os.getpid())):
                # the grace is over, or nothing is left: kill whatever remains
                signal_all(descendants(os.getpid()), signal.SIGKILL)
                self.kill_at = None
                self.reap()
            self.report(flag)

    def end_tree(self) -> None:
        """Kill and reap every descendant, until none is left (or a fork bomb outlasts
        ``SETTLE_SECONDS``)."""
        deadline = time.monotonic() + SETTLE_SECONDS
        while time.monotonic() < deadline:
            self.reap()
            found = descendants(os.getpid())
            if not found:
                return
            signal_all(found, signal.SIGKILL)
            signal.sigtimedwait({signal.SIGCHLD}, 0.01)


def start_child(
    argv: list[str], cwd: str, stdin_path: str, stderr_path: str, environment: dict[str, str],
    mask: set[int | signal.Signals], libc: Any,
) -> tuple[int, bool]:  # fmt: skip
    """Fork and exec the program; its pid, and whether it could not be run (the child
    says so on a close-on-exec pipe, after writing the reason where its stderr goes)."""
    failed_r, failed_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 125
        try:
            os.close(failed_r)
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
            default_dispositions(libc)
            # opened, their names go: no other process can open them from now on
            if stdin_path:
                os.dup2(os.open(stdin_path, os.O_RDONLY), 0)
                os.unlink(stdin_path)
            if stderr_path:
                flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
                os.dup2(os.open(stderr_path, flags, 0o600), 2)
                os.unlink(stderr_path)
            code = 126
            os.chdir(cwd)
            os.execvpe(argv[0], argv, environment)
        except OSError as error:
            missing = error.errno == errno.ENOENT
            code = 127 if missing else 126
            reason = "not found" if missing and "/" not in argv[0] else error.strerror
            message = f"{argv[0]}: {reason}\n".encode("utf-8", "surrogateescape")
            try:
                os.write(2, message)
                os.write(failed_w, b"n")
            except OSError:
                pass
        finally:
            os._exit(code)
    os.close(failed_w)
    failed = os.read(failed_r, 1) == b"n"
    os.close(failed_r)
    return pid, failed


def main(args: list[str]) -> int:
    directory, cwd, stdin_path, stderr_path, grace, count = args[:6]
    environment_count = int(count)
    assignments = args[6 : 6 + environment_count]
    argv = args[6 + environment_count :]
    # the terminal's C-c is for the program: the gate (in the same process group) stays
    for signum in (signal.SIGINT, signal.SIGQUIT):
        signal.signal(signum, signal.SIG_IGN)
    # an ignored signal is discarded, blocked or not, so never waited for: the gate's
    # start may have ignored SIGHUP (nohup) or others
    for signum in WATCHED:
        signal.signal(signum, signal.SIG_DFL)
    # schemux's signals wait (blocked) until the program runs: a stop before then is
    # carried out as soon as there is something to stop
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, WATCHED)
    libc = become_subreaper()
    table = read_table(directory)
    if len(table) != TABLE_BYTES:  # schemux gave this program up before it started
        return 125
    environment = dict(os.environ)
    for assignment in assignments:
        key, _, value = assignment.partition("=")
        environment[key] = value
    try:  # noqa: SIM105
        os.chdir(cwd)  # so that tmux shows the program's directory as the pane's
    except OSError:
        pass
    child, failed = start_child(argv, cwd, stdin_path, stderr_path, environment, mask, libc)
    gate = Gate(child, float(grace), table)
    gate.reap()
    gate.report("n" if failed else "x")
    try:
        gate.run("n" if failed else "x")
    finally:
        gate.end_tree()
    return gate.status if gate.status is not None else 125


if __name__ == "__main__":
    code = main(sys.argv[1:])
    os._exit(code)  # nothing to finalize: skip the interpreter's shutdown
