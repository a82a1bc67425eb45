"""The manage tools that change what is there without making or closing anything
(libtmux-mcp's): names and titles, which window or pane is current, layouts, sizes,
and where a window or pane is.

Names and titles reach tmux as one argument each and never as a format:
``rename-session``, ``rename-window`` and ``select-pane -T`` expand their text as a
format (``#(...)`` there runs a shell command), so it goes with each ``#`` doubled, and
after ``--`` where it is the command's last argument, so one beginning with ``-`` is a
name. Targets are ids (``$1``, ``@2``, ``%3``) found by comparing names first
(``schemux.domain.tmux_objects``); nothing of schemux's own session is changed.

A layout is one of tmux's names or a layout string tmux printed (``#{window_layout}``,
checksum first): anything else is refused before it is sent, because tmux 3.3a's
server exits on most text that is neither (``tiledx``, ``#``, a wrong checksum), and on
the mirrored layouts' names, which tmux knows from 3.5 on.
"""

from __future__ import annotations

import re
from types import MappingProxyType

from schemux.errors import InvalidArgument, preview
from schemux.panes.targets import PaneInfo
from schemux.shell.idle import prompt_key
from schemux.tmux.command import THEN
from schemux.tmux.format import format_literal, query, tmux_row
from schemux.tmux.server import TmuxServer
from schemux.versions import parse_version

LAYOUTS = ("even-horizontal", "even-vertical", "main-horizontal", "main-vertical", "tiled")
MIRRORED_LAYOUTS = ("main-horizontal-mirrored", "main-vertical-mirrored")
MIRRORED_SINCE = (3, 5)
MAX_SIZE = 10_000
_CUSTOM_LAYOUT = re.compile(r"(?P<checksum>[0-9a-f]{4}),(?P<body>[0-9x,{}\[\]]+)")
_INDEX = re.compile(r"\d{1,6}")
_PANE_DIRECTIONS = MappingProxyType({"up": "-U", "down": "-D", "left": "-L", "right": "-R"})
_WINDOW_DIRECTIONS = MappingProxyType(
    {"next": "next-window", "previous": "previous-window", "last": "last-window"}
)


async def rename_session(server: TmuxServer, session_id: str, new_name: str) -> None:
    await server.run("rename-session", "-t", session_id, "--", format_literal(new_name))


async def rename_window(server: TmuxServer, window_id: str, new_name: str) -> None:
    await server.run("rename-window", "-t", window_id, "--", format_literal(new_name))


async def set_title(server: TmuxServer, pane_id: str, title: str) -> None:
    await server.run("select-pane", "-t", pane_id, "-T", format_literal(title))


async def select_window(
    server: TmuxServer, session_id: str, window_id: str | None, direction: str | None
) -> None:
    """Make ``window_id`` the session's current window, or the one ``direction`` says
    (next, previous, or the last current)."""
    if direction is not None:
        await server.run(_WINDOW_DIRECTIONS[direction], "-t", session_id)
    else:
        await server.run("select-window", "-t", f"{session_id}:{window_id}")


async def select_pane(
    server: TmuxServer, pane_id: str, window_id: str, direction: str | None
) -> None:
    """Make ``pane_id`` its window's active pane; with ``direction``, the pane that way
    of it (up, down, left, right), or the window's last active, next or previous pane."""
    if direction is None:
        await server.run("select-pane", "-t", pane_id)
    elif direction in _PANE_DIRECTIONS:
        await server.run("select-pane", "-t", pane_id, _PANE_DIRECTIONS[direction])
    elif direction == "last":
        await server.run("last-pane", "-t", window_id)
    else:
        await server.run("select-pane", "-t", f"{window_id}.{'+' if direction == 'next' else '-'}")


def check_layout(layout: str) -> None:
    """Refuse ``layout`` when it is neither a name nor a layout string (see the
    module's docstring)."""
    if layout in LAYOUTS or layout in MIRRORED_LAYOUTS:
        return
    custom = _CUSTOM_LAYOUT.fullmatch(layout)
    if custom is None or custom["checksum"] != layout_checksum(custom["body"]):
        raise InvalidArgument(
            f"layout {preview(layout)} is not a layout",
            suggestion=f"pass one of {', '.join(LAYOUTS)}, or a window_layout a window "
            "had, as tmux printed it",
        )


