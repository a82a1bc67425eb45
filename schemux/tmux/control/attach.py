"""A tmux control client that tells the server it is one only in its last message.

Run as a program with the standard library only: schemux runs this file's source with
``python3 -I -S -c`` on this machine and on a remote host alike (``schemux.tmux.control.client``)::

    python3 -c SOURCE HEADER SOCKET_PATH COUNT TMUX_ARGV...

It is the control client ``TMUX_ARGV`` (``tmux ... -u -C attach-session ...``) would be,
for the last ``COUNT`` words of it (the command), on the server at ``SOCKET_PATH``: its
stdin and stdout go to the server, which reads commands from the one and writes to the
other; at the end it prints ``%exit`` (with tmux's reason) and exits with tmux's status.

Why not ``tmux -C``: tmux 3.3a to 3.6b crash (a NULL ``control_state`` in
``control_write``) when a notification (a session made or closed, a pane killed, a
client detached) reaches a control client between the message that makes it one
(``MSG_IDENTIFY_LONGFLAGS``) and the end of its identification (``MSG_IDENTIFY_DONE``).
``tmux -C`` sends its flags first and its two file descriptors in writes of their own,
and the server handles each write in a turn of its event loop, so a notification can
come between. This client sends the descriptors first, then the flags, the end of its
identification and its command in one write, which the server reads and handles in one
turn: nothing can come between. tmux 3.7 checks for the case itself.

``HEADER`` is the message header of the server's version: ``flags`` (tmux 3.3 to 3.5:
a 16-bit length and a flags word) or ``mark`` (tmux 3.6: a 32-bit length whose top bit
marks a passed descriptor).

Run as ``python3 -c SOURCE carry``, it is the carrier (``schemux.tmux.control.carrier``):
many such clients in one process, each given one end of a socket pair as its stdin and
stdout, their streams framed over the carrier's own stdin and stdout (``FRAME``). It
reads every client's output as long as tmux writes it (tmux lets a control client go
only once its output is read), and ends, its clients with it, when its stdin does.
"""

from __future__ import annotations

# _socket and _signal, not socket and signal: every control client schemux starts runs
# this, and those wrappers' imports (enum, selectors) cost a third of its start
import _signal  # type: ignore[import-not-found]  # (no stubs; signal wraps it)
import _socket
import errno
import os
import select
import struct
import sys

PROTOCOL_VERSION = 8
HEADER_SIZE = 16
MAX_MESSAGE = 16384  # MAX_IMSGSIZE, header included
FD_MARK = 0x80000000

CLIENT_CONTROL = 0x2000
CLIENT_UTF8 = 0x10000

MSG_VERSION = 12
MSG_IDENTIFY_TERM = 101
MSG_IDENTIFY_TTYNAME = 102
MSG_IDENTIFY_STDIN = 104
MSG_IDENTIFY_ENVIRON = 105
MSG_IDENTIFY_DONE = 106
MSG_IDENTIFY_CLIENTPID = 107
MSG_IDENTIFY_CWD = 108
MSG_IDENTIFY_FEATURES = 109
MSG_IDENTIFY_STDOUT = 110
MSG_IDENTIFY_LONGFLAGS = 111
MSG_COMMAND = 200
MSG_DETACH = 201
MSG_DETACHKILL = 202
MSG_EXIT = 203
MSG_EXITED = 204
MSG_EXITING = 205
MSG_SHUTDOWN = 210
MSG_READ_OPEN = 300
MSG_READ_DONE = 302
MSG_WRITE_OPEN = 303
MSG_WRITE_READY = 305


class Refused(Exception):
    """What ``tmux -C`` would print to stderr before exiting with status 1."""


def message(
    header: str, kind: int, data: bytes = b"", with_fd: bool = False, pid: int = 0
) -> bytes:
    """One message of tmux's protocol (an OpenBSD imsg) in ``header``'s format."""
    length = HEADER_SIZE + len(data)
    if header == "flags":
        head = struct.pack("=IHHII", kind, length, int(with_fd), PROTOCOL_VERSION, pid)
    elif header == "mark":
        marked = length | (FD_MARK if with_fd else 0)
        head = struct.pack("=IIII", kind, marked, PROTOCOL_VERSION, pid)
    else:
        raise Refused("unknown message header " + repr(header))
    return head + data


def string(text: bytes) -> bytes:
    return text + b"\0"


