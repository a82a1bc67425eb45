"""A tmux option or hook read back at a scope, or an option set there: show_option,
show_hooks, show_hook and set_option (libtmux-mcp's, over ``show-options``,
``show-hooks`` and ``set-option``).

A scope is the server's, a session's, a window's or a pane's; its object is the call's
``target`` (a session by name, a window or pane by id), or, with none, the agent pane's
(``schemux.panes.targets``); with no scope, the object is the agent's pane and tmux
tells the scope from the option's name (a user option, ``@...``, is a session's).
``global_`` reads the global options of the scope instead, and takes no target. A
session's name is compared, never given to tmux. The option or hook name is given after
``--``, so a name beginning with ``-`` is read as a name, with each ``#`` doubled:
``show-options``, ``show-hooks`` and ``set-option`` expand their name as a format, where
``#{...}`` would be replaced and ``#(...)`` run as a shell command (``##`` is a ``#``).
A value set is given as it is: without ``-F``, ``set-option`` stores it verbatim. The
options schemux keeps its own marks in (``@schemux...``) are never set by a call.

An option's value is the one in effect there (``show-options -A``: inherited from the
global options when the object does not set it), and null when it has none (a user
option that is not set). As libtmux reads it, a number is a number and ``on`` or
``off`` a boolean; an array option (``status-format``) is an object of its indexes. The
values are read from ``show-options``' own lines, where tmux quotes a string value as its
command language does (``-v`` prints it raw on tmux 3.3a, and on 3.4+ through an escaping
pass that does not double a backslash: ambiguous).

The server's hooks are the global ones, which tmux keeps in two trees (``-g``, and
``-gw`` for windows' and panes'): both are read and merged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal

from schemux.audit.log import CallRecord
from schemux.domain.tmux_objects import read_objects, session_named_or_id
from schemux.errors import SchemuxError, Unfit, preview
from schemux.panes.targets import PaneTarget, resolve_pane
from schemux.tmux.format import format_literal, readable, unquoted
from schemux.tmux.server import TmuxServer

Scope = Literal["server", "session", "window", "pane"]
_SCOPE_FLAGS = MappingProxyType(
    {"server": ("-s",), "session": (), "window": ("-w",), "pane": ("-p",)}
)
OWN_OPTIONS = "@schemux"  # the start of the name of each option schemux marks objects with
# a hook set at an index: ``NAME[INDEX] COMMAND``; an unset one is its name alone
_HOOK = re.compile(r"(?P<name>[^\s\[]+)(?:\[(?P<index>\d+)\])? (?P<command>.*)")


@dataclass(frozen=True)
class Place:
    """Where an option or hook is read: the flags of ``show-options`` / ``show-hooks``."""

    flags: tuple[str, ...]


@dataclass(frozen=True)
class HookFacts:
    hook_name: str
    index: int | None
    command: str


async def place(
    server: TmuxServer,
    scope: Scope | None,
    target: str | None,
    global_: bool,
    notes: CallRecord | None,
) -> Place:
    """Where ``scope`` and ``target`` (and ``global_``) say to read; SchemuxError naming
    the argument when they do not go together or name nothing."""
    if target is not None and scope is None:
        raise SchemuxError("target needs a scope", suggestion="pass scope with target")
    if target is not None and (global_ or scope == "server"):
        raise SchemuxError(
            "target is given with " + ("global_" if global_ else "scope 'server'"),
            suggestion="a global or server option belongs to no session, window or pane: "
            "leave target out",
        )
    flags = _SCOPE_FLAGS[scope] if scope is not None else ()
    if global_:
        return Place((*flags, "-g"))
    if scope == "server":
        return Place(flags)
    return Place((*flags, "-t", await _object(server, scope, target, notes)))


async def _object(
    server: TmuxServer, scope: Scope | None, target: str | None, notes: CallRecord | None
) -> str:
    """The id of the session, window or pane ``target`` names at ``scope`` (checked to
    exist), or the agent pane's (its pane's id when there is no scope)."""
    if scope == "session" and target is not None:
        session, _ = await session_named_or_id(server, target, None)
        return session.session_id
    if target is not None:
        name = "window_id" if scope == "window" else "pane_id"
        PaneTarget(**{name: target}).validate()
        objects = await read_objects(server)
        ids = {window.window_id for window in objects.windows}
        if scope == "pane":
            ids = {pane.pane_id for pane in objects.panes}
        if target not in ids:
            raise SchemuxError(
                f"target: no {scope} {target!r} on {objects.where}",
                suggestion=f"pass the id of a {scope} that exists",
            )
        if scope == "pane" and notes is not None:
            notes.note_pane(target)
        return target
    pane = await resolve_pane(server, PaneTarget(), notes)
    if scope == "session":
        return pane.session_id
    if scope == "window":
        return pane.window_id
    return pane.pane_id


async def option_value(server: TmuxServer, where: Place, option: str) -> Any:
    """The value of ``option`` at ``where`` (see the module's docstring)."""
    quiet = ("-q",) if option.startswith("@") else ()  # a user option may be unset
    inherited = () if "-g" in where.flags or "-s" in where.flags else ("-A",)
    flags = (*where.flags, *inherited, *quiet)
    shown = await server.run("show-options", *flags, "--", format_literal(option))
    values = dict(_option_entry(line) for line in shown)
    if not values:
        return None
    if list(values) == [option]:
        return values[option]
    return {key[key.index("[") + 1 : -1]: value for key, value in values.items() if "[" in key}


async def set_value(server: TmuxServer, where: Place, option: str, value: str) -> None:
    """Set ``option`` to ``value`` at ``where`` (see the module's docstring)."""
    await server.run("set-option", *where.flags, "--", format_literal(option), value)


def _option_entry(line: str) -> tuple[str, Any]:
    """The option and value of a ``show-options`` line (``NAME VALUE``, ``NAME[I]
    VALUE``; ``*`` marks one inherited): a string value as tmux quoted it there
    (``tmux.format.unquoted``), so one holding a newline or a backslash comes back whole
    on every tmux version."""
    name, _, value = line.partition(" ")
    return name.removesuffix("*"), converted(readable(unquoted(value)))


def converted(value: str) -> Any:
    """An option's text as libtmux gives it: digits a number, on and off booleans."""
    if value.isdigit():
        return int(value)
    if value in ("on", "off"):
        return value == "on"
    return value


def hook_places(where: Place, scope: Scope | None) -> list[Place]:
    """The places the hooks of ``where`` are read at: the server's are both global
    trees."""
    if scope != "server":
        return [where]
    return [Place(("-g",)), Place(("-g", "-w"))]


async def hook_entries(
    server: TmuxServer, places: list[Place], hook_name: str | None = None
) -> list[HookFacts]:
    """The hooks set at ``places`` (only ``hook_name``'s, when given), each index once,
    by name then index."""
    name = ("--", format_literal(hook_name)) if hook_name is not None else ()
    found: dict[tuple[str, int | None], HookFacts] = {}
    for where in places:
        for line in await server.run("show-hooks", *where.flags, *name):
            entry = _hook(line)
            if entry is not None:
                found.setdefault((entry.hook_name, entry.index), entry)
    return sorted(found.values(), key=lambda entry: (entry.hook_name, entry.index or 0))


def _hook(line: str) -> HookFacts | None:
    """One line of ``show-hooks``: a hook set (at an index), or None for one unset."""
    match = _HOOK.fullmatch(line)
    if match is None:
        return None
    index = match.group("index")
    return HookFacts(
        hook_name=readable(match.group("name")),
        index=None if index is None else int(index),
        command=readable(match.group("command")),
    )


def check_settable(option: str) -> None:
    """Refuse an option of schemux's own marks (a program's pane, a claimed pane, the
    agent's pane) before any tmux work: set by a call, it would mislead schemux."""
    if option.startswith(OWN_OPTIONS):
        raise Unfit(
            f"option {preview(option)} is schemux's own",
            suggestion=f"choose a user option whose name does not begin with {OWN_OPTIONS}",
        )


def check_name(field: str, name: str) -> None:
    """Refuse an empty option or hook name before any tmux work."""
    if not name:
        raise SchemuxError(f"{field} is empty", suggestion=f"pass the {field.replace('_', ' ')}")
    if "\n" in name:
        raise SchemuxError(
            f"{field} {preview(name)} holds a newline", suggestion="pass one name, on one line"
        )
