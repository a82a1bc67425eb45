"""A screen drawn as PNG with Pillow, one cell ``CELL_WIDTH`` pixels wide.

Pillow (FreeType underneath) because it draws text and rectangles and writes PNG with
no system library of its own to install, in wheels for every platform. The font size is
the one at which the typeface's advance is exactly ``CELL_WIDTH`` pixels, so a run of
cells of one style is drawn in one call and still falls on the cell grid; text is laid
out by Pillow's basic engine (no shaping: a ligature would join two cells). A character
the typeface lacks is drawn from its fallback font (CJK) when it has one, at the size
whose ideograph fits its two cells and the cell's height, centred; else as a box. Drawing
holds no lock: a painter is used by one thread at a time (its owner's one worker).
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

from schemux.pictures.cells import Cell, Screen, Style
from schemux.pictures.fonts import BOLD_WEIGHT, Typeface, characters_of
from schemux.pictures.theme import CURSOR, DEFAULT_BG, RGB, cell_colours

CELL_WIDTH = 9  # pixels
PNG_COMPRESSION = 1  # zlib's fastest: a screen's flat colours compress well at any level
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
MAX_MASKS = 4096  # runs of text a painter keeps drawn (a few MB): then it starts again


@dataclass(frozen=True)
class _Ink:
    """What a style draws with."""

    fg: RGB
    bg: RGB
    face: tuple[bool, bool]  # bold, italic
    font: ImageFont.FreeTypeFont
    characters: frozenset[int]
    style: Style


def png_bytes(image: Image.Image) -> bytes:
    """An RGB image as PNG, each row unfiltered. Pillow's encoder tries four filters on
    every row and keeps the best, which took half a picture's time; on a screen's flat
    colours, rows as they are compress as well (smaller, here) in half the time."""
    width, height = image.size
    raw = image.tobytes()
    stride = width * 3
    rows = b"".join(b"\x00" + raw[start : start + stride] for start in range(0, len(raw), stride))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8-bit RGB
    return b"".join(
        (
            _PNG_SIGNATURE,
            _png_chunk(b"IHDR", header),
            _png_chunk(b"IDAT", zlib.compress(rows, PNG_COMPRESSION)),
            _png_chunk(b"IEND", b""),
        )
    )


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


class PngPainter:
    """Draws screens as PNG in ``typeface``; its fonts are loaded when it is made."""

    def __init__(
        self, typeface: Typeface, cell_width: int = CELL_WIDTH, kept_runs: int = MAX_MASKS
    ) -> None:
        """``kept_runs``: how many runs of text drawn it keeps to draw again (``_mask``)."""
        self.typeface = typeface
        self.kept_runs = kept_runs
        regular = typeface.faces[(False, False)]
        unit = ImageFont.truetype(str(regular), 1000, layout_engine=ImageFont.Layout.BASIC)
        size = cell_width / (unit.getlength("M") / 1000)
        self._fonts: dict[tuple[bool, bool], ImageFont.FreeTypeFont] = {}
        self._characters: dict[tuple[bool, bool], frozenset[int]] = {}
        for key, path in typeface.faces.items():
            font = ImageFont.truetype(str(path), size, layout_engine=ImageFont.Layout.BASIC)
            if typeface.variable:
                font.set_variation_by_axes([BOLD_WEIGHT if key[0] else 400])
            self._fonts[key] = font
            self._characters[key] = characters_of(path)
        ascent, descent = self._fonts[(False, False)].getmetrics()
        self.cell_width = cell_width
        self.cell_height = ascent + descent
        self._ascent = ascent
        # each run of text drawn, by face and text: its coverage and offset (``_mask``)
        self._masks: dict[tuple[tuple[bool, bool], str], tuple[Image.Image, int, int]] = {}
        self._fallback: tuple[ImageFont.FreeTypeFont, frozenset[int], float] | None = None
        if typeface.fallback is not None:
            self._fallback = self._fallback_font(*typeface.fallback)

    def _fallback_font(
        self, path: Path, index: int
    ) -> tuple[ImageFont.FreeTypeFont, frozenset[int], float]:
        """The fallback font at the size whose ideograph fits two cells and one cell's
        height, its characters, and how far down its text goes to be centred in a cell."""

        def font(size: float) -> ImageFont.FreeTypeFont:
            return ImageFont.truetype(
                str(path), size, index=index, layout_engine=ImageFont.Layout.BASIC
            )

        unit = font(1000)
        ascent, descent = unit.getmetrics()
        size = min(
            2 * self.cell_width / (unit.getlength("\u4e00") / 1000),
            self.cell_height / ((ascent + descent) / 1000),
        )
        scaled = font(size)
        ascent, descent = scaled.getmetrics()
        return scaled, characters_of(path, index), (self.cell_height - ascent - descent) / 2

    def size(self, screen: Screen) -> tuple[int, int]:
        """The picture's width and height in pixels."""
        return screen.width * self.cell_width, screen.height * self.cell_height

    def paint(self, screen: Screen) -> bytes:
        """``screen`` as PNG bytes."""
        image = Image.new("RGB", self.size(screen), DEFAULT_BG)
        draw = ImageDraw.Draw(image)
        inks: dict[Style, _Ink] = {}
        for y, row in enumerate(screen.rows):
            top = y * self.cell_height
            cells = [(cell, self._ink(cell.style, inks)) for cell in row]
            self._backgrounds(draw, top, cells)
            self._texts(draw, top, cells)
        if screen.cursor_visible and 0 <= screen.cursor_y < screen.height:
            self._cursor(draw, screen, inks)
        return png_bytes(image)

    def _ink(self, style: Style, inks: dict[Style, _Ink]) -> _Ink:
        ink = inks.get(style)
        if ink is None:
            fg, bg = cell_colours(style)
            key = (style.bold, style.italic)
            ink = inks[style] = _Ink(fg, bg, key, self._fonts[key], self._characters[key], style)
        return ink

    def _backgrounds(
        self, draw: ImageDraw.ImageDraw, top: int, cells: list[tuple[Cell, _Ink]]
    ) -> None:
        """Each run of cells with one background other than the default, one rectangle."""
        start = end = 0
        colour: RGB | None = None
        for cell, ink in [*cells, (None, None)]:
            if cell is not None and ink is not None and ink.bg == colour and cell.x == end:
                end += cell.width
                continue
            if colour is not None and colour != DEFAULT_BG:
                self._fill(draw, start, end - start, top, colour)
            if cell is not None and ink is not None:
                start, end, colour = cell.x, cell.x + cell.width, ink.bg

    def _texts(self, draw: ImageDraw.ImageDraw, top: int, cells: list[tuple[Cell, _Ink]]) -> None:
        """Each run of adjacent one-cell characters of one style the font has, drawn in
        one call; any other cell on its own (a wide character, a combined one, a box)."""
        run: list[Cell] = []
        run_ink: _Ink | None = None
        for cell, ink in cells:
            simple = cell.width == 1 and len(cell.text) == 1 and ord(cell.text) in ink.characters
            if simple and run and ink is run_ink and run[-1].x + 1 == cell.x:
                run.append(cell)
                continue
            if run and run_ink is not None:
                self._run(draw, top, run, run_ink)
            run, run_ink = ([cell], ink) if simple else ([], None)
            if not simple:
                self._cell(draw, top, cell, ink, ink.fg)
        if run and run_ink is not None:
            self._run(draw, top, run, run_ink)

    def _run(self, draw: ImageDraw.ImageDraw, top: int, run: list[Cell], ink: _Ink) -> None:
        text = "".join(cell.text for cell in run).rstrip(" ")
        if text.strip():
            mask, left, down = self._mask(ink, text)
            draw.bitmap((run[0].x * self.cell_width + left, top + down), mask, fill=ink.fg)
        self._lines(draw, top, run[0].x, len(run), ink, ink.fg)

    def _mask(self, ink: _Ink, text: str) -> tuple[Image.Image, int, int]:
        """What ``text`` in the ink's face draws (its coverage), and where it begins from
        the run's top left: rendered once, then kept (``MAX_MASKS`` at most), since a
        screen's words recur and a pane's next picture mostly repeats its last."""
        key = (ink.face, text)
        found = self._masks.get(key)
        if found is None:
            # whole pixels: the basic layout places glyphs on them
            left, up, right, bottom = (int(edge) for edge in ink.font.getbbox(text))
            mask = Image.new("L", (max(1, right - left), max(1, bottom - up)))
            ImageDraw.Draw(mask).text((-left, -up), text, font=ink.font, fill=255)
            found = (mask, left, up)
            if len(self._masks) >= self.kept_runs:
                self._masks.clear()
            if self.kept_runs:
                self._masks[key] = found
        return found

    def _cell(self, draw: ImageDraw.ImageDraw, top: int, cell: Cell, ink: _Ink, fg: RGB) -> None:
        """One cell on its own: its character, or a box of its width when the font
        lacks one of its characters."""
        left = cell.x * self.cell_width
        fallback = self._fallback
        if all(ord(char) in ink.characters for char in cell.text):
            if cell.text.strip():
                slack = cell.width * self.cell_width - ink.font.getlength(cell.text)
                draw.text((left + max(0.0, slack / 2), top), cell.text, font=ink.font, fill=fg)
        elif fallback is not None and all(ord(char) in fallback[1] for char in cell.text):
            font, _, down = fallback
            slack = cell.width * self.cell_width - font.getlength(cell.text)
            draw.text((left + max(0.0, slack / 2), top + down), cell.text, font=font, fill=fg)
        else:
            draw.rectangle(
                (
                    left + 1,
                    top + 2,
                    left + cell.width * self.cell_width - 2,
                    top + self.cell_height - 3,
                ),
                outline=fg,
            )
        self._lines(draw, top, cell.x, cell.width, ink, fg)

    def _lines(
        self, draw: ImageDraw.ImageDraw, top: int, x: int, width: int, ink: _Ink, fg: RGB
    ) -> None:
        """The underline and strikethrough of ``width`` cells from column ``x``."""
        left, right = x * self.cell_width, (x + width) * self.cell_width - 1
        if ink.style.underline:
            under = top + self._ascent + 1
            draw.line((left, under, right, under), fill=fg)
        if ink.style.strikethrough:
            middle = top + self.cell_height // 2
            draw.line((left, middle, right, middle), fill=fg)

    def _cursor(self, draw: ImageDraw.ImageDraw, screen: Screen, inks: dict[Style, _Ink]) -> None:
        """A block cursor, its cell's character drawn over it in the cell's background."""
        top = screen.cursor_y * self.cell_height
        under = next(
            (cell for cell in screen.rows[screen.cursor_y] if cell.x == screen.cursor_x), None
        )
        width = under.width if under is not None else 1
        self._fill(draw, screen.cursor_x, width, top, CURSOR)
        if under is not None:
            ink = self._ink(under.style, inks)
            self._cell(draw, top, under, ink, ink.bg)

    def _fill(self, draw: ImageDraw.ImageDraw, x: int, width: int, top: int, colour: RGB) -> None:
        """``width`` cells from column ``x`` filled with ``colour``."""
        left = x * self.cell_width
        box = (left, top, left + width * self.cell_width - 1, top + self.cell_height - 1)
        draw.rectangle(box, fill=colour)
