"""Finding the pane a call means, typing into it, and holding it for one caller."""

from typing import TYPE_CHECKING

from schemux.faces import face

if TYPE_CHECKING:
    from schemux.panes.targets import PaneInfo, PaneTarget, resolve_pane

__all__ = ("PaneInfo", "PaneTarget", "resolve_pane")
__getattr__ = face(
    __name__, {"PaneInfo": "targets", "PaneTarget": "targets", "resolve_pane": "targets"}
)