def identity(header: str, environ: dict[bytes, bytes], cwd: bytes, pid: int) -> bytes:
    """The messages before the descriptors: all but the flags and the end."""
    sent = [
        message(header, MSG_IDENTIFY_TERM, string(environ.get(b"TERM", b"")), pid=pid),
        message(header, MSG_IDENTIFY_FEATURES, struct.pack("=i", 0), pid=pid),
        message(header, MSG_IDENTIFY_TTYNAME, string(b""), pid=pid),
        message(header, MSG_IDENTIFY_CWD, string(cwd), pid=pid),
        message(header, MSG_IDENTIFY_CLIENTPID, struct.pack("=i", pid), pid=pid),
    ]
    for name, value in sorted(environ.items()):
        entry = string(name + b"=" + value)
        if HEADER_SIZE + len(entry) <= MAX_MESSAGE:  # as tmux does, a longer one is left out
            sent.append(message(header, MSG_IDENTIFY_ENVIRON, entry, pid=pid))
    return b"".join(sent)


def command(header: str, words: list[bytes], pid: int) -> bytes:
    """The flags that make this a control client, the end of its identification and
    its command: sent in one write."""
    packed = b"".join(string(word) for word in words)
    data = struct.pack("=i", len(words)) + packed
    if HEADER_SIZE + len(data) > MAX_MESSAGE:
        raise Refused("command too long")
    flags = struct.pack("=Q", CLIENT_CONTROL | CLIENT_UTF8)
    return (
        message(header, MSG_IDENTIFY_LONGFLAGS, flags, pid=pid)
        + message(header, MSG_IDENTIFY_DONE, pid=pid)
        + message(header, MSG_COMMAND, data, pid=pid)
    )


def parse(header: str, buffer: bytes) -> tuple[list[tuple[int, bytes]], bytes]:
    """The whole messages at the start of ``buffer``: ([(kind, data)], the rest)."""
    found = []
    while len(buffer) >= HEADER_SIZE:
        if header == "flags":
            kind, length = struct.unpack_from("=IH", buffer)
        else:
            kind, length = struct.unpack_from("=II", buffer)
            length &= ~FD_MARK
        if length < HEADER_SIZE:
            raise Refused(f"tmux sent a message {length} bytes long")
        if len(buffer) < length:
            break
        found.append((kind, bytes(buffer[HEADER_SIZE:length])))
        buffer = buffer[length:]
    return found, buffer


class Client:
    """The conversation after the command is sent, as ``tmux -C`` holds it before any
    ``MSG_READY`` (tmux sends a control client none)."""

    def __init__(self, header: str, sock: _socket.socket, pid: int) -> None:
        self.header = header
        self.sock = sock
        self.pid = pid
        self.status = 0
        self.reason: bytes | None = None
        self.done = False
        self.buffer = b""

    def send(self, kind: int, data: bytes = b"") -> None:
        self.sock.sendall(message(self.header, kind, data, pid=self.pid))

    def handle(self, kind: int, data: bytes) -> None:
        if kind in (MSG_EXIT, MSG_SHUTDOWN):
            if len(data) >= 4:
                self.status = struct.unpack_from("=i", data)[0]
            if len(data) > 4:
                self.reason = data[4:].split(b"\0", 1)[0]
            self.done = True
        elif kind in (MSG_DETACH, MSG_DETACHKILL):
            self.send(MSG_EXITING)
        elif kind == MSG_EXITED:
            self.done = True
        elif kind == MSG_VERSION:
            raise Refused(f"protocol version mismatch (client {PROTOCOL_VERSION})")
        elif kind == MSG_READ_OPEN:  # a control client has no streams to give
            stream = struct.unpack_from("=i", data)[0]
            self.send(MSG_READ_DONE, struct.pack("=ii", stream, errno.EBADF))
        elif kind == MSG_WRITE_OPEN:
            stream = struct.unpack_from("=i", data)[0]
            self.send(MSG_WRITE_READY, struct.pack("=ii", stream, errno.EBADF))

    def feed(self, chunk: bytes) -> None:
        """Handle the messages ``chunk`` completes (an empty one: the server is gone)."""
        if not chunk:
            self.status = 1
            self.reason = b"server exited unexpectedly"
            self.done = True
            return
        found, self.buffer = parse(self.header, self.buffer + chunk)
        for kind, data in found:
            self.handle(kind, data)
            if self.done:
                return

    def run(self) -> None:
        while not self.done:
            self.feed(self.sock.recv(65536))


def send_fd(sock: _socket.socket, header: str, kind: int, fd: int, pid: int) -> None:
    passed = [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, struct.pack("=i", fd))]
    sock.sendmsg([message(header, kind, with_fd=True, pid=pid)], passed)


