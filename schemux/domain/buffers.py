"""The buffer tools' tmux paste buffers (libtmux-mcp's load_buffer, show_buffer,
paste_buffer, delete_buffer and paste_text): the names schemux gives them, their content
in and out, and a paste into a pane.

Each buffer a call stages gets a name of its own: ``schemux_``, 32 random hex digits, then
the caller's label (``buf`` when none; ``[A-Za-z0-9_.-]``, at most 64). Two calls never
share one, and the tools that read, paste or delete a buffer take only a name of that
form, so they never reach a buffer a person or another program made. Such a name is
plain characters, so it reaches tmux as it is (tmux expands no format in a buffer name).

The content goes to tmux as a tmux client's stdin (``load-buffer -``) and comes back as a
client's stdout (``save-buffer -``), byte for byte: it is never an argument of a command
line, so a NUL or any control character stays data. Text is UTF-8 both ways; bytes of a
buffer that are not UTF-8 (one someone else filled) read as U+FFFD.

A paste first takes the pane out of every mode, as typing does (``schemux.panes.keys``);
tmux then writes the buffer to the pane's program, each line feed as a carriage return
(Enter), and with ``bracket`` wrapped in the bracketed-paste sequences when the program
asked for them (a shell then takes the lines as pasted text, not as commands run one by
one). A dead pane is refused: tmux would drop the paste without a word. paste_text's
buffer is deleted by its paste, or when the paste fails or the call is cancelled: it
never outlives the call.
"""

from __future__ import annotations

import contextlib
import re
import uuid
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import TypeVar

import anyio

from schemux.errors import (
    INVALID_ARGUMENTS,
    NotFound,
    SchemuxError,
    TmuxCommandError,
    Unfit,
    preview,
)
from schemux.panes.keys import leaving_modes
from schemux.panes.targets import PaneInfo
from schemux.shell.output import keep_tail
from schemux.tmux.server import TmuxServer

PREFIX = "schemux_"
DEFAULT_LABEL = "buf"
_LABEL = re.compile(r"[A-Za-z0-9_.-]{1,64}")
_NAME = re.compile(rf"{PREFIX}[0-9a-f]{{32}}_[A-Za-z0-9_.-]{{1,64}}")
_NO_BUFFER = re.compile(r"no buffer|unknown buffer")
T = TypeVar("T")


@dataclass(frozen=True)
class BufferText:
    """A buffer's content as show_buffer gives it: its last lines, and how many it left
    out before them."""

    content: str
    dropped_lines: int


def new_name(label: str | None) -> str:
    """A fresh buffer name for ``label`` (see the module's docstring); SchemuxError
    naming logical_name when the label is not of the form."""
    if not label:
        label = DEFAULT_LABEL
    if not _LABEL.fullmatch(label):
        raise SchemuxError(
            f"logical_name {preview(label)} is not a buffer label",
            suggestion="use 1 to 64 of the letters A-Z and a-z, digits, '_', '.' and '-'",
            code=INVALID_ARGUMENTS,
        )
    return f"{PREFIX}{uuid.uuid4().hex}_{label}"


def check_name(name: str) -> None:
    """Refuse, before any tmux work, a buffer name load_buffer did not give."""
    if not _NAME.fullmatch(name):
        raise SchemuxError(
            f"buffer_name {preview(name)} is not a buffer name load_buffer gave",
            suggestion=f"pass buffer_name as load_buffer returned it ({PREFIX}..., 32 hex "
            "digits, '_' and its label); buffers of other names are not this tool's",
            code=INVALID_ARGUMENTS,
        )


def check_content(field: str, content: str) -> None:
    """Refuse, before any tmux work, empty content (the argument ``field``): tmux keeps
    no empty buffer."""
    if not content:
        raise SchemuxError(
            f"{field} is empty: tmux keeps no empty buffer",
            suggestion=f"pass at least one character in {field}",
            code=INVALID_ARGUMENTS,
        )


async def load(server: TmuxServer, name: str, content: str) -> None:
    """Make (or fill again) the buffer ``name`` with ``content`` (not empty:
    ``check_content``)."""
    await server.exchange("load-buffer", "-b", name, "-", given=content.encode())


async def read(server: TmuxServer, name: str, max_lines: int | None) -> BufferText:
    """The last ``max_lines`` lines of the buffer ``name`` (None: all of it), each with
    the line feed that ends it."""
    data = await _named(server, name, server.exchange("save-buffer", "-b", name, "-"))
    pieces = data.decode(errors="replace").split("\n")
    lines = [piece + "\n" for piece in pieces[:-1]] + ([pieces[-1]] if pieces[-1] else [])
    kept, dropped = keep_tail(lines, max_lines)
    return BufferText("".join(kept), dropped)


async def delete(server: TmuxServer, name: str) -> None:
    """Delete the buffer ``name``; NotFound when there is none."""
    await _named(server, name, server.run("delete-buffer", "-b", name))


async def paste(
    server: TmuxServer, pane: PaneInfo, name: str, *, bracket: bool, delete_after: bool
) -> None:
    """Paste the buffer ``name`` into ``pane`` (see the module's docstring), deleting it
    with the paste when ``delete_after``."""
    _check_alive(pane)
    flags = [*(["-p"] if bracket else []), *(["-d"] if delete_after else [])]
    command = [*leaving_modes(pane.pane_id), "paste-buffer", *flags, "-b", name]
    await _named(server, name, server.run(*command, "-t", pane.pane_id))


async def paste_once(server: TmuxServer, pane: PaneInfo, text: str, *, bracket: bool) -> None:
    """Paste ``text`` (not empty: ``check_content``) into ``pane`` through a buffer of
    its own, which never outlives the call."""
    _check_alive(pane)
    name = new_name("paste")
    pasted = False
    try:
        await load(server, name, text)
        await paste(server, pane, name, bracket=bracket, delete_after=True)
        pasted = True
    finally:
        if not pasted:
            with anyio.CancelScope(shield=True):
                await _forget(server, name)


def _check_alive(pane: PaneInfo) -> None:
    if pane.dead:
        raise Unfit(
            f"pane {pane.pane_id} is dead: its program has ended",
            suggestion="paste into a pane whose program runs",
        )


async def _forget(server: TmuxServer, name: str) -> None:
    """Delete the buffer ``name`` if it is there (a load cancelled may or may not have
    made it)."""
    with contextlib.suppress(SchemuxError):
        await server.run("delete-buffer", "-b", name)


async def _named(server: TmuxServer, name: str, work: Awaitable[T]) -> T:
    """``work``'s result; NotFound, instead of tmux's error, when there is no buffer
    ``name``."""
    try:
        return await work
    except TmuxCommandError as error:
        if not _NO_BUFFER.search(error.stderr):
            raise
        raise NotFound(
            f"no buffer {name} on {server.describe()}",
            suggestion="pass a buffer_name load_buffer returned, on its server (socket_name) "
            "and host; a buffer deleted, or pasted by paste_text, is gone",
        ) from None
