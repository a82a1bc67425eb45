"""Talking to one tmux server: commands, formats, references, and its control clients."""

from typing import TYPE_CHECKING

from schemux.faces import face

if TYPE_CHECKING:
    from schemux.tmux.server import ServerAddress, TmuxServer

__all__ = ("ServerAddress", "TmuxServer")
__getattr__ = face(__name__, {"ServerAddress": "server", "TmuxServer": "server"})
