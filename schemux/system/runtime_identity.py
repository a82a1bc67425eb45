"""This process's identity where it leaves things: the owner tag its marks on tmux
servers carry, and its private runtime directory on this machine.

Every schemux process has an owner identity, its pid and its start time in clock ticks
(``PID-TICKS``, ``schemux.system.processes.Owner``): a pid alone could be reused by an unrelated
process. It names the runtime directory (``schemux-PID-TICKS-XXXXXXXX`` in the temporary
directory); on tmux servers, which may be another host's, the owner also names its
machine (``PID-TICKS-MACHINE``, ``Owner.tag``). What a dead owner left is reaped by
``schemux.shell.abandoned``, which reads these names back.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from schemux.system.processes import Owner, this_process

RUNTIME_PREFIX = "schemux-"
RUNTIME_NAME = re.compile(rf"{RUNTIME_PREFIX}([1-9][0-9]*-[0-9]+)-[a-z0-9_]+")


def own_identity() -> str:
    """This process as its marks on tmux servers name it (``Owner.tag``)."""
    return this_process().tag


def owner_alive(identity: str, *, remote: bool = False) -> bool:
    """Whether the schemux process named by ``identity`` may still run, for a mark found
    on this machine or on a ``remote`` server (``Owner.may_run``); True for anything that
    is not an owner identity, so that nothing of unknown origin is ever reaped."""
    owner = Owner.from_identity(identity)
    return owner is None or owner.may_run(remote=remote)


def make_runtime_directory() -> Path:
    """This process's private runtime directory (mode 0700, from mkdtemp), on this
    machine: named by the identity alone."""
    return Path(tempfile.mkdtemp(prefix=f"{RUNTIME_PREFIX}{this_process().identity}-"))
