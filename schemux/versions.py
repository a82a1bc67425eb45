"""Which tmux versions schemux serves, how a version string reads, and whether a running
tmux server and the tmux client that talks to it can be served together.

What a command prints is the server's doing (tmux 3.4 and 3.5 escape it, 3.3 and 3.6 do
not), and so is the protocol's side of a control client; the client binary only relays.
So the server's own version (``#{version}``) is what must be served: a server older than
3.3 is refused, whatever the client on PATH says (a tmux 3.5a client talking to a
running 3.2a server padded its output with spaces). A client of another version than its
server is what an upgrade of tmux leaves while the old server runs: tmux does not
promise that they agree (a 3.7c control client did not exit at the end of its input
from a 3.3a server), so it is said, by ``schemux doctor`` and at first use.
"""

from __future__ import annotations

import re

from schemux.errors import TmuxUnavailable

MINIMUM_VERSION = (3, 3)
SERVED = f"tmux {'.'.join(map(str, MINIMUM_VERSION))} or newer"


def parse_version(text: str) -> tuple[int, int]:
    """``tmux 3.3a`` -> (3, 3); ``tmux next-3.6`` -> (3, 6); ``tmux master`` -> newest."""
    if text.strip().endswith("master"):
        return (999, 0)
    match = re.search(r"(\d+)\.(\d+)", text)
    if match is None:
        raise TmuxUnavailable(f"cannot read the tmux version from {text.strip()!r}")
    return int(match.group(1)), int(match.group(2))


def release(text: str) -> str:
    """The release a version text names, as ``#{version}`` prints it: ``tmux 3.5a`` ->
    ``3.5a``."""
    return text.strip().removeprefix("tmux ").strip()


def server_refusal(server: str, client: str, where: str) -> TmuxUnavailable | None:
    """Why the tmux server on ``where``, of version ``server`` (as ``#{version}`` prints
    it), cannot be served through the client of version ``client`` (``tmux -V``); None
    when it can."""
    try:
        if parse_version(server) >= MINIMUM_VERSION:
            return None
        said = f"is tmux {release(server)}, too old"
    except TmuxUnavailable:  # #{version} is older than some servers (it came in tmux 3.2)
        said = f"printed {server!r} for its version (#{{version}}): it is too old"
    return TmuxUnavailable(
        f"the tmux server on {where} {said}: schemux needs "
        f"{SERVED} (the tmux client it would use is {release(client)}, but what tmux "
        "prints is the server's doing)",
        suggestion="end that server (its sessions end with it) so that a new one is started "
        f"by tmux {release(client)}, or point schemux at another server",
    )


def mismatch(server: str, client: str, where: str) -> str | None:
    """What to say when the server on ``where`` and the client that talks to it are of
    different releases (both served), or None when they are the same."""
    if release(server) == release(client):
        return None
    return (
        f"the tmux server on {where} is tmux {release(server)} but the tmux client is "
        f"tmux {release(client)}: tmux does not promise that different versions agree"
    )


MISMATCH_FIX = (
    "restart the server with the tmux on PATH, or put the server's own tmux first on PATH"
)
