"""Which process runs in a pane, told apart from any later one: the native backend.

On Linux the tmux server is identified by a pidfd, bound to the server two ways:

- ``peer-pidfd`` (Linux 6.5+): the pidfd its socket gives (``SO_PEERPIDFD``), checked
  against the pid its peer credentials name.
- ``pidfd-open`` (Linux 5.3+): ``pidfd_open`` of the pid the server reports, once its
  socket's peer credentials (``SO_PEERCRED``) name the same pid. The pid's start time is
  read before and after the pidfd is opened (a pid reused in between is refused), and the
  server is asked for its identity again once the pidfd is held: a pidfd still alive then,
  for the pid the same server instance reports, can only be that server.

``auto`` (the default, ``SCHEMUX_TRACKING_BACKEND``) takes ``peer-pidfd`` where the
kernel has it, else ``pidfd-open``. Either way the server must see the same pids as
schemux (the same pid namespace) for a pane's pid to be opened here. A pane's process is
then held by a pidfd of its own (``pidfd_open``): a pidfd names one process for good, so a
pid reused by another process after it ended is never taken for it. Its generation is its
pid with its start time since boot.

Elsewhere (Darwin would observe processes with kqueue) there is no backend yet, and
tracking is refused with the reason; it is never faked.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import struct
import sys
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal

from schemux.config import ENV_TRACKING_BACKEND, TrackingSetting
from schemux.errors import TrackingUnavailable
from schemux.system.processes import pid_namespace, pidfd_exited, pidfd_pid, read_start_ticks
from schemux.tmux.references import ServerIdentity

SO_PEERPIDFD = 77  # Linux 6.5+; Python 3.11's socket module has no name for it
_SO_PEERCRED_SIZE = struct.calcsize("3i")

Backend = Literal["peer-pidfd", "pidfd-open"]

# asks the tmux server for its identity again (over schemux's own connection to it)
Confirm = Callable[[], Awaitable[ServerIdentity]]


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
        return not pidfd_exited(self.fd)

    def close(self) -> None:
        self._closer()  # idempotent: the pidfd is closed once


def open_process(pid: int) -> ProcessHandle:
    """The process ``pid`` names now; raises ProcessLookupError when there is none."""
    fd = os.pidfd_open(pid)
    try:
        ticks = read_start_ticks(pid)
    except (FileNotFoundError, ProcessLookupError):
        os.close(fd)
        raise ProcessLookupError(pid) from None
    handle = ProcessHandle(pid, ticks, fd)
    # still running after its start time was read: that start time was this process's
    if not handle.alive():
        raise ProcessLookupError(pid)
    return handle


def peer_pidfd_problem() -> str | None:
    """Why this kernel gives no pidfd for a socket's peer, or None when it does."""
    if sys.platform != "linux":
        return f"there are no pidfds on {sys.platform}"
    one, other = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    with one, other:
        try:
            os.close(one.getsockopt(socket.SOL_SOCKET, SO_PEERPIDFD))
        except OSError as error:
            return f"SO_PEERPIDFD: {error.strerror} (it needs Linux 6.5 or newer)"
    return None


def pidfd_open_problem() -> str | None:
    """Why this system cannot open a pidfd for a pid, or None when it can."""
    if sys.platform != "linux" or not hasattr(os, "pidfd_open"):
        return f"there is no pidfd_open on {sys.platform}"
    try:
        os.close(os.pidfd_open(os.getpid()))
    except OSError as error:
        return f"pidfd_open: {error.strerror} (it needs Linux 5.3 or newer)"
    return None


def choose_backend(setting: TrackingSetting) -> Backend:
    """The backend ``setting`` gives on this system; raises TrackingUnavailable saying
    why there is none."""
    if sys.platform != "linux":
        raise TrackingUnavailable(
            f"no native process identity backend on {sys.platform}: schemux tracks "
            "processes with Linux pidfds only (Darwin kqueue observation is not built)"
        )
    no_pidfd_open = pidfd_open_problem()
    if no_pidfd_open is not None:
        raise TrackingUnavailable(f"this kernel cannot open pidfds ({no_pidfd_open})")
    if setting == "pidfd-open":
        return "pidfd-open"
    no_peer_pidfd = peer_pidfd_problem()
    if no_peer_pidfd is None:
        return "peer-pidfd"
    if setting == "peer-pidfd":
        raise TrackingUnavailable(
            f"this kernel gives no pidfd for a socket peer ({no_peer_pidfd}), and "
            f"{ENV_TRACKING_BACKEND}=peer-pidfd forbids the pidfd-open backend; set it to "
            "auto or pidfd-open"
        )
    return "pidfd-open"


