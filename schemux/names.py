"""The names schemux gives tmux that a setting can name: a socket name as ``tmux -L``
takes it (and the directory its socket is in), a session name tmux keeps as given, and
schemux's own session's name, which no other session may take."""

from __future__ import annotations

import os
import re

OWNED_SESSION = "_schemux"  # schemux's own session on every server (schemux.tmux.owned_session)
SOCKET_ADDRESS_BYTES = 107  # a Unix socket's path, as sockaddr_un holds it (with its NUL)


def socket_directory() -> str:
    """Where ``tmux -L NAME`` puts its sockets: ``$TMUX_TMPDIR/tmux-UID`` (``/tmp`` by
    default)."""
    base = os.environ.get("TMUX_TMPDIR") or "/tmp"
    return os.path.join(os.path.realpath(base), f"tmux-{os.getuid()}")


def socket_name_problem(name: str) -> str | None:
    """Why ``name`` is not a socket name as ``tmux -L`` takes it (a name in tmux's socket
    directory, never a path), or None when it is one."""
    if name == "":
        return "it is empty"
    if "\x00" in name:
        return "it contains a NUL character"
    if "/" in name:
        return "it contains '/': a name is not a path"
    if name in (".", ".."):
        return "it names a directory"
    path = os.path.join(socket_directory(), name)
    size = len(path.encode("utf-8", "surrogateescape"))
    if size > SOCKET_ADDRESS_BYTES:
        return (
            f"the socket path it makes is {size} bytes long, more than the "
            f"{SOCKET_ADDRESS_BYTES} a Unix socket address holds"
        )
    return None


def agent_name_problem(name: str) -> str | None:
    """Why ``name`` cannot name the agent's session, or None. tmux would rewrite a ``:``
    or ``.`` (they separate a target's parts) and escape a backslash or a control
    character, and tmux 3.3 and 3.4 store ``$`` before a letter, ``_`` or ``{`` as
    ``\\$``, so the session would not have the name asked for."""
    if name == "":
        return "it is empty"
    if name == OWNED_SESSION:
        return f"{OWNED_SESSION!r} is schemux's own session"
    if re.search(r"\$[A-Za-z_{]", name):
        return (
            "it contains '$' before a letter, '_' or '{', which tmux 3.3 and 3.4 store "
            "as '\\$' in a session name"
        )
    for char in name:
        if char in ":.\\":
            return f"it contains {char!r}, which tmux does not keep in a session name"
        if ord(char) < 0x20 or ord(char) == 0x7F:
            return "it contains a control character"
        if 0xDC80 <= ord(char) <= 0xDCFF:
            return "it is not valid UTF-8"
    return None
