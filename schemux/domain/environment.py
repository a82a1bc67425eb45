"""show_environment and set_environment: the environment tmux gives the processes a
session starts, read or set.

That is the server's global environment with the session's own over it
(``show-environment -g``, then ``-t``): a variable the session sets wins, and one it
removes (``set-environment -r``, or those ``update-environment`` names that the
attaching client lacked) is ``false``, as tmux leaves it out of new panes' environment.
Hidden variables (``-h``) are not shown, as tmux does not show them.

tmux prints both in its shell form (``-s``), whose quoting keeps a value holding a
newline or a quote whole; this module reads it back exactly.

A variable is set in the session's own environment (``set-environment -t``), its name and
value each one argument after ``--``: without ``-F`` tmux expands nothing in either.
"""

from __future__ import annotations

import re

from schemux.errors import SchemuxError, preview
from schemux.tmux.format import readable, unescaped
from schemux.tmux.server import TmuxServer

# ``NAME="VALUE"; export NAME;`` (tmux escapes $ ` " and \ in VALUE with a backslash,
# and tmux 3.4+ a control as it prints: ``tmux.format.unescaped``), or ``unset NAME;`` for
# a variable removed
_ENTRY = re.compile(
    r'unset (?P<gone>[^\n]*);\n|(?P<name>[^\n]*?)="(?P<value>(?:[^"\\]|\\.)*)"; export [^\n]*;\n',
    re.DOTALL,
)


def parse_environment(text: str) -> dict[str, str | bool]:
    """The variables of ``show-environment -s``'s output (its lines joined, each ended by
    a newline): a value, or ``False`` for a variable removed."""
    variables: dict[str, str | bool] = {}
    position = 0
    while position < len(text):
        entry = _ENTRY.match(text, position)
        if entry is None:
            seen = text[position : position + 40]
            raise SchemuxError(f"tmux printed an environment schemux cannot read: {seen!r}")
        if entry.group("gone") is not None:
            variables[readable(entry.group("gone"))] = False
        else:
            value = unescaped(entry.group("value"))
            variables[readable(entry.group("name"))] = readable(value)
        position = entry.end()
    return variables


async def session_environment(server: TmuxServer, session_id: str) -> dict[str, str | bool]:
    """The environment new processes of the session ``session_id`` get, with what it
    removes (see the module's docstring)."""
    merged: dict[str, str | bool] = {}
    for where in (("-g",), ("-t", session_id)):
        lines = await server.run("show-environment", "-s", *where)
        merged.update(parse_environment("".join(f"{line}\n" for line in lines)))
    return merged


def check_variable_name(name: str) -> None:
    """Refuse a name no process could read as one variable (empty, holding ``=`` or a
    line break) before any tmux work."""
    if not name:
        raise SchemuxError("name is empty", suggestion="pass the variable's name")
    for character, said in (("=", "an '='"), ("\n", "a newline")):
        if character in name:
            raise SchemuxError(
                f"name {preview(name)} holds {said}",
                suggestion="pass the variable's name alone; its value goes in value",
            )


async def set_variable(server: TmuxServer, session_id: str, name: str, value: str) -> None:
    """Set ``name`` to ``value`` in the environment of the session ``session_id``."""
    await server.run("set-environment", "-t", session_id, "--", name, value)
