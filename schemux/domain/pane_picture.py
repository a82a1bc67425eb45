"""A pane as a picture: its cells and state read in one tmux command line, drawn as PNG
or SVG off the event loop.

``Pictures`` (one per server, owned by the ``Services``) draws in a worker thread of
its own, one picture at a time: drawing is CPU work (tens of milliseconds for a large
pane) that must not stall the loop, and one worker bounds what pictures take of the
machine. Its painter and fonts are loaded in that thread at the first picture.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Literal

from schemux.domain.pane_moment import pane_moment
from schemux.pictures.cells import Screen, masked, screen_from_capture
from schemux.text.secrets import secret_spans
from schemux.tmux.format import tmux_row
from schemux.tmux.server import TmuxServer

if TYPE_CHECKING:
    from schemux.pictures.raster import PngPainter

PictureFormat = Literal["png", "svg"]
MimeType = Literal["image/png", "image/svg+xml"]
MIME_TYPES: Mapping[PictureFormat, MimeType] = MappingProxyType(
    {"png": "image/png", "svg": "image/svg+xml"}
)


@tmux_row
class PaneState:
    """What a picture says of its pane beside its cells."""

    pane_width: int
    pane_height: int
    cursor_x: int
    cursor_y: int
    cursor_flag: bool
    pane_title: str
    pane_in_mode: bool
    pane_mode: str
    alternate_on: bool


@dataclass(frozen=True)
class Picture:
    """A drawn pane: the image's bytes and type, its size in pixels, the pane's state."""

    data: bytes
    mime_type: MimeType
    pixel_width: int
    pixel_height: int
    state: PaneState
    cursor_visible: bool  # drawn: the pane shows it and no mode hides it


async def read_screen(server: TmuxServer, pane_id: str) -> tuple[Screen, PaneState]:
    """Pane ``pane_id``'s cells (``capture-pane -e -N``: colours and attributes, trailing
    blanks kept) and its state, from one command line, so both are of one moment."""
    state, rows = await pane_moment(server, pane_id, PaneState, "-e", "-N")
    screen = screen_from_capture(
        rows,
        state.pane_width,
        state.pane_height,
        (state.cursor_x, state.cursor_y),
        state.cursor_flag and not state.pane_in_mode,
    )
    return screen, state


class Pictures:
    """Draws screens in a worker thread of its own (made at the first picture, ended by
    ``close``)."""

    def __init__(self) -> None:
        self._executor: ThreadPoolExecutor | None = None
        self._painter: PngPainter | None = None  # touched only in the worker

    def _paint(self, screen: Screen, kind: PictureFormat) -> tuple[bytes, int, int]:
        # Pillow and fontTools are loaded at the first picture, not at every start
        from schemux.pictures.fonts import find_typeface
        from schemux.pictures.raster import PngPainter
        from schemux.pictures.vector import svg_picture

        if self._painter is None:
            self._painter = PngPainter(find_typeface())
        painter = self._painter
        width, height = painter.size(screen)
        if kind == "svg":
            return svg_picture(screen, painter.cell_width, painter.cell_height), width, height
        return painter.paint(screen), width, height

    async def draw(self, screen: Screen, state: PaneState, kind: PictureFormat) -> Picture:
        """``screen`` drawn as ``kind``, in the worker."""
        if self._executor is None:
            self._executor = ThreadPoolExecutor(1, thread_name_prefix="schemux-pictures")
        loop = asyncio.get_running_loop()
        data, width, height = await loop.run_in_executor(self._executor, self._paint, screen, kind)
        return Picture(data, MIME_TYPES[kind], width, height, state, screen.cursor_visible)

    async def picture(
        self, server: TmuxServer, pane_id: str, kind: PictureFormat, *, mask_secrets: bool
    ) -> Picture:
        """Pane ``pane_id`` of ``server`` as it looks now, drawn as ``kind``; with
        ``mask_secrets`` (``--mask-secrets``), each secret's cells drawn as ``*``."""
        screen, state = await read_screen(server, pane_id)
        if mask_secrets:
            screen = masked(screen, secret_spans)
        return await self.draw(screen, state, kind)

    def close(self) -> None:
        """End the worker; a picture being drawn is finished by it, none queued is."""
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None
