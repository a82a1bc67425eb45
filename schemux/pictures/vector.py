"""A screen written as SVG text (pure): no library, the format is text.

The picture has the PNG's size and colours: a rectangle for each run of one background,
a ``text`` element for each run of one style, placed on the cell grid (``textLength``
holds a run to its cells whatever font the viewer has), the cursor a block over its
cell. Every character stays text, so the picture can be searched and copied; one the
viewer's fonts lack is drawn as the viewer draws it.
"""

from __future__ import annotations

import re
from xml.sax.saxutils import escape

from schemux.pictures.cells import Cell, Screen
from schemux.pictures.theme import CURSOR, DEFAULT_BG, cell_colours, hex_colour

# characters XML 1.0 cannot hold (C0 controls but tab, lone surrogates): drawn as U+FFFD
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")

FONT_FAMILY = "'DejaVu Sans Mono', 'JetBrains Mono', monospace"


def svg_picture(screen: Screen, cell_width: int, cell_height: int) -> bytes:
    """``screen`` as SVG, each cell ``cell_width`` x ``cell_height`` pixels."""
    width, height = screen.width * cell_width, screen.height * cell_height
    font_size = round(cell_width / 0.6, 2)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="{escape(FONT_FAMILY)}" '
        f'font-size="{font_size}">',
        f'<rect width="{width}" height="{height}" fill="{hex_colour(DEFAULT_BG)}"/>',
    ]
    baseline = round(cell_height * 0.78)
    for y, row in enumerate(screen.rows):
        top = y * cell_height
        for run in _runs(row):
            first = run[0]
            fg, bg = cell_colours(first.style)
            left = first.x * cell_width
            span = sum(cell.width for cell in run) * cell_width
            if bg != DEFAULT_BG:
                parts.append(
                    f'<rect x="{left}" y="{top}" width="{span}" height="{cell_height}" '
                    f'fill="{hex_colour(bg)}"/>'
                )
            text = "".join(cell.text for cell in run)
            if not text.strip():
                continue
            style = first.style
            attributes = [
                f'x="{left}" y="{top + baseline}" fill="{hex_colour(fg)}"',
                f'textLength="{span}" lengthAdjust="spacingAndGlyphs" xml:space="preserve"',
            ]
            if style.bold:
                attributes.append('font-weight="bold"')
            if style.italic:
                attributes.append('font-style="italic"')
            lines = [
                name
                for name, on in (
                    ("underline", style.underline),
                    ("line-through", style.strikethrough),
                )
                if on
            ]
            if lines:
                attributes.append(f'text-decoration="{" ".join(lines)}"')
            shown = escape(_NOT_XML.sub("\ufffd", text))
            parts.append(f"<text {' '.join(attributes)}>{shown}</text>")
    if screen.cursor_visible and 0 <= screen.cursor_y < screen.height:
        under = next(
            (cell for cell in screen.rows[screen.cursor_y] if cell.x == screen.cursor_x), None
        )
        columns = under.width if under is not None else 1
        parts.append(
            f'<rect x="{screen.cursor_x * cell_width}" y="{screen.cursor_y * cell_height}" '
            f'width="{columns * cell_width}" height="{cell_height}" '
            f'fill="{hex_colour(CURSOR)}" fill-opacity="0.7"/>'
        )
    parts.append("</svg>")
    return "\n".join(parts).encode()


def _runs(row: tuple[Cell, ...]) -> list[list[Cell]]:
    """The row's cells in runs of adjacent cells of one style."""
    runs: list[list[Cell]] = []
    for cell in row:
        last = runs[-1][-1] if runs else None
        if last is not None and last.style == cell.style and last.x + last.width == cell.x:
            runs[-1].append(cell)
        else:
            runs.append([cell])
    return runs
