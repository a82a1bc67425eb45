"""This machine: /proc, tethered children, private files, and this process's identity."""

from typing import TYPE_CHECKING

from schemux.faces import face

if TYPE_CHECKING:
    from schemux.system.processes import Owner

__all__ = ("Owner",)
__getattr__ = face(__name__, {"Owner": "processes"})
