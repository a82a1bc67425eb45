"""Facts about a pane's shell process, read where the tmux server runs.

A pane's pid (``#{pane_pid}``) is a pid of the tmux server's machine, in the server's
pid namespace. On this machine, with the server's pids visible here, ``/proc`` tells
(``schemux.shell.idle``, which reads it directly: microseconds, pidfds for the waits).
For a server on a remote host, this machine's ``/proc`` would describe unrelated local
processes that happen to have those pids; there the facts are read by the tmux server
itself: ``run-shell`` runs a fixed script on the server's host, in the server's own pid
and mount namespaces, which hands its one-line answer back by setting a server option
with the server's own binary; the same control-mode request then reads and removes the
option. No ssh session of its own, no value of a call in the script: the pid is an
integer's digits, a terminal path is used only when it is one (``/dev/pts/N``).

When schemux runs programs on that host it keeps a helper there (``schemux.programs.
remote``, one session), which the host offers (``Host.facts_helper``) and which answers
the same reading in one frame's round trip, with no process started: it is asked first,
once it runs (the first reading starts it, in the background: the readings meanwhile
are run-shell's) and is known to see the tmux server's pids. tmux says the server's pid
and start time; the helper checks that its pid namespace has that pid, started then
(each time: a server that restarted is checked anew). A server whose pids the helper does
not see (a server started on the host in another pid namespace than the host's sessions)
is read by run-shell, as before. What is known of a server (its pid and start time,
whether the helper sees its pids) is its ``TmuxServer``'s.

Both kinds answer the same questions, with the same rules (``shell.idle``); the rules
that decide from the facts are shared, only the reading differs.
"""

from __future__ import annotations

import asyncio
import re
import secrets
from dataclasses import dataclass
from typing import Protocol

from schemux.errors import SchemuxError
from schemux.hosts.programs.remote import REQUEST_SECONDS
from schemux.panes.targets import PaneInfo
from schemux.shell import idle
from schemux.shell.barrier import (
    STOPPED_SECONDS_AT_MOST,
    WITHIN_SECONDS,
    server_of,
    terminal_of,
    until_tmux_read,
)
from schemux.tmux.command import THEN
from schemux.tmux.server import TmuxServer


class ShellFacts(Protocol):
    """What ``run_command`` asks about a pane's shell (see ``schemux.shell.idle``)."""

    async def check_shell_pane(self, pane: PaneInfo) -> str:
        """Refuse a pane whose shell is not idle at its prompt; the name of the shell
        that reads the typed keys."""
        ...

    async def earlier_wrapper_leaving(self, shell_pid: int) -> bool: ...

    async def shell_reads_input(self, shell_pid: int) -> bool: ...

    async def until_shell_has_terminal(self, shell_pid: int, within: float) -> None: ...

    async def until_line_editor_reads(
        self, shell_pid: int, within: float, *, edits: bool = False
    ) -> None: ...

    async def echo_on(self, tty: str) -> bool: ...

    async def take_terminal_answers(self, shell_pid: int) -> None:
        """Take tmux's answers to the queries a command wrote off the terminal the shell
        reads, while something holds the shell (``schemux.shell.barrier``)."""
        ...


class LocalShellFacts:
    """This machine's ``/proc`` and terminals (``schemux.shell.idle`` as it is), for the
    panes of ``server``."""

    def __init__(self, server: TmuxServer) -> None:
        self.server = server

    async def check_shell_pane(self, pane: PaneInfo) -> str:
        return idle.check_shell_pane(pane)

    async def earlier_wrapper_leaving(self, shell_pid: int) -> bool:
        return idle.earlier_wrapper_leaving(shell_pid)

    async def shell_reads_input(self, shell_pid: int) -> bool:
        return idle.shell_reads_input(shell_pid)

    async def until_shell_has_terminal(self, shell_pid: int, within: float) -> None:
        await idle.until_shell_has_terminal(shell_pid, within)

    async def until_line_editor_reads(
        self, shell_pid: int, within: float, *, edits: bool = False
    ) -> None:
        without_editor = self.server.shared(idle.ShellsWithoutEditor)
        await idle.until_line_editor_reads(shell_pid, without_editor, within, edits=edits)

    async def echo_on(self, tty: str) -> bool:
        return idle.echo_on(tty)

    async def take_terminal_answers(self, shell_pid: int) -> None:
        await until_tmux_read(terminal_of(shell_pid), server_pid=server_of(shell_pid))


