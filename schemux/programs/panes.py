"""The tmux commands of a program's pane: making it, setting up its copy, letting it go."""

from __future__ import annotations

import contextlib

from schemux.errors import SchemuxError
from schemux.names import OWNED_SESSION
from schemux.programs.program import ProgramSpec
from schemux.shell.abandoned import PANE_OPTION, link_mark, marked_link, marked_unlink
from schemux.tmux.command import THEN
from schemux.tmux.server import TmuxServer


async def create_pane(server: TmuxServer, spec: ProgramSpec, gate: list[str]) -> list[str]:
    """A new pane running ``gate``; its pane id, window id and process id."""
    # tmux 3.3 applies a window resize to the pane's terminal only after a delay, so a
    # program sized by resize-window would start at the old size: in schemux's own
    # session (whose only clients ignore size), a new window is made at the session's
    # default-size, so that is set for that one new-window and unset in the same call
    sizing: list[str] = []
    unsizing: list[str] = []
    if spec.from_pane is None and (spec.width or spec.height):
        owned = f"={OWNED_SESSION}:"
        size = f"{spec.width or 80}x{spec.height or 24}"
        sizing = ["set-option", "-t", owned, "default-size", size, THEN]
        unsizing = [THEN, "set-option", "-u", "-t", owned, "default-size"]
    # "-c /": tmux expands formats in -c, so the start directory goes to the gate
    created = await server.run(
        *sizing, *_placement(spec), "-d", "-P", "-F", "#{pane_id} #{window_id} #{pane_pid}",
        "-c", "/", *gate, *unsizing,
    )  # fmt: skip
    return created[-1].split()


async def start_copy(
    server: TmuxServer, spec: ProgramSpec, pane_id: str, window_id: str, owner: str, copy: str
) -> tuple[int, int]:
    """Keep the pane after its end, mark it as ``owner``'s, size it (beside another pane),
    and pipe its output to the shell command ``copy``; the pane's size then (columns,
    rows)."""
    setup = [
        "set-option", "-w", "-t", window_id, "remain-on-exit", "on", THEN,
        "set-option", "-p", "-t", pane_id, PANE_OPTION, owner,
    ]  # fmt: skip
    if spec.from_pane is not None and (spec.width or spec.height):
        size = [*(["-x", str(spec.width)] if spec.width else [])]
        size += ["-y", str(spec.height)] if spec.height else []
        if spec.placement == "split":
            setup += [THEN, "resize-pane", "-t", pane_id, *size]
        else:
            setup += [THEN, "resize-window", "-t", window_id, *size]
    lines = await server.run(
        *setup, THEN, "pipe-pane", "-O", "-t", pane_id, copy,
        THEN, "display-message", "-p", "-t", pane_id, "#{pane_width} #{pane_height}",
    )  # fmt: skip
    width, _, height = lines[-1].partition(" ") if lines else ("", "", "")
    return (int(width), int(height)) if width.isdigit() and height.isdigit() else (80, 24)


async def link_for_layouts(server: TmuxServer, window_id: str) -> str | None:
    """Link a program's window made in another session (beside a pane) into ``_schemux``
    too, so that the shared control client, attached there, is told its layout changes
    (tmux tells a control client of its own session's windows only); the server option
    that marks the link as this process's (a later schemux takes away a dead one's, as a
    wait's), or None when tmux refused it."""
    mark = link_mark()
    try:
        await server.run(*marked_link(window_id, mark))
    except SchemuxError:
        return None
    return mark


async def unlink_for_layouts(server: TmuxServer, window_id: str, mark: str) -> None:
    """Take away ``link_for_layouts``'s link and its mark (``marked_unlink``)."""
    with contextlib.suppress(SchemuxError):
        await server.run(*marked_unlink(window_id, mark))


async def kill_pane(server: TmuxServer, pane_id: str) -> None:
    """Remove the pane; nothing when it is gone already."""
    with contextlib.suppress(SchemuxError):
        await server.run("kill-pane", "-t", pane_id)


async def leave_pane(server: TmuxServer, pane_id: str) -> None:
    """Leave the pane to a person: no copy, no longer marked as a program's."""
    with contextlib.suppress(SchemuxError):
        await server.run(
            "pipe-pane", "-t", pane_id, THEN,
            "set-option", "-p", "-u", "-t", pane_id, PANE_OPTION,
        )  # fmt: skip


def _placement(spec: ProgramSpec) -> list[str]:
    if spec.from_pane is None:
        return ["new-window", "-t", f"={OWNED_SESSION}:"]
    if spec.placement == "split":
        return ["split-window", "-t", spec.from_pane]
    return ["new-window", "-t", f"{spec.from_session}:"]