class ProcessIdentity:
    """The backend for the tmux servers of one schemux process.

    ``check_server`` proves, once per server instance, that the server is the process its
    socket leads to and shares schemux's pid namespace; the server's pidfd is kept to
    notice its end.
    """

    def __init__(self, setting: TrackingSetting = "auto") -> None:
        self.setting = setting
        self._servers: dict[ServerIdentity, ProcessHandle] = {}

    async def check_server(self, key: ServerIdentity, confirm: Confirm) -> None:
        """Raise TrackingUnavailable unless pane pids of this server can be opened here.

        ``confirm`` asks the server for its identity again (the ``pidfd-open`` backend
        does, once it holds the pidfd)."""
        known = self._servers.get(key)
        if known is not None and known.alive():
            return
        self._servers.pop(key, None)
        if choose_backend(self.setting) == "peer-pidfd":
            handle = await _server_pidfd(key)
        else:
            handle = await _server_pidfd_opened(key, confirm)
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


def _other_namespace(reported: int, peer: int) -> TrackingUnavailable:
    return TrackingUnavailable(
        f"the tmux server reports pid {reported} but its socket's peer is pid "
        f"{peer} here: it runs in another pid namespace, so its panes' pids "
        "cannot be opened by schemux"
    )


def _check_namespace(key: ServerIdentity, handle: ProcessHandle) -> None:
    if handle.pid != key.pid:
        raise _other_namespace(key.pid, handle.pid)
    ours, theirs = pid_namespace(), pid_namespace(key.pid)
    if ours != theirs:
        raise TrackingUnavailable(
            f"the tmux server runs in pid namespace {theirs}, schemux in {ours}; "
            "tracking needs matching pid namespaces"
        )


async def _connected(socket_path: str) -> socket.socket:
    """A connection to the server's socket (its peer is the process listening there)."""
    loop = asyncio.get_running_loop()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.setblocking(False)
    try:
        await loop.sock_connect(sock, socket_path)
    except OSError as error:
        sock.close()
        raise TrackingUnavailable(
            f"cannot connect to the tmux server's socket {socket_path}: {error}"
        ) from None
    except BaseException:
        sock.close()
        raise
    return sock


def _peer_pid(sock: socket.socket) -> int:
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _SO_PEERCRED_SIZE)
    pid: int = struct.unpack("3i", creds)[0]
    return pid


async def _server_pidfd(key: ServerIdentity) -> ProcessHandle:
    """The ``peer-pidfd`` backend: the server's pidfd from ``SO_PEERPIDFD`` on a
    connection to its socket, with the pid ``SO_PEERCRED`` names and the start time of
    that process."""
    with await _connected(key.socket_path) as sock:
        try:
            fd = sock.getsockopt(socket.SOL_SOCKET, SO_PEERPIDFD)
        except OSError as error:
            raise TrackingUnavailable(
                f"this kernel gives no pidfd for a socket peer (SO_PEERPIDFD: "
                f"{error.strerror}); tracking needs Linux 6.5 or newer"
            ) from None
        peer_pid = _peer_pid(sock)
    try:
        fd_pid = _pidfd_pid(fd)
        if fd_pid != peer_pid:
            raise TrackingUnavailable(
                f"the socket's pidfd names pid {fd_pid}, its credentials pid {peer_pid}"
            )
        return ProcessHandle(peer_pid, read_start_ticks(peer_pid), fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.close(fd)
        raise


async def _server_pidfd_opened(key: ServerIdentity, confirm: Confirm) -> ProcessHandle:
    """The ``pidfd-open`` backend: ``pidfd_open`` of the pid the server reports, which
    must be the pid its socket's peer credentials name; held only once the same server
    instance reports that pid again while the pidfd's process still runs."""
    with await _connected(key.socket_path) as sock:
        peer_pid = _peer_pid(sock)
    if peer_pid != key.pid:
        raise _other_namespace(key.pid, peer_pid)
    handle = open_server_process(key.pid)
    try:
        again = await confirm()
        if again != key or not handle.alive():
            raise TrackingUnavailable(
                f"the tmux server on {key.socket_path} (pid {key.pid}) ended or was "
                "replaced while its identity was checked; take a new reference from "
                "tmux_snapshot"
            )
    except BaseException:
        handle.close()
        raise
    return handle


def open_server_process(pid: int) -> ProcessHandle:
    """A pidfd for ``pid``, refused if the pid named another process when it was opened:
    its start time is read before and after, and must not change."""
    try:
        before = read_start_ticks(pid)
        fd = os.pidfd_open(pid)
    except (FileNotFoundError, ProcessLookupError):
        raise TrackingUnavailable(f"the tmux server (pid {pid}) has ended") from None
    try:
        try:
            after = read_start_ticks(pid)
        except (FileNotFoundError, ProcessLookupError):
            raise TrackingUnavailable(f"the tmux server (pid {pid}) has ended") from None
        if after != before:
            raise TrackingUnavailable(
                f"pid {pid} changed hands while it was opened (its start time went from "
                f"{before} to {after} clock ticks after boot): the tmux server ended and "
                "another process took its pid"
            )
        handle = ProcessHandle(pid, after, fd)
    except BaseException:
        os.close(fd)
        raise
    if not handle.alive():
        handle.close()
        raise TrackingUnavailable(f"the tmux server (pid {pid}) has ended")
    return handle


def _pidfd_pid(fd: int) -> int:
    pid = pidfd_pid(fd)
    if pid is None:
        raise TrackingUnavailable("this kernel does not show which pid a pidfd names")
    return pid
