"""tmux commands as schemux writes them: structural command lists, quoted arguments.

A command list is a sequence of arguments in which only ``THEN`` separates commands.
``command_line`` writes one for a control-mode client (every argument quoted for tmux's
command parser); ``command_arguments`` writes one as a tmux client process's own
arguments. Either way each argument reaches tmux verbatim, and an argument tmux cannot
take (a NUL character) is refused before anything is sent.
"""

from __future__ import annotations

import re
from typing import Final

from schemux.errors import UnsendableArgument

_SPECIAL = re.compile("['\x00-\x1f\x7f\udc80-\udcff]")


def _escape(match: re.Match[str]) -> str:
    char = match.group(0)
    if char == "'":
        return "'\\''"
    if char == "\x00":
        raise ValueError("a tmux argument cannot contain a NUL character")
    code = ord(char)
    byte = code - 0xDC00 if code >= 0xDC80 else code  # surrogateescape'd byte
    return f"'\\{byte:03o}'"


def quote_argument(argument: str) -> str:
    """``argument`` as one token of tmux's command parser, taken verbatim.

    Inside single quotes tmux expands nothing (no ``$``, ``~``, ``\\``, ``#``, ``;``);
    a quote, control characters and undecodable bytes go outside the quotes as backslash
    escapes (``\\'``, octal ``\\012``), which tmux's parser reads as the byte itself.
    """
    return "'" + _SPECIAL.sub(_escape, argument) + "'"


class _Separator(str):
    """The one value ``command_line`` writes as tmux's command separator."""

    __slots__ = ()


THEN: Final[str] = _Separator(";")
"""Between two commands of one line: ``run("a", THEN, "b")``. Command lists are
structural: only this object separates; an argument that merely equals ``";"`` (a
program's argv, say) is quoted like any other."""


def is_separator(arg: str) -> bool:
    """Whether ``arg`` is ``THEN`` (and not merely a ``";"``)."""
    return type(arg) is _Separator


def command_line(args: tuple[str, ...] | list[str]) -> bytes:
    """One control-mode line: every argument quoted, ``THEN`` written as a separator.

    Raises ValueError (before anything is queued or written) for an argument tmux cannot
    be given: one with a NUL character.
    """
    text = " ".join(";" if is_separator(arg) else quote_argument(arg) for arg in args)
    return text.encode("utf-8", "surrogateescape") + b"\n"


def _unsendable(args: tuple[str, ...] | list[str], reason: str) -> UnsendableArgument:
    return UnsendableArgument(
        f"tmux {args[0] if args else ''} cannot be sent: {reason}",
        suggestion="remove the NUL character from the value",
    )


def encode_command(args: tuple[str, ...] | list[str]) -> bytes:
    """``command_line``, with an argument tmux cannot take refused as a SchemuxError."""
    try:
        return command_line(args)
    except ValueError as error:
        raise _unsendable(args, str(error)) from None


def split_commands(args: tuple[str, ...] | list[str]) -> list[list[str]]:
    """The commands of a structural command list (separated by ``THEN``)."""
    commands: list[list[str]] = [[]]
    for arg in args:
        if is_separator(arg):
            commands.append([])
        else:
            commands[-1].append(arg)
    return commands


def command_arguments(args: tuple[str, ...]) -> list[str]:
    """A command list as a tmux client's own arguments, each taken verbatim.

    On tmux's command line an argument ending in ``;`` ends a command (its ``;`` is
    dropped), and one ending in ``\\;`` keeps a ``;``; so ``THEN`` becomes ``;`` and any
    other argument ending in ``;`` gets a backslash before it. Nothing else is parsed
    there: no quotes, no ``#{...}`` of the arguments as such.
    """
    arguments = []
    for arg in args:
        if is_separator(arg):
            arguments.append(";")
        elif "\x00" in arg:
            raise _unsendable(args, "an argument contains a NUL character")
        elif arg.endswith(";"):
            arguments.append(arg[:-1] + "\\;")
        else:
            arguments.append(arg)
    return arguments
