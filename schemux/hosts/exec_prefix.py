"""A host reached by a command prefix (``schemux serve --exec PREFIX``): any argv that runs
the rest of its arguments as a command on the target with this process's stdin and
stdout: ``docker exec -i CTR``, ``kubectl exec -i POD --``, ``incus exec NAME --``,
``runuser -u USER --``, ``ssh DEST``.

Each command schemux runs there (a tmux client, the program helper, the probe) is a new
process of the prefix, with no connection of schemux's own to keep: what the prefix
needs (a daemon, credentials) is its own business, checked by its first command.

Prefixes pass the words after them in one of two ways, and each word must reach the
target as the one argument it was here: most (docker, kubectl, incus, runuser) pass them
verbatim as the command's argv; some (ssh) join them into one string that a shell there
parses. The probe at connection tells which (a word with a space and a quote, sent as it
is, comes back whole or not), and every command is then given that way: verbatim, or as
one string of words each quoted for a POSIX shell (``shlex.quote``), as ``schemux.hosts.
ssh`` does. schemux's own settings (``SCHEMUX_*``, an HTTP token among them) are taken
out of the prefix's environment: a prefix that passes it on would hand them to the
target.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
import subprocess
import threading
from collections.abc import Mapping
from concurrent.futures import Executor

from schemux.errors import ServerUnavailable, preview
from schemux.host_settings import ExecTarget
from schemux.hosts import remote_side
from schemux.hosts.connecting import Connecting
from schemux.system.tethered import tethered

SETTINGS_PREFIX = "SCHEMUX_"
START_SECONDS = 30.0  # the probe (a container runtime may be slow to answer), then killed
# sent through the prefix at the probe: comes back whole only when words pass verbatim
_WORD = "one word's"
_PROBE = ("sh", "-c", 'printf \'%s\\n\' "$1" "$HOME"; exec tmux -V', "sh", _WORD)


def _without_settings(env: Mapping[str, str]) -> list[str]:
    """``env -u NAME...`` for schemux's own variables (a token among them): a prefix that
    passes its environment on (runuser, sudo) would give them to the target's user."""
    names = sorted(name for name in env if name.startswith(SETTINGS_PREFIX))
    return ["env", *(f"--unset={name}" for name in names)] if names else []


