"""A host reached with OpenSSH (``schemux serve --ssh DEST``).

A tmux command is an argv (``tmux -L NAME ...``); here it goes through the system's ``ssh``
client, so the user's ``~/.ssh/config`` (or ``--ssh-config FILE``), agent, ``ProxyJump``,
known hosts and keys apply. One connection carries everything: a private master
(``ControlMaster``) whose socket lives in a private 0700 runtime directory of this
process; every tmux client (the control-mode engine's, a one-off command's) is an
``ssh -S SOCKET`` session multiplexed over it, which costs no new authentication.

ssh hands the remote user's shell one command string. That string is built from fixed
text and the argv's words, each quoted for a POSIX shell (``shlex.quote``), so no value
of a tool argument is ever interpreted by the remote shell: it reaches the remote tmux
as the one argument it was locally.

Failures are one line each, with ssh's own message: authentication refused, an unknown
host key (``StrictHostKeyChecking`` as configured; ``BatchMode`` so ssh never prompts),
a host that does not answer (``ConnectTimeout``), no tmux or too old a tmux there. A
connection that drops is noticed within about two seconds (``ServerAliveInterval``);
the call using it fails, and the next call starts a new master.
"""

from __future__ import annotations

import asyncio
import contextlib
import shlex
import shutil
import socket
import subprocess
import threading
from concurrent.futures import Executor
from pathlib import Path

from schemux.errors import ServerUnavailable, preview
from schemux.host_settings import SshTarget
from schemux.hosts import remote_side
from schemux.hosts.connecting import Connecting
from schemux.hosts.protocol import run_briefly
from schemux.system.runtime_identity import make_runtime_directory
from schemux.system.tethered import tethered

CONNECT_SECONDS = 10  # ssh's ConnectTimeout: TCP connect and the server's banner
START_SECONDS = 30.0  # the whole master start (authentication included), then it is killed
ALIVE_INTERVAL = 1  # seconds of silence before ssh asks the server whether it is there
PERSIST_SECONDS = 30  # an orphaned master (schemux killed) ends this long after its last client
_SOCKET = "ssh"  # the master's socket, in the runtime directory (short: sun_path holds 108)


