"""A pane's state and its screen of one moment: a ``display-message`` row and the
``capture-pane`` after it in one command line (tmux runs it whole, taking no pane output
in between), read by ``snapshot_pane`` and ``picture_pane``."""

from __future__ import annotations

from schemux.errors import SchemuxError, TmuxCommandError
from schemux.tmux.command import THEN
from schemux.tmux.format import R, parse_row, row_format
from schemux.tmux.server import TmuxServer


async def pane_moment(
    server: TmuxServer, pane_id: str, row: type[R], *capture_flags: str
) -> tuple[R, list[str]]:
    """Pane ``pane_id``'s ``row`` (a ``tmux_row`` class) and its screen's rows, as
    ``capture-pane -p`` with ``capture_flags`` prints them; a pane closed meanwhile is a
    SchemuxError that says so."""
    try:
        lines = await server.run(
            "display-message", "-p", "-t", pane_id, row_format(row),
            THEN, "capture-pane", *capture_flags, "-p", "-t", pane_id,
        )  # fmt: skip
    except TmuxCommandError as error:
        if error.target_gone:
            raise SchemuxError(f"pane {pane_id} was closed") from None
        raise
    return parse_row(row, lines[0]), lines[1:]