class ExecHost(remote_side.RemoteHost):
    """A host reached by running ``target.prefix`` before each command (see the module).

    Owned by whoever made it, which closes it (nothing stays open between commands;
    closing forgets the probe's answer)."""

    kind = "exec"
    pids_here = False
    files_here = False
    connection = 0  # each command is its own way there: none to replace

    def __init__(self, target: ExecTarget) -> None:
        self.target = target
        self._lock = threading.Lock()
        self._connecting = Connecting(self.describe)
        self._joined = False  # the prefix joins words into one shell string (ssh)
        self._probed: remote_side.Probed | None = None

    @property
    def tmux_version(self) -> str | None:
        return None if self._probed is None else self._probed.tmux_version

    def describe(self) -> str:
        return f"the host of {preview(shlex.join(self.target.prefix))}"

    def where(self) -> str:
        return f" on {self.describe()}"

    def label(self) -> str:
        return shlex.join(self.target.prefix)

    def tmux_binary(self) -> str:
        """The host's tmux is the one on its PATH."""
        return "tmux"

    def command(self, argv: list[str]) -> list[str]:
        return self.exec_command(remote_side.tmux_words(argv))

    def client_command(self, argv: list[str]) -> list[str]:
        """A lasting tmux client: the prefix's process gets SIGTERM when schemux dies
        (``schemux.system.tethered``), and the client there ends when its input does
        (``remote_side.drained``)."""
        return tethered(self.exec_command(remote_side.drained(argv)))

    def exec_command(self, argv: list[str]) -> list[str]:
        """``argv`` run there: after the prefix, each word as it is, or (a prefix that
        joins them, known from the probe) one string of the words quoted."""
        return self._given(self._joined, argv)

    def _given(self, joined: bool, argv: list[str]) -> list[str]:
        words = ["exec " + shlex.join(argv)] if joined else argv
        return [*_without_settings(os.environ), *self.target.prefix, *words]

    async def connect(self, executor: Executor | None = None) -> None:
        """Probed once (the host's tmux, its home, how the prefix passes words), or
        ServerUnavailable says why not; the probe runs in ``executor``."""
        if self._probed is None:
            ticket = self._connecting.ticket()
            await asyncio.get_running_loop().run_in_executor(executor, self._connect, ticket)

    def check_tmux(self) -> str:
        self._connect(self._connecting.ticket())
        return f"{self.tmux_version} on {self.describe()}"

    def _connect(self, ticket: int) -> None:
        """Probe, unless the host was closed since the connect was asked for
        (``schemux.hosts.connecting``)."""
        with self._lock:  # one probe for every caller (of any event loop) at once
            self._connecting.refuse_if_closed(ticket)
            if self._probed is not None:
                return
            verbatim = self._probe(ticket, joined=False)
            lines = verbatim.stdout.splitlines()
            if lines[:1] == [_WORD]:
                self._read(verbatim, joined=False)
                return
            joined = self._probe(ticket, joined=True)
            if joined.stdout.splitlines()[:1] == [_WORD]:
                self._read(joined, joined=True)
                return
            said = remote_side.failure_text(
                verbatim.stderr, verbatim.returncode, self.target.prefix[0]
            )
            raise ServerUnavailable(
                f"{self.describe()} did not run a command given to it: {said}",
                suggestion="give a prefix (--exec, or a host's exec:) that runs the command "
                "after it on the target, with stdin and stdout "
                f"(try `{shlex.join(self.target.prefix)} sh -c 'tmux -V'`)",
            )

    def _probe(self, ticket: int, *, joined: bool) -> subprocess.CompletedProcess[str]:
        # looked up here: once behind ``env --unset`` (_without_settings), a missing
        # program would be env's complaint, not an OSError of ours
        if shutil.which(self.target.prefix[0]) is None:
            raise ServerUnavailable(
                f"the exec prefix cannot be run: {self.target.prefix[0]!r} is not a "
                "program on the PATH",
                suggestion="begin the prefix (--exec, or a host's exec:) with a command on "
                "the PATH, such as `docker exec -i NAME`",
            )
        try:
            return self._connecting.run(ticket, self._given(joined, list(_PROBE)), START_SECONDS)
        except subprocess.TimeoutExpired:
            raise ServerUnavailable(
                f"{self.describe()} did not answer within {START_SECONDS:g} s"
            ) from None
        except OSError as error:
            raise ServerUnavailable(
                f"the exec prefix cannot be run: {error}",
                suggestion="begin the prefix (--exec, or a host's exec:) with a command on "
                "the PATH, such as `docker exec -i NAME`",
            ) from None

    def _read(self, done: subprocess.CompletedProcess[str], *, joined: bool) -> None:
        lines = done.stdout.splitlines()[1:]
        way = self.target.prefix[0]
        self._probed = remote_side.read_probe(
            lines, done.stderr, done.returncode, self.describe(), way
        )
        self._joined = joined

    def lost(self, since: int | None = None, status: int | None = None) -> str | None:
        """None: there is no connection of schemux's to lose (each command's failure is
        its own)."""
        return None

    def reached(self, status: int) -> bool:
        """True: a prefix's own failures have no status of their own to tell them by."""
        return True

    def home(self) -> str:
        """The target user's home directory (known once probed)."""
        return "/" if self._probed is None else self._probed.home

    def close(self) -> None:
        """Nothing runs between commands: a probe still running is ended, and the next
        connect probes again."""
        self._connecting.close()  # first: the probe holds the lock
        with self._lock:
            self._probed = None