# The shell's terminal in the scripts below: the pseudo-terminal whose device number
# (/proc/PID/stat's tty_nr) is $r, as ``t`` (left as it was for none or another kind; as
# ``schemux.system.processes.controlling_terminal`` reads it here), never the shell's
# descriptor 0, which a builtin reading a redirection points elsewhere for a while.
_PTS_OF_TTY_NR = r"""x=$(( (r >> 8) & 4095 )) y=$(( (r & 255) | ((r >> 12) & 1048320) ))
[ "$x" -ge 136 ] && [ "$x" -le 143 ] && t=/dev/pts/$(( (x - 136) * 256 + y ))"""

# Runs on the server's host (``sh -c``, by run-shell), for process PID (digits): one line,
# "STATE PGRP TPGID LEADER ICANON ECHO JOB TTY<TAB>NAME", where LEADER tells what leads the
# terminal's foreground group when the shell does not (none, gone: no argv any more,
# wrapper: a released run_command wrapper's client, other), ICANON/ECHO are 1, 0 or
# "-" (read only for a shell with a line editor: the one case they are asked for), and
# JOB is 1 when a child of the shell is in its process group
# (``shell.idle.waits_for_own_job``), else 0; "-"
# alone when there is no such process. Shell builtins where they serve (the call's cost
# is the processes it starts). It must print nothing (run-shell would show it in a
# pane); run-shell expands formats in its command, so "####" is the shell's "##" and no
# other '#' is in it.
_FACTS_SCRIPT = (
    r"""(
p=%(pid)d
v=-
if read -r s < /proc/$p/stat; then
  set -- ${s####*) }
  a=$1 g=$3 r=$5 f=$6 l=none i=- e=- t=- j=0 k=
  if [ "$f" -gt 0 ] && [ "$f" != "$g" ]; then
    c=$(tr '\000' ' ' < /proc/$f/cmdline)
    case $c in '') l=gone;; *schemux_r_*) l=wrapper;; *) l=other;; esac
  fi
  read -r k < /proc/$p/task/$p/children
  for c in $k; do
    read -r s < /proc/$c/stat && set -- ${s####*) } && [ "$3" = "$g" ] && j=1
  done
  read -r n < /proc/$p/comm
  case $n in %(editors)s)
    """
    + _PTS_OF_TTY_NR
    + r"""
    m=" $(stty -a < "$t" | tr '\n;' '  ') "
    case $m in *' -icanon '*) i=0;; *' icanon '*) i=1;; esac
    case $m in *' -echo '*) e=0;; *' echo '*) e=1;; esac;;
  esac
  v=$(printf '%%s %%s %%s %%s %%s %%s %%s %%s\t%%s' "$a" "$g" "$f" "$l" "$i" "$e" "$j" "$t" "$n")
fi
/proc/$PPID/exe set-option -s %(option)s "$v"
) >/dev/null 2>&1; true"""
)

# a terminal as tmux names a pane's (#{pane_tty}): the only terminal paths put in a script
_TTY = re.compile(r"/dev/pts/[0-9]+")

# the same script for a terminal's echo alone
_ECHO_SCRIPT = r"""(
m=" $(stty -a < %(tty)s 2>/dev/null | tr '\n;' '  ') "
case $m in *' -echo '*) e=0;; *' echo '*) e=1;; *) e=-;; esac
/proc/$PPID/exe set-option -s %(option)s "- - - - - $e"
) >/dev/null 2>&1; true"""

# the terminal barrier (``schemux.shell.barrier``) on the server's host, for the shell
# of process PID: a status query written to its terminal, and all that comes before its
# answer read and dropped (2 s at most, longer while tmux, which runs this script, is
# stopped: 2 minutes at most), the terminal's modes as they were after
_ANSWERS_SCRIPT = (
    r"""(
read -r s < /proc/%(pid)d/stat || exit
set -- ${s####*) }
r=$5 t=-
"""
    + _PTS_OF_TTY_NR
    + r"""
[ "$t" != - ] || exit
g=$(stty -g < "$t") || exit
stty -icanon -echo min 0 time 20 < "$t"
printf '\033[5n' > "$t"
a= n=0
while [ $n -lt 60 ]; do
  c=$(dd bs=256 count=1 < "$t" 2>/dev/null | od -An -tx1 | tr -d ' \n')
  if [ -n "$c" ]; then
    a=$a$c
    case $a in *1b5b306e) break;; esac
    continue
  fi
  n=$((n + 1))
  case $(cat /proc/$PPID/stat 2>/dev/null) in *") T "*|*") t "*) ;; *) break;; esac
done
stty "$g" < "$t"
) >/dev/null 2>&1; true"""
)

