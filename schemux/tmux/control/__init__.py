"""tmux control-mode clients: the engine per server, its connection, framing, attacher."""

from typing import TYPE_CHECKING

from schemux.faces import face

if TYPE_CHECKING:
    from schemux.tmux.control.engine import ControlEngine

__all__ = ("ControlEngine",)
__getattr__ = face(__name__, {"ControlEngine": "engine"})
