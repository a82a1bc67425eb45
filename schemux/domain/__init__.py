"""What the tools do: captures, snapshots, waits, channels, fan-out, the call's context."""

from typing import TYPE_CHECKING

from schemux.faces import face

if TYPE_CHECKING:
    from schemux.domain.call import Call
    from schemux.domain.services import Services

__all__ = ("Call", "Services")
__getattr__ = face(__name__, {"Call": "call", "Services": "services"})
