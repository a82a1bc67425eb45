"""The teardown tools (libtmux-mcp's kill_pane, kill_window, kill_session and
kill_server): what each closes, and what none of them may.

Nothing of schemux's own session is closed (its control clients' window, the programs
it runs: their tools stop those), nor a pane a live run_command call holds or a program
schemux started runs in, nor what this MCP server itself runs in (its ``TMUX`` names the
server and pane). A window or session is refused when any of its panes is.

A server is killed only once it is identified as the one the call means: it runs (it is
never started to be killed), it reports the socket path the call's address makes (the
configured socket path, or the name in tmux's socket directory), and this MCP server
does not run inside it. It is then told to kill itself only if it is still that server
(its pid and start time, tested by tmux itself in the same command), over the control
client attached to it, so a server started anew on the socket in between is never
killed; and it is checked to be gone afterwards.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from schemux.errors import ConnectionLost, NotFound, SchemuxError, ServerUnavailable, Unfit
from schemux.names import socket_directory
from schemux.tmux.references import IDENTITY_FORMAT, ServerIdentity
from schemux.tmux.server import TmuxServer

_STILL_THERE = "still-there"  # what the conditional kill prints when the server is another


def refuse_caller(what: str, holds_caller: bool) -> None:
    """Refuse to close ``what`` when it holds the pane this MCP server runs in."""
    if holds_caller:
        raise Unfit(
            f"{what} holds the pane this MCP server runs in: closing it would end the server",
            suggestion="close another pane, window or session",
        )


async def kill(server: TmuxServer, command: str, target: str) -> None:
    """``kill-pane``, ``kill-window`` or ``kill-session`` of ``target`` (an id); NotFound
    when it went meanwhile."""
    try:
        await server.run(command, "-t", target)
    except SchemuxError as error:
        if "can't find" in error.message or "no such" in error.message:
            raise NotFound(f"{target} is gone: {error.message}") from None
        raise


async def identified_server(server: TmuxServer, env: Mapping[str, str]) -> ServerIdentity:
    """The running server ``server``'s address means, as it reports itself; SchemuxError
    when none runs there, it is not one the address means, or this MCP server runs in it
    (see the module's docstring)."""
    where = server.address.describe()
    if not await server.running():
        raise NotFound(f"no tmux server is running on {where}: there is nothing to kill")
    lines = await server.run("display-message", "-p", IDENTITY_FORMAT)
    try:
        identity = ServerIdentity.parse("\n".join(lines))
    except (SchemuxError, ValueError):
        raise Unfit(
            f"the tmux server on {where} did not say which server it is: it is not killed",
            suggestion="kill it from a terminal if it is the one you mean",
        ) from None
    expected = _socket_path(server)
    if not _same_socket(server, identity.socket_path, expected):
        raise Unfit(
            f"the tmux server on {where} reports the socket {identity.socket_path!r}, not "
            f"{expected!r}: it cannot be told to be the one meant, and is not killed",
            suggestion="kill it from a terminal if it is the one you mean",
        )
    own = env.get("TMUX", "").split(",", 1)[0]
    if own and server.address.host.files_here and _same_file(own, identity.socket_path):
        raise Unfit(
            f"this MCP server runs inside the tmux server on {where} (its TMUX names it): "
            "killing it would end this server too",
            suggestion="kill it from a terminal after this MCP server has ended",
        )
    return identity


# how long a kill waits for schemux's own clients of the killed server to read their end
CLIENTS_END_SECONDS = 5.0


async def kill_identified(server: TmuxServer, identity: ServerIdentity) -> None:
    """Have the server kill itself if it is still ``identity``'s (pid and start time,
    tested by tmux), then check it is gone; Unfit when it was another."""
    still = f"#{{&&:#{{==:#{{pid}},{identity.pid}}},#{{==:#{{start_time}},{identity.start_time}}}}}"
    try:
        said = await server.run(
            "if-shell", "-F", still, "kill-server", f"display-message -p {_STILL_THERE}"
        )
    except (ConnectionLost, ServerUnavailable):
        said = []  # the server ended with its answer unsent: what a kill does
    where = server.address.describe()
    if _STILL_THERE in said:
        raise Unfit(
            f"the tmux server on {where} is another than the one identified a moment ago "
            f"(pid {identity.pid}): it is not killed",
            suggestion="call again to identify the server there now",
        )
    if await server.running():
        lines = await server.run("display-message", "-p", IDENTITY_FORMAT)
        if ServerIdentity.parse("\n".join(lines)) == identity:
            raise SchemuxError(f"the tmux server on {where} (pid {identity.pid}) still runs")
        return
    # gone: its clients of ours read their end before the next call uses one
    await server.engine.until_ended(CLIENTS_END_SECONDS)


def _socket_path(server: TmuxServer) -> str:
    """The socket path the server's address means: the configured one, or the name (or
    ``default``) in tmux's socket directory, where it is this machine's."""
    address = server.address
    if address.socket_path is not None:
        return address.socket_path
    name = address.socket_name or "default"
    return os.path.join(socket_directory(), name) if address.host.files_here else name


def _same_socket(server: TmuxServer, reported: str, expected: str) -> bool:
    """Whether the server's ``reported`` socket is the ``expected`` one: the same file
    on this machine; elsewhere (another host's socket directory), the same name, or the
    same configured path."""
    if server.address.host.files_here:
        return _same_file(reported, expected)
    if server.address.socket_path is not None:
        return reported == expected
    return os.path.basename(reported) == expected


def _same_file(first: str, second: str) -> bool:
    try:
        return os.path.samefile(first, second)
    except (OSError, ValueError):
        return False
