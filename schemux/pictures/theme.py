"""The colours a picture is drawn in: xterm's 256-colour palette, the default colours,
and the colours one cell shows once its attributes (reverse, dim, hidden) apply (pure)."""

from __future__ import annotations

from schemux.pictures.cells import Colour, Style

RGB = tuple[int, int, int]

DEFAULT_FG: RGB = (0xD0, 0xD0, 0xD0)  # the default colours: a dark terminal's
DEFAULT_BG: RGB = (0x10, 0x10, 0x10)
CURSOR: RGB = (0xE8, 0xE8, 0xE8)  # a block cursor; its cell's text is drawn in the background

# the 16 colours as xterm draws them by default
_ANSI: tuple[RGB, ...] = (
    (0x00, 0x00, 0x00), (0xCD, 0x00, 0x00), (0x00, 0xCD, 0x00), (0xCD, 0xCD, 0x00),
    (0x00, 0x00, 0xEE), (0xCD, 0x00, 0xCD), (0x00, 0xCD, 0xCD), (0xE5, 0xE5, 0xE5),
    (0x7F, 0x7F, 0x7F), (0xFF, 0x00, 0x00), (0x00, 0xFF, 0x00), (0xFF, 0xFF, 0x00),
    (0x5C, 0x5C, 0xFF), (0xFF, 0x00, 0xFF), (0x00, 0xFF, 0xFF), (0xFF, 0xFF, 0xFF),
)  # fmt: skip
_CUBE_LEVELS = (0, 0x5F, 0x87, 0xAF, 0xD7, 0xFF)


def palette_colour(index: int) -> RGB:
    """Colour ``index`` (0-255) of xterm's palette: 16 named colours, a 6x6x6 cube, 24
    greys."""
    if index < 16:
        return _ANSI[index]
    if index < 232:
        cube = index - 16
        return (_CUBE_LEVELS[cube // 36], _CUBE_LEVELS[cube // 6 % 6], _CUBE_LEVELS[cube % 6])
    grey = 8 + 10 * (index - 232)
    return (grey, grey, grey)


def rgb(colour: Colour, default: RGB) -> RGB:
    """``colour`` as RGB: ``default`` for the terminal's default."""
    if colour is None:
        return default
    if isinstance(colour, int):
        return palette_colour(colour)
    return colour


def cell_colours(style: Style) -> tuple[RGB, RGB]:
    """The foreground and background a cell of ``style`` shows: reverse swaps them, dim
    draws the text halfway to the background, hidden text is not seen."""
    fg, bg = rgb(style.fg, DEFAULT_FG), rgb(style.bg, DEFAULT_BG)
    if style.reverse:
        fg, bg = bg, fg
    if style.dim:
        fg = (fg[0] + bg[0]) // 2, (fg[1] + bg[1]) // 2, (fg[2] + bg[2]) // 2
    if style.hidden:
        fg = bg
    return fg, bg


def hex_colour(colour: RGB) -> str:
    return f"#{colour[0]:02x}{colour[1]:02x}{colour[2]:02x}"
