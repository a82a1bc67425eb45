"""The process that is a control client of a tmux server: schemux's attacher
(``schemux.tmux.control.attach``) where tmux crashes when a notification comes while a
control client identifies itself (3.3 to 3.6), ``tmux -C`` where it does not (3.7 on).

The attacher runs under the host's Python (``Host.python``): schemux's own here, one
that ``sh`` finds new enough on another host; a host without one gets ``tmux -C``, as
does a server whose socket path schemux could not read plainly.
"""

from __future__ import annotations

from importlib import resources

from schemux.errors import TmuxUnavailable
from schemux.versions import parse_version

MINIMUM_PYTHON = (3, 7)  # the attacher's syntax (postponed annotations, f-strings)


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


def attacher(python: str, source_here: bool) -> list[str]:
    """The attacher's program under ``python``: its file where this file is readable
    (``ps`` then shows a short line), else its source."""
    module = resources.files("schemux.tmux.control").joinpath("attach.py")
    if source_here:
        return [python, "-I", "-S", str(module)]
    return [python, "-I", "-S", "-c", module.read_text()]


def control_client_argv(
    tmux: list[str],
    command: list[str],
    *,
    version: str | None,
    socket_path: str | None,
    python: str | None,
    source_here: bool,
) -> list[str]:
    """The argv of a control client that runs ``command`` (``attach-session ...``),
    where ``tmux`` (the binary and its socket flags) runs a tmux client. The attacher
    runs under ``python``: here, from its file (``source_here``: this Python runs
    schemux); elsewhere from its source, once ``sh`` has found that ``python`` is there
    and new enough, else ``tmux -C`` runs instead, as it does without ``python``."""
    tmux_client = [*tmux, "-u", "-C", *command]
    header = header_for(version)
    if header is None or python is None or socket_path is None or not plain_path(socket_path):
        return tmux_client
    program = attacher(python, source_here)
    attached = [*program, header, socket_path, str(len(command))]
    if source_here:
        return [*attached, *tmux_client]
    return ["sh", "-c", _fallback(len(attached)), "sh", *attached, *tmux_client]


def _fallback(words: int) -> str:
    """``sh -c``'s script: ``"$@"`` (the attacher's ``words``, then tmux -C) runs the
    attacher if its interpreter runs and is Python 3.7 or newer, else tmux -C."""
    probe = f'"$1" -I -S -c "import sys; sys.exit(sys.version_info < {MINIMUM_PYTHON})"'
    return f'{probe} >/dev/null 2>&1 && exec "$@"; shift {words}; exec "$@"'
