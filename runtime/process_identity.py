"""Which process runs in a pane, told apart from any later one: the native backend.

On Linux the tmux server is identified by the pidfd its socket gives (``SO_PEERPIDFD``),
checked against the pid its peer credentials name, the pid tmux reports itself and the
pid namespace: only when the server sees the same pids as schemux can a pane's pid be
opened here. A pane's process is then held by a pidfd of its own (``pidfd_open``): a
pidfd names one process for good, so a pid reused by another process after it ended is
never taken for it. Its generation is its pid with its start time since boot.

Elsewhere (Darwin would observe processes with kqueue) there is no backend yet, and
tracking is refused with the reason; it is never faked.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import select
import socket
import struct
import sys
import weakref
from dataclasses import dataclass, field

from schemux.references import ServerIdentity

SO_PEERPIDFD = 77  # Linux 6.5+; Python 3.11's socket module has no name for it
_SO_PEERCRED_SIZE = struct.calcsize("3i")


class TrackingUnavailable(Exception):
    """No native process identity backend for this server; the message says why."""


def _exited(fd: int) -> bool:
    """A pidfd polls readable once its process has ended (a non-blocking check)."""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return bool(poller.poll(0))


@dataclass(eq=False)
class ProcessHandle:
    """One process, held by a pidfd (closed when the last holder lets go of it)."""

    pid: int
    start_ticks: int
    fd: int
    _closer: weakref.finalize[[int], ProcessHandle] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._closer = weakref.finalize(self, os.close, self.fd)

    @property
    def generation(self) -> str:
        return f"linux:{self.pid}:{self.start_ticks}"

    def alive(self) -> bool:
        return not _exited(self.fd)

    def close(self) -> None:
        self._closer()  # idempotent: the pidfd is closed once


def _start_ticks(pid: int) -> int:
    """Field 22 of /proc/PID/stat: the process's start time in clock ticks since boot."""
    with open(f"/proc/{pid}/stat", "rb") as stat:
        fields = stat.read().rsplit(b")", 1)[1].split()
    return int(fields[19])


def open_process(pid: int) -> ProcessHandle:
    """The process ``pid`` names now; raises ProcessLookupError when there is none."""
    fd = os.pidfd_open(pid)
    try:
        ticks = _start_ticks(pid)
    except (FileNotFoundError, ProcessLookupError):
        os.close(fd)
        raise ProcessLookupError(pid) from None
    handle = ProcessHandle(pid, ticks, fd)
    # still running after its start time was read: that start time was this process's
    if not handle.alive():
        raise ProcessLookupError(pid)
    return handle


class ProcessIdentity:
    """The backend for the tmux servers of one schemux process.

    ``check_server`` proves, once per server instance, that the server is the process its
    socket leads to and shares schemux's pid namespace; the server's pidfd is kept to
    notice its end.
    """

    def __init__(self) -> None:
        self._servers: dict[ServerIdentity, ProcessHandle] = {}

    async def check_server(self, key: ServerIdentity) -> None:
        """Raise TrackingUnavailable unless pane pids of this server can be opened here."""
        known = self._servers.get(key)
        if known is not None and known.alive():
            return
        self._servers.pop(key, None)
        if sys.platform != "linux":
            raise TrackingUnavailable(
                f"no native process identity backend on {sys.platform}: schemux tracks "
                "processes with Linux pidfds only (Darwin kqueue observation is not built)"
            )
        handle = await _server_pidfd(key)
        try:
            _check_namespace(key, handle)
        except TrackingUnavailable:
            handle.close()
            raise
        self._servers[key] = handle

    def close(self) -> None:
        for handle in self._servers.values():
            handle.close()
        self._servers.clear()


def _check_namespace(key: ServerIdentity, handle: ProcessHandle) -> None:
    if handle.pid != key.pid:
        raise TrackingUnavailable(
            f"the tmux server reports pid {key.pid} but its socket's peer is pid "
            f"{handle.pid} here: it runs in another pid namespace, so its panes' pids "
            "cannot be opened by schemux"
        )
    ours, theirs = os.readlink("/proc/self/ns/pid"), os.readlink(f"/proc/{key.pid}/ns/pid")
    if ours != theirs:
        raise TrackingUnavailable(
            f"the tmux server runs in pid namespace {theirs}, schemux in {ours}; "
            "tracking needs matching pid namespaces"
        )


async def _server_pidfd(key: ServerIdentity) -> ProcessHandle:
    """The server's pidfd from ``SO_PEERPIDFD`` on a connection to its socket, with the
    pid ``SO_PEERCRED`` names and the start time of that process."""
    loop = asyncio.get_running_loop()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.setblocking(False)
        try:
            await loop.sock_connect(sock, key.socket_path)
        except OSError as error:
            raise TrackingUnavailable(
                f"cannot connect to the tmux server's socket {key.socket_path}: {error}"
            ) from None
        try:
            fd = sock.getsockopt(socket.SOL_SOCKET, SO_PEERPIDFD)
        except OSError as error:
            raise TrackingUnavailable(
                f"this kernel gives no pidfd for a socket peer (SO_PEERPIDFD: "
                f"{error.strerror}); tracking needs Linux 6.5 or newer"
            ) from None
        creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _SO_PEERCRED_SIZE)
    peer_pid = struct.unpack("3i", creds)[0]
    try:
        fd_pid = _pidfd_pid(fd)
        if fd_pid != peer_pid:
            raise TrackingUnavailable(
                f"the socket's pidfd names pid {fd_pid}, its credentials pid {peer_pid}"
            )
        return ProcessHandle(peer_pid, _start_ticks(peer_pid), fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.close(fd)
        raise


def _pidfd_pid(fd: int) -> int:
    """The pid a pidfd names in our namespace (its ``Pid:`` line; -1 once it ended)."""
    with open(f"/proc/self/fdinfo/{fd}") as info:
        for line in info:
            if line.startswith("Pid:"):
                return int(line.split()[1])
    raise TrackingUnavailable("this kernel does not show which pid a pidfd names")
