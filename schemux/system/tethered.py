"""Child processes that end when schemux does, however it ends (``kill -9`` included).

A ``tmux -C`` client did not always end when schemux died: tmux reads and writes a
control client's stdin and stdout in the server, and does not let the client go while
it holds output it has not written, which it never can once its reader is dead (windows
came and went meanwhile, a watched pane printed). Such clients lived on (parent 1), and
while they lived ``kill-server`` left the tmux server running. So every control client
(the shared one, the waiters, the watchers) and the ssh session of the remote program
helper is started through util-linux's ``setpriv --pdeathsig TERM``: the kernel sends it
SIGTERM when schemux's thread that started it ends. SIGTERM is the gentle end of a tmux
client (it tells the server it leaves, also before it is attached, where a kill could
crash tmux 3.3a) and of an ssh session. Over ssh the client on the host then loses its
input; its output goes through a relay that keeps reading once the session is gone
(``hosts.remote_side.drained``), so tmux lets it go (measured: every client on the
host gone within 3 s of ``kill -9``, where they lived on before). Python's own
way (``preexec_fn`` calling ``prctl``) is unsafe in a process with threads. Measured:
``wait_for_text``, which opens a watcher per call, is as fast as before (108 to 111 ms
for a 0.1 s wait, with and without).

A host's connect (an exec prefix's probe, an ssh master's start) runs what schemux does
not know: a prefix may leave a child of its own waiting (``sh -c 'sleep 5; exec "$@"'``),
which SIGTERM to the process schemux started would not end. So it runs under a shell
that leads its process group (``tethered_group``) and, at the tether's SIGTERM, kills
that whole group.
"""

from __future__ import annotations

import shutil

SETPRIV = "setpriv"  # util-linux (essential on Debian); --pdeathsig since 2.33
# runs "$@" as its child and waits; SIGTERM (the tether's) kills its whole process group.
# The trap is set first: a SIGTERM before it ends the shell before "$@" starts.
_GROUP_LEADER = 'trap "kill -s KILL 0" TERM; "$@" & wait "$!"'


def tethered(argv: list[str]) -> list[str]:
    """``argv`` started so that it gets SIGTERM when this process dies; ``argv`` as it is
    where ``setpriv`` is missing."""
    setpriv = shutil.which(SETPRIV)
    if setpriv is None:
        return argv
    return [setpriv, "--pdeathsig", "TERM", "--", *argv]


def tethered_group(argv: list[str]) -> list[str]:
    """``argv`` started so that, when this process dies, it and every process of its
    process group get SIGKILL: for a process started as the leader of a group of its own
    (``process_group=0``). Its stdin is /dev/null (a shell's background job's), and a
    status it ends with by a signal is ``128 + N``. ``argv`` as it is where ``setpriv``
    is missing."""
    if shutil.which(SETPRIV) is None:
        return argv
    return tethered(["sh", "-c", _GROUP_LEADER, "sh", *argv])