def connect(header: str, path: str, words: list[bytes], stdin: int, stdout: int) -> _socket.socket:
    """A client of the server at ``path`` that runs ``words``, with descriptors ``stdin``
    and ``stdout`` as its own (the server reads commands from the one and writes to the
    other), its command sent: the socket of its messages."""
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.connect(path)
    except OSError as error:
        sock.close()
        if error.errno in (errno.ECONNREFUSED, errno.ENOENT):
            raise Refused("no server running on " + path) from None
        raise Refused(f"error connecting to {path} ({error.strerror})") from None
    pid = os.getpid()
    try:
        cwd = os.getcwdb()
    except OSError:
        cwd = os.environb.get(b"HOME", b"/")
    sock.sendall(identity(header, dict(os.environb), cwd, pid))
    send_fd(sock, header, MSG_IDENTIFY_STDIN, stdin, pid)
    send_fd(sock, header, MSG_IDENTIFY_STDOUT, stdout, pid)
    sock.sendall(command(header, words, pid))
    return sock


def exit_line(reason: bytes | None) -> bytes:
    """What ``tmux -C`` prints last, with tmux's reason."""
    return b"%exit" + (b" " + reason if reason else b"") + b"\n"


def attach(header: str, path: str, words: list[str]) -> int:
    """Run the client; return its exit status."""
    sock = connect(header, path, [os.fsencode(word) for word in words], 0, 1)
    client = Client(header, sock, os.getpid())
    try:
        client.run()
    except OSError:
        client.status, client.reason = 1, b"server exited unexpectedly"
    # nobody may read any more; not contextlib.suppress: a slow import
    try:  # noqa: SIM105
        os.write(1, exit_line(client.reason))
    except OSError:
        pass
    return client.status


# The carrier: frames each way, a header (kind, channel, payload's length), the payload.
FRAME = struct.Struct("!BII")
# from schemux: a client opened (the header, the socket path and the command's words,
# each ended by a NUL), bytes for its stdin, its stdin's end, its end at once
OPEN, DATA, EOF, KILL = 1, 2, 3, 4
# to schemux: the carrier runs (channel 0, first), a client's output (DATA), its end
# (its status "=i", then tmux's reason)
HELLO, EXIT = 5, 6
KILLED = -9  # a client schemux ended at once, as a process killed by SIGKILL reports


def frame(kind: int, channel: int, payload: bytes = b"") -> bytes:
    return FRAME.pack(kind, channel, len(payload)) + payload


def frames(buffer: bytes) -> tuple[list[tuple[int, int, bytes]], bytes]:
    """The whole frames at the start of ``buffer``: ([(kind, channel, payload)], the rest)."""
    found = []
    while len(buffer) >= FRAME.size:
        kind, channel, length = FRAME.unpack_from(buffer)
        end = FRAME.size + length
        if len(buffer) < end:
            break
        found.append((kind, channel, bytes(buffer[FRAME.size : end])))
        buffer = buffer[end:]
    return found, buffer


class Carried:
    """One control client of the carrier: the socket of its messages, and its end of the
    socket pair the server has as the client's stdin and stdout."""

    def __init__(self, number: int, payload: bytes) -> None:
        words = payload.split(b"\0")[:-1]
        if len(words) < 3:
            raise Refused("an open without a command")
        header, path = words[0].decode(), os.fsdecode(words[1])
        self.number = number
        self.data, theirs = _socket.socketpair(_socket.AF_UNIX, _socket.SOCK_STREAM)
        try:
            sock = connect(header, path, words[2:], theirs.fileno(), theirs.fileno())
        except BaseException:
            self.data.close()
            raise
        finally:
            theirs.close()
        self.data.setblocking(False)
        sock.setblocking(False)  # an event of a closed descriptor's may come to a new one's
        self.client = Client(header, sock, os.getpid())
        self.pending = b""  # for its stdin, not yet taken by the server
        self.input_ends = False  # its stdin ends once pending is written


