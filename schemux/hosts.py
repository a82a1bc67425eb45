"""Where the tmux server runs: this machine, or a host reached with OpenSSH.

A tmux command is an argv (``tmux -L NAME ...``). On this machine it is run as it is. On
a remote host (``schemux serve --ssh DEST``) it goes through the system's ``ssh`` client,
so the user's ``~/.ssh/config`` (or ``--ssh-config FILE``), agent, ``ProxyJump``, known
hosts and keys apply. One connection carries everything: a private master
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
import os
import shlex
import shutil
import socket
import subprocess
import threading
from pathlib import Path

from schemux.agent_session import home_directory, until_shell_ready
from schemux.config import SshTarget
from schemux.errors import ServerUnavailable, TmuxUnavailable, preview, shorten
from schemux.tethered import tethered
from schemux.tmux_version import MINIMUM_VERSION, parse_version

CONNECT_SECONDS = 10  # ssh's ConnectTimeout: TCP connect and the server's banner
START_SECONDS = 30.0  # the whole master start (authentication included), then it is killed
ALIVE_INTERVAL = 1  # seconds of silence before ssh asks the server whether it is there
PERSIST_SECONDS = 30  # an orphaned master (schemux killed) ends this long after its last client
SHELL_READY_SECONDS = 5.0
# Runs on the remote host around a lasting tmux client (its argv the arguments): its
# output is copied to the session and, once the session is gone, read and dropped, so
# that tmux, which lets no control client go while it holds unwritten output, lets it go
# when its input (the session's) ends
_DRAINED = '"$@" | { cat; cat >/dev/null; }'
_SOCKET = "ssh"  # the master's socket, in the runtime directory (short: sun_path holds 108)

# Runs on the remote host (fixed text; the pid is its one argument): waits, at most 5 s,
# until the agent's new login shell holds its terminal for 0.1 s, as
# ``agent_session.until_shell_ready`` does locally from /proc.
_SHELL_READY_SCRIPT = r"""
pid=$1
tmux=$(command -v tmux) && tmux=$(readlink -f "$tmux")
steady=0
count=0
while [ "$count" -lt 250 ]; do
  exe=$(readlink "/proc/$pid/exe" 2>/dev/null) || exit 0
  stat=$(cat "/proc/$pid/stat" 2>/dev/null) || exit 0
  set -- ${stat##*) }
  if [ "$exe" != "$tmux" ] && [ "$3" = "$6" ]; then
    steady=$((steady + 1))
    [ "$steady" -ge 5 ] && exit 0
  else
    steady=0
  fi
  sleep 0.02
  count=$((count + 1))
done
"""


def run_briefly(argv: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    """``argv`` run to its end (an ssh session, a tmux client), stdin closed, its output
    as text (undecodable bytes replaced); TimeoutExpired and OSError go to the caller."""
    return subprocess.run(
        argv,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        errors="replace",
        timeout=timeout,
        check=False,
    )


class LocalHost:
    """This machine: a tmux argv runs as it is."""

    remote = False

    def describe(self) -> str:
        return "this machine"

    def command(self, argv: list[str]) -> list[str]:
        return argv

    def client_command(self, argv: list[str]) -> list[str]:
        """A tmux client that lives as long as schemux (a control client): it gets SIGTERM
        when schemux dies (``schemux.tethered``)."""
        return tethered(argv)

    async def connect(self) -> None:
        """Nothing to connect."""

    def lost(self) -> str | None:
        return None

    def home(self) -> str:
        return home_directory(os.environ)

    async def until_shell_ready(self, pid: int, tmux_binary: str) -> None:
        await until_shell_ready(pid, tmux_binary)

    def close(self) -> None:
        """Nothing to end."""


LOCAL = LocalHost()


class SshHost:
    """A host reached with OpenSSH over one multiplexed connection (see the module).

    Owned by whoever made it (a ``ToolContext``, a doctor's run), which closes it: every
    tmux server it reaches on that host shares its master. ``connect`` starts the master
    when it is not running, and checks the remote tmux then; ``close`` ends it and removes
    the runtime directory.
    """

    remote = True

    def __init__(self, target: SshTarget) -> None:
        self.target = target
        self._lock = threading.Lock()
        self._directory: Path | None = None
        self._home: str | None = None
        self.tmux_version: str | None = None

    def describe(self) -> str:
        return f"host {preview(self.target.destination)}"

    @property
    def control_path(self) -> str:
        if self._directory is None:
            # imported here: schemux.tmux imports this module, and abandoned imports tmux
            from schemux.abandoned import make_runtime_directory

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
        """A tmux argv (``tmux FLAGS COMMAND...``) run on the host. With ``-u``: the
        remote session's locale is whatever sshd gave it (often none, so C), and tmux
        would write a non-UTF-8 client's control characters as ``_``."""
        return self.exec_command([argv[0], "-u", *argv[1:]])

    def client_command(self, argv: list[str]) -> list[str]:
        """A tmux client that lives as long as schemux (a control client): its ssh
        session gets SIGTERM when schemux dies (``schemux.tethered``), and the client on
        the host ends when the session does (``_DRAINED``)."""
        tmux = [argv[0], "-u", *argv[1:]]
        return tethered(self.exec_command(["sh", "-c", _DRAINED, "sh", *tmux]))

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

    def lost(self) -> str | None:
        """Why the connection is gone (its master does not answer), or None."""
        if self._master_answers():
            return None
        return f"the ssh connection to {self.describe()} was lost"

    def _master_answers(self) -> bool:
        if self._directory is None:
            return False
        with socket.socket(socket.AF_UNIX) as probe:
            try:
                probe.connect(self.control_path)
            except OSError:
                return False
        return True

    async def connect(self) -> None:
        """The master is up (started when it is not, and the remote tmux checked then),
        or ServerUnavailable says why not, in one line."""
        if self.tmux_version is not None and self._master_answers():
            return
        await asyncio.to_thread(self._connect)

    def check_tmux(self) -> str:
        """At start: the connection made and the remote ``tmux -V``'s text; raises
        ServerUnavailable saying why not."""
        self._connect()
        assert self.tmux_version is not None
        return f"{self.tmux_version} on {self.describe()}"

    def _connect(self) -> None:
        with self._lock:  # one start for every caller (of any event loop) at once
            if self._master_answers():
                if self.tmux_version is not None:
                    return
            else:
                self.tmux_version = None
                self._start_master()
            self._probe()  # until it passes, each call checks the host's tmux again

    def _start_master(self) -> None:
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
            done = run_briefly(argv, START_SECONDS)
        except subprocess.TimeoutExpired:
            raise ServerUnavailable(
                f"ssh to {self.describe()} did not connect within {START_SECONDS:g} s",
                suggestion="check that the host is reachable: ssh "
                + shlex.join(self._destination_words()),
            ) from None
        except OSError as error:
            raise ServerUnavailable(f"ssh cannot be run: {error}") from None
        if done.returncode != 0 or not self._master_answers():
            raise ServerUnavailable(
                f"ssh to {self.describe()} failed: {_said(done.stderr, done.returncode)}",
                suggestion="check that `ssh "
                + shlex.join(self._destination_words())
                + "` works without a prompt (a key the host accepts, in the agent or the "
                "config; the host's key in known_hosts)",
            )

    def _destination_words(self) -> list[str]:
        config = ["-F", self.target.config] if self.target.config is not None else []
        return [*config, self.target.destination]

    def _probe(self) -> None:
        """The remote user's home and ``tmux -V``, in one session."""
        try:
            done = run_briefly(
                self._session("printf '%s\\n' \"$HOME\"; exec tmux -V"), START_SECONDS
            )
        except subprocess.TimeoutExpired:
            raise ServerUnavailable(
                f"`tmux -V` on {self.describe()} did not answer within {START_SECONDS:g} s"
            ) from None
        lines = done.stdout.splitlines()
        if done.returncode == 255:
            raise ServerUnavailable(
                f"ssh to {self.describe()} failed: {_said(done.stderr, done.returncode)}"
            )
        if done.returncode != 0 or len(lines) < 2:
            raise ServerUnavailable(
                f"tmux cannot run on {self.describe()}: {_said(done.stderr, done.returncode)}",
                suggestion="install tmux 3.3 or newer on that host, on the PATH its "
                "non-interactive shell has",
            )
        version = lines[1].strip()
        try:
            too_old = parse_version(version) < MINIMUM_VERSION
        except TmuxUnavailable as error:
            raise ServerUnavailable(f"on {self.describe()}: {error}") from None
        if too_old:
            raise ServerUnavailable(
                f"{version} on {self.describe()} is too old: schemux needs tmux 3.3 or newer",
                suggestion="install tmux 3.3 or newer on that host",
            )
        self._home = lines[0]
        self.tmux_version = version

    def home(self) -> str:
        """The remote user's home directory (known once connected)."""
        return self._home or "/"

    async def until_shell_ready(self, pid: int, tmux_binary: str) -> None:
        """``agent_session.until_shell_ready``, on the host, in one session (which finds
        the host's own tmux: ``tmux_binary`` is this machine's name for it)."""
        remote = "sh -c " + shlex.quote(_SHELL_READY_SCRIPT) + " sh " + shlex.quote(str(pid))
        proc = await asyncio.create_subprocess_exec(
            *self._session(remote),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
        )
        try:
            # the script gives up after SHELL_READY_SECONDS itself; this bounds the session
            async with asyncio.timeout(SHELL_READY_SECONDS + 2):
                await proc.wait()
        except BaseException as error:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await asyncio.shield(proc.wait())
            if not isinstance(error, TimeoutError):
                raise

    def close(self) -> None:
        """End the master and remove the runtime directory (nothing stays)."""
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


def _said(stderr: str, status: int) -> str:
    """What ssh (or the remote shell) said, as one line."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    return shorten(" ".join(lines), 500) if lines else f"ssh exited with status {status}"


Host = LocalHost | SshHost


def host_for(target: SshTarget | None) -> Host:
    """This machine, or a new SshHost of ``target``, which the caller owns (and closes:
    its master runs until then)."""
    return LOCAL if target is None else SshHost(target)
