"""The process that is a control client of a tmux server: schemux's attacher
(``schemux.control_attach``) where tmux crashes when a notification comes while a
control client identifies itself (3.3 to 3.6), ``tmux -C`` where it does not (3.7 on).

The attacher runs on this machine only, under schemux's own interpreter (``Host.python``);
another host, a process that may not run that interpreter again, and a server whose
socket path schemux could not read plainly get ``tmux -C`` (README, Known gaps).
"""

from __future__ import annotations

from importlib import resources

from schemux.errors import TmuxUnavailable
from schemux.tmux_version import parse_version


def header_for(version: str | None) -> str | None:
    """The attacher's message header for a server of ``version`` (as ``#{version}``
    prints it), or None where ``tmux -C`` is safe or the version is unknown."""
    if version is None:
        return None
    try:
        served = parse_version(version)
    except TmuxUnavailable:
        return None
    if served < (3, 6):
        return "flags"  # imsg with a 16-bit length and a flags word
    if served < (3, 7):
        return "mark"  # imsg with a 32-bit length, its top bit marking a descriptor
    return None


def plain_path(path: str) -> bool:
    """Whether ``#{socket_path}`` printed ``path`` as it is: tmux 3.4 and 3.5 escape
    control characters and backslashes, so such a path is not taken for the socket's."""
    return path != "" and path.isprintable() and "\\" not in path


def control_client_argv(
    tmux: list[str],
    command: list[str],
    *,
    version: str | None,
    socket_path: str | None,
    python: str | None,
) -> list[str]:
    """The argv of a control client that runs ``command`` (``attach-session ...``),
    where ``tmux`` (the binary and its socket flags) runs a tmux client: the attacher,
    from its file under ``python``, or ``tmux -C`` (see the module)."""
    tmux_client = [*tmux, "-u", "-C", *command]
    header = header_for(version)
    if header is None or python is None or socket_path is None or not plain_path(socket_path):
        return tmux_client
    module = resources.files("schemux").joinpath("control_attach.py")
    attacher = [python, "-I", "-S", str(module)]
    return [*attacher, header, socket_path, str(len(command)), *tmux_client]
