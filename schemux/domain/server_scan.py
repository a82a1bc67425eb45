"""The tmux servers a host runs, as ``list_servers`` gives them.

One ``sh`` on the host lists the candidates: the sockets in the directory where its tmux
puts them (``TMUX_TMPDIR`` when it resolves, else ``/tmp``, resolved, then
``tmux-UID``: tmux's own ``make_label``, so the host's user and environment decide it,
as they decide it for a ``tmux -L``), hidden names included, and the extra paths a caller
gives that are sockets. Each candidate is then asked by a tmux client of its own (at most
``ASKED_AT_ONCE`` at a time, each within ``ANSWER_SECONDS``): one with no listener
("no server running", a stale socket left by a server that died) is left out at the cost
of one short client, and so is one that does not answer in time (a stopped server, or a
socket of another program) or cannot be read (another user's). A server reached by two
paths is listed once, by the path it reports.

A server's sessions are counted as ``list_sessions`` lists them: schemux's own session
counts only with the windows of its programs. ``socket_name`` is the name a ``tmux -L``
(and every tool's ``socket_name``) reaches it by: the socket's name when it lies in the
host's socket directory, else null.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence

import anyio

from schemux.domain.tmux_objects import ServerFacts
from schemux.errors import INVALID_ARGUMENTS, SchemuxError, preview
from schemux.tmux.command import THEN, command_arguments
from schemux.tmux.format import option, parse_row, parse_rows, readable, row_format, tmux_row
from schemux.tmux.owned_session import CONTROL_MARK, is_reserved
from schemux.tmux.server import TmuxServer

ASKED_AT_ONCE = 16
ANSWER_SECONDS = 5.0
MOST_EXTRA_PATHS = 256

# $1 is unused (sh's $0 slot is "sh"); the directory first, then each socket, each
# followed by a NUL: a path may hold any other byte
_SCAN = r"""
base=
if [ -n "${TMUX_TMPDIR-}" ]; then base=$(cd -P -- "$TMUX_TMPDIR" 2>/dev/null && pwd -P); fi
[ -n "$base" ] || base=$(cd -P /tmp && pwd -P)
dir=$base/tmux-$(id -u)
printf '%s\0' "$dir"
for f in "$dir"/* "$dir"/.[!.]* "$dir"/..?* "$@"; do
    if [ -S "$f" ]; then printf '%s\0' "$f"; fi
done
exit 0
"""


@tmux_row
class _Head:
    version: str
    socket_path: str


@tmux_row
class _Window:
    session_id: str
    session_name: str
    window_linked_sessions_list: str
    control: bool = option(CONTROL_MARK)


def check_extra_paths(paths: Sequence[str]) -> None:
    """Refuse, before anything runs, extra socket paths that cannot name a file on any
    host: not absolute, holding a NUL, or too many."""
    if len(paths) > MOST_EXTRA_PATHS:
        raise SchemuxError(
            f"extra_socket_paths has {len(paths)} paths; at most {MOST_EXTRA_PATHS} are probed",
            suggestion="pass the paths of the servers you look for",
            code=INVALID_ARGUMENTS,
        )
    for index, path in enumerate(paths):
        if not path.startswith("/") or "\x00" in path:
            raise SchemuxError(
                f"extra_socket_paths[{index}] {preview(path)} is not an absolute path",
                suggestion="pass each socket's whole path from '/' (as tmux -S takes it; "
                "~ is not expanded)",
                code=INVALID_ARGUMENTS,
            )


async def list_servers(server: TmuxServer, extra_paths: Sequence[str]) -> list[ServerFacts]:
    """The live tmux servers of ``server``'s host (see the module's docstring), ordered
    by socket path."""
    host = server.address.host
    status, out, err = await server.run_on_host(
        host.exec_command(["sh", "-c", _SCAN, "sh", *extra_paths])
    )
    if status != 0:
        raise SchemuxError(
            f"could not list the tmux sockets on {host.describe()} (sh exited with "
            f"{status}: {preview(err.decode(errors='replace').strip())})",
            suggestion="check that the host runs a POSIX sh",
        )
    directory, *candidates = out.decode(errors="surrogateescape").split("\x00")[:-1]
    limit = asyncio.Semaphore(ASKED_AT_ONCE)
    answers = await asyncio.gather(
        *(_ask(server, path, directory, limit) for path in dict.fromkeys(candidates))
    )
    found: dict[str, ServerFacts] = {}
    for facts in answers:
        if facts is not None and facts.socket_path is not None:
            kept = found.get(facts.socket_path)
            if kept is None or (kept.socket_name is None and facts.socket_name is not None):
                found[facts.socket_path] = facts
    return [found[path] for path in sorted(found)]


async def _ask(
    server: TmuxServer, path: str, directory: str, limit: asyncio.Semaphore
) -> ServerFacts | None:
    """The server listening on ``path``, or None when none answers there."""
    args = (
        "display-message", "-p", row_format(_Head), THEN,
        "list-windows", "-a", "-F", row_format(_Window),
    )  # fmt: skip
    argv = server.address.host.command([server.binary, "-S", path, *command_arguments(args)])
    async with limit:
        with anyio.move_on_after(ANSWER_SECONDS) as waited:
            status, out, err = await server.run_on_host(argv)
    if waited.cancelled_caught:
        return None
    lines = out.decode(errors="surrogateescape").split("\n")[:-1]
    # a server with no session fails list-windows ("no current target") after the head
    if not lines or (status != 0 and b"no current target" not in err):
        return None
    try:
        head = parse_row(_Head, lines[0])
        windows = parse_rows(_Window, lines[1:])
    except SchemuxError:  # not rows of ours: something else answers on the socket
        return None
    sessions = {
        window.session_id
        for window in windows
        if not is_reserved(window.session_name, window.control, window.window_linked_sessions_list)
    }
    reported = readable(head.socket_path)
    named = os.path.dirname(head.socket_path) == directory
    return ServerFacts(
        is_alive=True,
        socket_name=readable(os.path.basename(head.socket_path)) if named else None,
        socket_path=reported,
        session_count=len(sessions),
        version=readable(head.version),
    )
