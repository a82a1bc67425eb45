"""What ``schemux serve`` says on stderr as it starts: one line naming the version, the
tmux server and the transport; a line for each group of host names that reach one tmux
server; and, to a person at a terminal, what this program is."""

from __future__ import annotations

import os

from schemux import __version__
from schemux.config import Settings
from schemux.names import socket_directory

TERMINAL_HINT = """\
schemux: this is an MCP server: an MCP client (Claude Code, Cursor, VS Code, ...) starts it
  and speaks JSON-RPC on its stdin and stdout; see the README for the client configuration.
  To try a tool from a shell instead: schemux call run_command '{"command": "uname -a"}'
  (schemux tools lists them all). Ctrl-C ends this one."""


def tmux_server_text(settings: Settings) -> str:
    """The configured server as a person would name it, with its socket."""
    if settings.socket_path is not None:
        return f"-S {settings.socket_path}"
    name = settings.socket_name
    if settings.host_target is not None or settings.named_hosts:  # in each host's directory
        return f"-L {name}" if name is not None else "default"
    socket = os.path.join(socket_directory(), name or "default")
    return f"-L {name} ({socket})" if name is not None else f"default ({socket})"


def start_line(settings: Settings, tmux_version: str, serving: str) -> str:
    """``serving`` says how and where: "serving MCP on stdio", or the HTTP URL."""
    return f"schemux {__version__}: {serving}; {tmux_version}, server {tmux_server_text(settings)}"


def same_server_lines(settings: Settings) -> list[str]:
    """A line for each group of configured host names that are one target, and so reach
    one tmux server: a pane there takes one run_command call at a time, whichever of them
    it comes by. (Names whose targets differ but reach one server anyway, as two ssh
    aliases of a machine do, are told in the log once both have connected.)"""
    return [
        f"schemux: hosts {', '.join(names)} name the same target, so the same tmux server: "
        "a pane there runs one run_command call at a time, whichever name it comes by"
        for names in settings.fleet.same_targets()
    ]
