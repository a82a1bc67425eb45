"""A command in a pane's interactive shell, hooked or wrapped, its output read exactly."""

from typing import TYPE_CHECKING

from schemux.faces import face

if TYPE_CHECKING:
    from schemux.shell.commands import ShellCommandResult, run_in_shell

__all__ = ("ShellCommandResult", "run_in_shell")
__getattr__ = face(__name__, {"ShellCommandResult": "commands", "run_in_shell": "commands"})