def check_layout_version(layout: str, version: str) -> None:
    """Refuse a mirrored layout on a tmux (``version``) that lacks it."""
    if layout in MIRRORED_LAYOUTS and parse_version(version) < MIRRORED_SINCE:
        raise InvalidArgument(
            f"layout {layout!r} is not one tmux {version} has (it came in tmux 3.5)",
            suggestion=f"pass one of {', '.join(LAYOUTS)}",
        )


def layout_checksum(body: str) -> str:
    """tmux's checksum of a layout string's body (``layout_checksum``: 16 bits)."""
    checksum = 0
    for byte in body.encode():
        checksum = ((checksum >> 1) + ((checksum & 1) << 15) + byte) & 0xFFFF
    return f"{checksum:04x}"


async def select_layout(server: TmuxServer, window_id: str, layout: str) -> None:
    await server.run("select-layout", "-t", window_id, "--", layout)


def size_flags(width: int | None, height: int | None) -> tuple[str, ...]:
    """``-x`` and ``-y`` for the sizes given."""
    flags: list[str] = []
    if width is not None:
        flags += ["-x", str(width)]
    if height is not None:
        flags += ["-y", str(height)]
    return tuple(flags)


@tmux_row
class _Zoom:
    window_zoomed_flag: bool


async def resize_pane(
    server: TmuxServer, pane_id: str, size: tuple[int | None, int | None], zoom: bool | None
) -> None:
    """Resize the pane to ``size`` (width, height; None: as it is), then zoom or unzoom
    it when ``zoom`` says to and its window is not so already."""
    commands: list[str] = []
    zoomed = None
    if size != (None, None):
        commands += ["resize-pane", "-t", pane_id, *size_flags(*size)]
        zoomed = False  # tmux unzooms a window whose pane is resized
    elif zoom is not None:
        rows = await query(server, _Zoom, "display-message", "-t", pane_id)
        zoomed = bool(rows) and rows[0].window_zoomed_flag
    if zoom is not None and zoom != zoomed:
        commands += [*([THEN] if commands else []), "resize-pane", "-Z", "-t", pane_id]
    if commands:
        await server.run(*commands)


async def resize_window(
    server: TmuxServer, window_id: str, width: int | None, height: int | None
) -> None:
    await server.run("resize-window", "-t", window_id, *size_flags(width, height))


def destination_index(index: str) -> str:
    """``index`` (digits, or empty for the first free one) as ``move-window``'s target
    takes it; InvalidArgument naming it otherwise."""
    if index != "" and not _INDEX.fullmatch(index):
        raise InvalidArgument(
            f"destination_index {preview(index)} is not a window index",
            suggestion="pass the index as digits, such as '3', or omit it for the first free one",
        )
    return index


async def move_window(
    server: TmuxServer, session_id: str, window_id: str, to_session_id: str, to_index: str
) -> None:
    await server.run(
        "move-window", "-s", f"{session_id}:{window_id}", "-t", f"{to_session_id}:{to_index}"
    )


async def swap_panes(server: TmuxServer, source_pane_id: str, target_pane_id: str) -> None:
    """Swap the two panes' places; which pane is active stays as it was."""
    await server.run("swap-pane", "-d", "-s", source_pane_id, "-t", target_pane_id)


async def clear(server: TmuxServer, pane: PaneInfo) -> None:
    """The pane's screen reset and its history gone (``send-keys -R``, which types
    nothing, then ``clear-history``), a mode it was in (copy mode) left first; then an
    idle shell's prompt shown again (``prompt_key``, where the host's /proc is this
    machine's), as run_command finds a shell by its prompt."""
    key = prompt_key(pane) if server.address.host.pids_here else None
    await server.run(
        "copy-mode", "-q", "-t", pane.pane_id, THEN,
        "send-keys", "-R", "-t", pane.pane_id, THEN,
        "clear-history", "-t", pane.pane_id,
        *([THEN, "send-keys", "-t", pane.pane_id, key] if key else []),
    )  # fmt: skip


async def enter_copy_mode(server: TmuxServer, pane_id: str, scroll_up: int | None) -> None:
    """The pane in copy mode (staying there if it is), scrolled up ``scroll_up`` lines."""
    scrolling = ["send-keys", "-X", "-N", str(scroll_up), "-t", pane_id, "scroll-up"]
    await server.run("copy-mode", "-t", pane_id, *([THEN, *scrolling] if scroll_up else []))


async def exit_copy_mode(server: TmuxServer, pane_id: str) -> None:
    """The pane out of copy mode, or any other mode it is in; nothing if in none."""
    await server.run("copy-mode", "-q", "-t", pane_id)
