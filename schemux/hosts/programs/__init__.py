"""The host side of programs: the gate a program's pane runs, where its files live."""

from typing import TYPE_CHECKING

from schemux.faces import face

if TYPE_CHECKING:
    from schemux.hosts.programs.host import ProgramHost

__all__ = ("ProgramHost",)
__getattr__ = face(__name__, {"ProgramHost": "host"})
