"""Child processes that end when schemux does, however it ends (``kill -9`` included).

A ``tmux -C`` client does not end by itself when schemux dies: tmux reads the client's
stdin in the server, and a client with a command pending (a ``wait-for``) is not let go
at that input's end, so it lived on (parent 1), and while it lived ``kill-server`` left
the tmux server running. Such a child is started through util-linux's ``setpriv
--pdeathsig TERM``, which asks the kernel to send it SIGTERM when schemux's thread that
started it ends; SIGTERM is the gentle end of a tmux client (it tells the server it is
leaving, also before it is attached) and of an ssh session. Python's own way
(``preexec_fn`` calling ``prctl``) is unsafe in a process with threads.

Over ssh this ends the local ``ssh`` session; the remote tmux client then ends as a
client whose input ended does (see above).
"""

from __future__ import annotations

import shutil

SETPRIV = "setpriv"  # util-linux (essential on Debian); --pdeathsig since 2.33


def tethered(argv: list[str]) -> list[str]:
    """``argv`` started so that it gets SIGTERM when this process dies; ``argv`` as it is
    where ``setpriv`` is missing."""
    setpriv = shutil.which(SETPRIV)
    if setpriv is None:
        return argv
    return [setpriv, "--pdeathsig", "TERM", "--", *argv]