POLL_SECONDS = 0.005  # between two readings of a remote shell that is on its way
# the helper's barrier: its longest wait (a stopped server's), and a request's time
_ANSWERS_SECONDS = STOPPED_SECONDS_AT_MOST + 2 * WITHIN_SECONDS + REQUEST_SECONDS


@dataclass(frozen=True)
class Snapshot:
    """One reading of a shell process (see ``_FACTS_SCRIPT``)."""

    state: str
    pgrp: int
    tpgid: int
    leader: str
    canonical: bool | None
    echo: bool | None
    own_job: bool  # a child of the shell is in its process group
    tty: str
    name: str

    @classmethod
    def parse(cls, value: str) -> Snapshot | None:
        head, tab, name = value.partition("\t")
        fields = head.split(" ", 7)
        if not tab or len(fields) != 8:
            return None
        try:
            pgrp, tpgid = int(fields[1]), int(fields[2])
        except ValueError:
            return None
        canonical, echo, own_job = (_flag(field) for field in fields[4:7])
        return cls(
            fields[0], pgrp, tpgid, fields[3], canonical, echo, own_job is True, fields[7], name
        )

    @property
    def groups(self) -> tuple[int, int] | None:
        """As ``shell.idle._terminal_groups``: None without a controlling terminal."""
        return None if self.tpgid <= 0 else (self.pgrp, self.tpgid)


def _flag(text: str) -> bool | None:
    return {"1": True, "0": False}.get(text)