class SshHost(remote_side.RemoteHost):
    """A host reached with OpenSSH over one multiplexed connection (see the module).

    Owned by whoever made it (a ``ServingState``'s services, a doctor's run), which closes it: every
    tmux server it reaches on that host shares its master. ``connect`` starts the master
    when it is not running, and checks the remote tmux then; ``close`` ends it and removes
    the runtime directory.
    """

    kind = "ssh"
    pids_here = False
    files_here = False

    def __init__(self, target: SshTarget) -> None:
        self.target = target
        self._lock = threading.Lock()
        self._directory: Path | None = None
        self._home: str | None = None
        self.tmux_version: str | None = None
        self._masters_started = 0
        self._connecting = Connecting(self.describe)

    @property
    def connection(self) -> int:
        """The masters started so far: each is a new connection."""
        return self._masters_started

    def describe(self) -> str:
        return f"host {preview(self.target.destination)}"

    def where(self) -> str:
        return f" on {self.describe()}"

    def label(self) -> str:
        return self.target.destination

    def tmux_binary(self) -> str:
        """The host's tmux is the one on its PATH."""
        return "tmux"

    @property
    def control_path(self) -> str:
        if self._directory is None:
            self._directory = make_runtime_directory()
        return str(self._directory / _SOCKET)

    def _options(self) -> list[str]:
        config = ["-F", self.target.config] if self.target.config is not None else []
        # over the user's config (options given here win): never prompt, no escape
        # character in the byte stream (a "~." would end the connection), no remote
        # command or forwarding of the config's, which a second connection would repeat
        return [
            *config,
            "-e", "none",
            "-o", "RemoteCommand=none",
            "-o", "ClearAllForwardings=yes",
            "-o", "BatchMode=yes",
            "-o", f"ConnectTimeout={CONNECT_SECONDS}",
            "-o", f"ServerAliveInterval={ALIVE_INTERVAL}",
            "-o", "ServerAliveCountMax=1",
            "-o", f"ControlPath={self.control_path}",
            "-T",
        ]  # fmt: skip

    def command(self, argv: list[str]) -> list[str]:
        """A tmux argv (``tmux FLAGS COMMAND...``) run on the host (``remote_side``)."""
        return self.exec_command(remote_side.tmux_words(argv))

    def client_command(self, argv: list[str]) -> list[str]:
        """A tmux client that lives as long as schemux (a control client): its ssh
        session gets SIGTERM when schemux dies (``schemux.system.tethered``), and the client on
        the host ends when the session does (``remote_side.drained``)."""
        return tethered(self.exec_command(remote_side.drained(argv)))

    def exec_command(self, argv: list[str]) -> list[str]:
        """``argv`` run on the host, over the master: ``exec`` and the words, each quoted
        for a POSIX shell (the remote shell only removes the quotes)."""
        remote = "exec " + " ".join(shlex.quote(word) for word in argv)
        return self._session(remote)

    def _session(self, remote: str) -> list[str]:
        # ControlMaster=no: a session never becomes a master itself (the user's config
        # may say auto); "--" so that no destination is read as an option
        destination = self.target.destination
        return ["ssh", *self._options(), "-o", "ControlMaster=no", "--", destination, remote]

    def lost(self, since: int | None = None, status: int | None = None) -> str | None:
        """Why the connection is gone (its master does not answer, since ``since``
        another master took its place, or a command over it ended with ssh's own failure),
        or None. A killed master ends its sessions before its socket stops answering, so
        ``status`` is what tells then."""
        if (
            self.reached(status or 0)
            and self._master_answers()
            and since in (None, self._masters_started)
        ):
            return None
        return f"the ssh connection to {self.describe()} was lost"

    def reached(self, status: int) -> bool:
        """ssh's own failures (no connection) are status 255."""
        return status != 255

    def _master_answers(self) -> bool:
        if self._directory is None:
            return False
        with socket.socket(socket.AF_UNIX) as probe:
            try:
                probe.connect(self.control_path)
            except OSError:
                return False
        return True

    async def connect(self, executor: Executor | None = None) -> None:
        """The master is up (started when it is not, and the remote tmux checked then,
        in ``executor``), or ServerUnavailable says why not, in one line."""
        if self.tmux_version is not None and self._master_answers():
            return
        ticket = self._connecting.ticket()
        await asyncio.get_running_loop().run_in_executor(executor, self._connect, ticket)

    def check_tmux(self) -> str:
        """At start: the connection made and the remote ``tmux -V``'s text; raises
        ServerUnavailable saying why not."""
        self._connect(self._connecting.ticket())
        assert self.tmux_version is not None
        return f"{self.tmux_version} on {self.describe()}"

    def _connect(self, ticket: int) -> None:
        """Connect, unless the host was closed since the connect was asked for
        (``schemux.hosts.connecting``): a connect left waiting for the lock while schemux
        closed the host would otherwise start a master, and make a runtime directory,
        nothing ends."""
        with self._lock:  # one start for every caller (of any event loop) at once
            self._connecting.refuse_if_closed(ticket)
            if self._master_answers():
                if self.tmux_version is not None:
                    return
            else:
                self.tmux_version = None
                self._start_master(ticket)
            self._probe(ticket)  # until it passes, each call checks the host's tmux again

    def _start_master(self, ticket: int) -> None:
        path = Path(self.control_path)
        path.unlink(missing_ok=True)  # a master killed outright leaves its socket
        argv = [
            "ssh", *self._options(),
            "-o", "ControlMaster=yes",
            "-o", f"ControlPersist={PERSIST_SECONDS}",
            "-N", "--", self.target.destination,
        ]  # fmt: skip
        try:
            # with ControlPersist, ssh forks the master off once authenticated and exits
            done = self._connecting.run(ticket, argv, START_SECONDS)
        except subprocess.TimeoutExpired:
            raise ServerUnavailable(
                f"ssh to {self.describe()} did not connect within {START_SECONDS:g} s",
                suggestion="check that the host is reachable: ssh "
                + shlex.join(self._destination_words()),
            ) from None
        except OSError as error:
            raise ServerUnavailable(f"ssh cannot be run: {error}") from None
        if done.returncode != 0 or not self._master_answers():
            said = remote_side.failure_text(done.stderr, done.returncode, "ssh")
            raise ServerUnavailable(
                f"ssh to {self.describe()} failed: {said}",
                suggestion="check that `ssh "
                + shlex.join(self._destination_words())
                + "` works without a prompt (a key the host accepts, in the agent or the "
                "config; the host's key in known_hosts)",
            )
        self._masters_started += 1

    def _destination_words(self) -> list[str]:
        config = ["-F", self.target.config] if self.target.config is not None else []
        return [*config, self.target.destination]

    def _probe(self, ticket: int) -> None:
        """The remote user's home and ``tmux -V``, in one session."""
        try:
            # a string for the user's shell: the host's PATH may have no sh
            probe = "printf '%s\\n' \"$HOME\"; exec tmux -V"
            done = self._connecting.run(ticket, self._session(probe), START_SECONDS)
        except subprocess.TimeoutExpired:
            raise ServerUnavailable(
                f"`tmux -V` on {self.describe()} did not answer within {START_SECONDS:g} s"
            ) from None
        if done.returncode == 255:
            raise ServerUnavailable(
                f"ssh to {self.describe()} failed: "
                + remote_side.failure_text(done.stderr, done.returncode, "ssh")
            )
        probed = remote_side.read_probe(
            done.stdout.splitlines(), done.stderr, done.returncode, self.describe(), "ssh"
        )
        self._home = probed.home
        self.tmux_version = probed.tmux_version

    def home(self) -> str:
        """The remote user's home directory (known once connected)."""
        return self._home or "/"

    def close(self) -> None:
        """End the master and remove the runtime directory (nothing stays)."""
        self._connecting.close()  # first: a connect under the lock is ended, one waiting void
        with self._lock:
            if self._directory is None:
                return
            if self._master_answers():
                with contextlib.suppress(OSError, subprocess.TimeoutExpired):
                    run_briefly(
                        ["ssh", *self._options(), "-O", "exit", "--", self.target.destination], 5
                    )
            shutil.rmtree(self._directory, ignore_errors=True)
            self._directory = None
            self._home = None
            self.tmux_version = None