class Carrier:
    """Control clients of any server of this host in one process, each a channel of
    frames over the carrier's stdin and stdout (see the module): what a client's
    relay did (read its output once nobody wants it, so that tmux lets it go) is the
    carrier's too, and a carrier that ends (its stdin's end, a signal) ends them all."""

    def __init__(self) -> None:
        self.poll = select.poll()
        self.by_fd: dict[int, Carried] = {}
        self.channels: dict[int, Carried] = {}

    def send(self, kind: int, channel: int, payload: bytes = b"") -> None:
        """Write a frame to schemux (waiting while its pipe is full)."""
        out = memoryview(frame(kind, channel, payload))
        while out:
            out = out[os.write(1, out) :]

    def run(self) -> int:
        self.send(HELLO, 0)
        self.poll.register(0, select.POLLIN)
        buffer = b""
        while True:
            for fd, events in self.poll.poll():
                if fd == 0:
                    chunk = os.read(0, 65536)
                    if not chunk:
                        return 0  # schemux is gone: every client ends with this process
                    found, buffer = frames(buffer + chunk)
                    for kind, channel, payload in found:
                        self.order(kind, channel, payload)
                    continue
                carried = self.by_fd.get(fd)
                if carried is None:
                    continue
                if fd == carried.data.fileno():
                    self.on_data(carried, events)
                else:
                    self.on_messages(carried)

    def order(self, kind: int, channel: int, payload: bytes) -> None:
        if kind == OPEN:
            try:
                carried = Carried(channel, payload)
            except (Refused, OSError) as refused:
                self.send(EXIT, channel, struct.pack("=i", 1) + str(refused).encode())
                return
            self.channels[channel] = carried
            for fd in (carried.data.fileno(), carried.client.sock.fileno()):
                self.by_fd[fd] = carried
                self.poll.register(fd, select.POLLIN)
            return
        found = self.channels.get(channel)
        if found is None:
            return  # ended already
        carried = found
        if kind == DATA:
            carried.pending += payload
            self.flush(carried)
        elif kind == EOF:
            carried.input_ends = True
            self.flush(carried)
        elif kind == KILL:
            self.end(carried, KILLED, None)

    def flush(self, carried: Carried) -> None:
        try:
            while carried.pending:
                carried.pending = carried.pending[carried.data.send(carried.pending) :]
        except BlockingIOError:
            pass
        except OSError:
            carried.pending = b""  # the server let the client go: its end follows
        if carried.pending:
            self.poll.modify(carried.data.fileno(), select.POLLIN | select.POLLOUT)
            return
        self.poll.modify(carried.data.fileno(), select.POLLIN)
        if carried.input_ends:
            try:  # noqa: SIM105  (contextlib: a slow import)
                carried.data.shutdown(_socket.SHUT_WR)
            except OSError:
                pass

    def on_data(self, carried: Carried, events: int) -> None:
        if events & select.POLLOUT:
            self.flush(carried)
        if events & ~select.POLLOUT:
            try:
                chunk = carried.data.recv(65536)
            except BlockingIOError:
                return
            except OSError:
                chunk = b""
            if chunk:
                self.send(DATA, carried.number, chunk)
            else:  # the server closed its ends: the client's end comes by its messages
                self.poll.unregister(carried.data.fileno())

    def on_messages(self, carried: Carried) -> None:
        client = carried.client
        try:
            client.feed(client.sock.recv(65536))
        except BlockingIOError:
            return
        except (Refused, OSError):
            client.status, client.reason, client.done = 1, b"server exited unexpectedly", True
        if client.done:
            self.drain(carried)
            self.send(DATA, carried.number, exit_line(client.reason))
            self.end(carried, client.status, client.reason)

    def drain(self, carried: Carried) -> None:
        """Pass on what the server wrote before it said the client's end."""
        while True:
            try:
                chunk = carried.data.recv(65536)
            except OSError:
                return
            if not chunk:
                return
            self.send(DATA, carried.number, chunk)

    def end(self, carried: Carried, status: int, reason: bytes | None) -> None:
        del self.channels[carried.number]
        for sock in (carried.data, carried.client.sock):
            self.by_fd.pop(sock.fileno(), None)
            try:  # noqa: SIM105
                self.poll.unregister(sock.fileno())
            except KeyError:
                pass
            sock.close()
        self.send(EXIT, carried.number, struct.pack("=i", status) + (reason or b""))


def main(argv: list[str]) -> int:
    # as tmux's client: a terminal's ^C, ^\ and job control reach schemux (whose orderly
    # end still needs its clients) and not them; SIGTERM and SIGHUP end it
    for ignored in (
        _signal.SIGINT,
        _signal.SIGQUIT,
        _signal.SIGTSTP,
        _signal.SIGTTIN,
        _signal.SIGTTOU,
    ):
        _signal.signal(ignored, _signal.SIG_IGN)
    if argv == ["carry"]:
        try:
            return Carrier().run()
        except OSError:  # schemux's end of the pipes is gone
            return 0
    header, path, count = argv[0], argv[1], int(argv[2])
    words = argv[3:][len(argv) - 3 - count :]
    try:
        return attach(header, path, words)
    except Refused as refused:
        sys.stderr.write(str(refused) + "\n")
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