class RemoteShellFacts:
    """The facts of a remote tmux server's shells, read on its host by the host's helper
    where it sees the server's pids, by the server itself (run-shell) where not."""

    def __init__(self, server: TmuxServer) -> None:
        self.server = server
        # the last reading of each pid: the questions a call asks one after another, with
        # nothing awaited between them but the readings, are answered from one reading
        self._latest: dict[int, Snapshot | None] = {}

    async def _read(self, script: str, **values: object) -> str:
        """Run ``script`` by run-shell and return the value it set (one request)."""
        option = f"@schemux_facts_{secrets.token_hex(8)}"
        text = script % {**values, "option": option}
        lines = await self.server.run(
            "run-shell", text, THEN,
            "show-options", "-s", "-q", "-v", option, THEN,
            "set-option", "-s", "-u", option,
        )  # fmt: skip
        return lines[0] if lines else ""

    async def _identity(self) -> tuple[int, int]:
        """The server's pid and start time (epoch seconds), as tmux says them."""
        lines = await self.server.run("display-message", "-p", "#{pid} #{start_time}")
        pid, _, started = (lines[0] if lines else "").partition(" ")
        return int(pid), int(started)

    async def _ask_helper(
        self, operation: bytes, *fields: bytes, seconds: float = REQUEST_SECONDS
    ) -> bytes | None:
        """The helper's answer (within ``seconds``); None when the facts must be read by
        run-shell: no helper on that host, it failed, or it does not see the server's
        pids."""
        server = self.server
        helper = server.address.host.facts_helper()
        if helper is None or not server.helper_sees_pids:
            return None
        known = server.reported_pid
        try:
            identity = known if known is not None else await self._identity()
            server.reported_pid = identity
            answer = await helper.shell_facts(operation, identity, *fields, seconds=seconds)
            if answer == [] and known is not None:
                # what was known may be a server since restarted: ask tmux again
                identity = server.reported_pid = await self._identity()
                if identity != known:
                    answer = await helper.shell_facts(operation, identity, *fields, seconds=seconds)
        except (SchemuxError, ValueError):
            return None  # this time by run-shell (its failure is the call's error)
        if answer is None:
            return None  # the helper is starting: this time by run-shell
        if not answer:
            server.helper_sees_pids = False
            return None
        return answer[0]

    async def read_by_helper(self, pid: int) -> tuple[bool, Snapshot | None]:
        """A reading by the host's helper: (False, None) when it cannot give one."""
        editors = "|".join(sorted(idle.EDITOR_SHELLS))
        value = await self._ask_helper(b"facts", str(int(pid)).encode(), editors.encode())
        if value is None:
            return False, None
        return True, Snapshot.parse(value.decode("utf-8", "surrogateescape"))

    async def read_by_run_shell(self, pid: int) -> Snapshot | None:
        """A reading by the server's run-shell."""
        editors = "|".join(sorted(idle.EDITOR_SHELLS))
        return Snapshot.parse(await self._read(_FACTS_SCRIPT, pid=int(pid), editors=editors))

    async def snapshot(self, pid: int, *, fresh: bool = False) -> Snapshot | None:
        """The shell's facts (read now when ``fresh`` or not read yet by this object);
        None when there is no such process (any more)."""
        if fresh or pid not in self._latest:
            read, facts = await self.read_by_helper(pid)
            if not read:
                facts = await self.read_by_run_shell(pid)
            self._latest[pid] = facts
        return self._latest[pid]

    async def check_shell_pane(self, pane: PaneInfo) -> str:
        idle.check_pane_state(pane)
        facts = await self.snapshot(pane.pid)
        groups = None if facts is None else facts.groups
        name = "" if facts is None else facts.name
        return idle.check_shell_command(pane, groups, name)

    async def earlier_wrapper_leaving(self, shell_pid: int) -> bool:
        facts = await self.snapshot(shell_pid)
        if facts is None or facts.groups is None or facts.pgrp == facts.tpgid:
            return False
        return facts.leader in ("gone", "wrapper")

    async def shell_reads_input(self, shell_pid: int) -> bool:
        facts = await self.snapshot(shell_pid)
        return facts is not None and facts.groups is not None and facts.pgrp == facts.tpgid

    async def until_shell_has_terminal(self, shell_pid: int, within: float) -> None:
        """As ``shell.idle.until_shell_has_terminal``, by readings a few ms apart (no
        pidfd reaches the host's processes)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + within
        while loop.time() < deadline:
            facts = await self.snapshot(shell_pid, fresh=True)
            if facts is None or facts.groups is None or facts.pgrp == facts.tpgid:
                return
            await asyncio.sleep(POLL_SECONDS)

    async def until_line_editor_reads(
        self, shell_pid: int, within: float, *, edits: bool = False
    ) -> None:
        """As ``shell.idle.until_line_editor_reads``, by readings a few ms apart."""
        facts = await self.snapshot(shell_pid)
        if facts is None or not facts.tty.startswith("/"):
            return
        key = (shell_pid, facts.tty)
        without_editor = self.server.shared(idle.ShellsWithoutEditor)
        if facts.name not in idle.EDITOR_SHELLS or (not edits and key in without_editor):
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + within
        while facts is not None and facts.canonical:
            if loop.time() > deadline:
                reads = facts.groups is not None and facts.pgrp == facts.tpgid
                if not edits and reads and facts.state == "S" and not facts.own_job:
                    without_editor.add(key)  # as shell_panes says why
                return
            await asyncio.sleep(POLL_SECONDS)
            facts = await self.snapshot(shell_pid, fresh=True)

    async def echo_on(self, tty: str) -> bool:
        if not _TTY.fullmatch(tty):
            return False
        answer = await self._ask_helper(b"echo", tty.encode())
        if answer is not None:
            return answer == b"1"
        value = await self._read(_ECHO_SCRIPT, tty=tty)
        return value.endswith(" 1")

    async def take_terminal_answers(self, shell_pid: int) -> None:
        # by the host's helper, which starts no process for it (the script below starts a
        # dozen: most of a fan-out's work on a host); its answer comes when its wait ends
        within = f"{WITHIN_SECONDS:g}".encode()
        answered = await self._ask_helper(
            b"answers", str(int(shell_pid)).encode(), within, seconds=_ANSWERS_SECONDS
        )
        if answered is None:
            # run-shell ends when the script does: the next command of the call follows it
            await self.server.run("run-shell", _ANSWERS_SCRIPT % {"pid": shell_pid})


def shell_facts(server: TmuxServer) -> ShellFacts:
    """Where the facts of ``server``'s shells are read: in this ``/proc`` when its host's
    pids are this machine's, else on its host."""
    if server.address.host.pids_here:
        return LocalShellFacts(server)
    return RemoteShellFacts(server)
