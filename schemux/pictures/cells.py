"""A pane's cells, read from what ``tmux capture-pane -e -p -N`` prints (pure).

tmux writes each row as text with SGR escape sequences (``ESC [ ... m``) where the
attributes change, a wide character once for the two cells it takes, and (tmux 3.4 and
later) OSC 8 hyperlinks, which a picture does not show. This module reads those rows
back into cells, each with its colours and attributes, so that a picture is drawn from
tmux's own cells. A small SGR reader, rather than a terminal emulator such as pyte: the
rows are tmux's finished screen, not a stream to replay, and pyte's cells have no dim.

A character's width is wcwidth's, the table terminals and tmux follow (CJK and emoji
take two cells); a zero-width character (a combining mark) joins the cell before it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType

from wcwidth import wcwidth

# A colour as tmux gives it: None (the terminal's default), 0-255 (the palette), or RGB.
Colour = int | tuple[int, int, int] | None


@dataclass(frozen=True, slots=True)
class Style:
    """How a cell is drawn: its colours and SGR attributes."""

    fg: Colour = None
    bg: Colour = None
    bold: bool = False
    dim: bool = False
    italic: bool = False
    underline: bool = False
    blink: bool = False
    reverse: bool = False
    hidden: bool = False
    strikethrough: bool = False


PLAIN = Style()


@dataclass(frozen=True, slots=True)
class Cell:
    """One character at column ``x`` of its row, ``width`` cells wide (1 or 2)."""

    x: int
    text: str
    width: int
    style: Style


@dataclass(frozen=True)
class Screen:
    """A pane's visible screen: ``width`` x ``height`` cells, each row's cells in column
    order (the blank columns a row does not list are blank in the default style); the
    cursor at ``cursor_x``, ``cursor_y``, shown when ``cursor_visible``."""

    width: int
    height: int
    rows: tuple[tuple[Cell, ...], ...]
    cursor_x: int = 0
    cursor_y: int = 0
    cursor_visible: bool = True


# an SGR sequence, any other CSI sequence, an OSC string (hyperlinks), another escape
_ESCAPE = re.compile(
    r"\x1b\[(?P<sgr>[0-9;:]*)m"
    r"|\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[@-Z\\-_]?"
)

# SGR parameters that set one attribute: the value each sets it to
_SET = MappingProxyType(
    {
        1: ("bold", True),
        2: ("dim", True),
        3: ("italic", True),
        4: ("underline", True),
        5: ("blink", True),
        6: ("blink", True),
        7: ("reverse", True),
        8: ("hidden", True),
        9: ("strikethrough", True),
        21: ("underline", True),  # double underline, drawn as one
        22: ("bold", False),
        23: ("italic", False),
        24: ("underline", False),
        25: ("blink", False),
        27: ("reverse", False),
        28: ("hidden", False),
        29: ("strikethrough", False),
    }
)


def styled(style: Style, parameters: str) -> Style:
    """``style`` changed by one SGR sequence's ``parameters`` (``"1;38;5;196"``,
    ``"38:2::255:0:0"``); an empty list resets, as ``0`` does."""
    groups = [group.split(":") for group in parameters.split(";")] if parameters else [["0"]]
    flat: list[list[int]] = [[int(part) if part else 0 for part in group] for group in groups]
    index = 0
    while index < len(flat):
        group = flat[index]
        code = group[0]
        index += 1
        if code == 0:
            style = PLAIN
        elif code == 22:
            style = replace(style, bold=False, dim=False)
        elif code in _SET:
            name, value = _SET[code]
            style = replace(style, **{name: value})
        elif 30 <= code <= 37:
            style = replace(style, fg=code - 30)
        elif 90 <= code <= 97:
            style = replace(style, fg=code - 90 + 8)
        elif 40 <= code <= 47:
            style = replace(style, bg=code - 40)
        elif 100 <= code <= 107:
            style = replace(style, bg=code - 100 + 8)
        elif code == 39:
            style = replace(style, fg=None)
        elif code == 49:
            style = replace(style, bg=None)
        elif code in (38, 48, 58):
            colour, index = _extended(group, flat, index)
            if code == 38:
                style = replace(style, fg=colour)
            elif code == 48:
                style = replace(style, bg=colour)
    return style


def _extended(group: list[int], flat: list[list[int]], index: int) -> tuple[Colour, int]:
    """The colour of a 38/48/58 parameter: its own ``:`` parts (``38:5:196``,
    ``38:2::r:g:b`` or ``38:2:r:g:b``), else the ``;`` parameters after it; and the
    index of the parameter after what it used."""
    if len(group) > 1:
        parts = group[1:]
        if parts[0] == 5 and len(parts) >= 2:
            return parts[1] & 0xFF, index
        if parts[0] == 2 and len(parts) >= 4:
            rgb = parts[-3:]
            return (rgb[0] & 0xFF, rgb[1] & 0xFF, rgb[2] & 0xFF), index
        return None, index
    following = [each[0] for each in flat[index:]]
    if following[:1] == [5] and len(following) >= 2:
        return following[1] & 0xFF, index + 2
    if following[:1] == [2] and len(following) >= 4:
        red, green, blue = following[1:4]
        return (red & 0xFF, green & 0xFF, blue & 0xFF), index + 4
    return None, len(flat)


def row_cells(
    line: str,
    width: int,
    style: Style = PLAIN,
    changes: dict[tuple[Style, str], Style] | None = None,
) -> tuple[tuple[Cell, ...], Style]:
    """The cells of one row as ``capture-pane -e`` prints it, those within ``width``
    columns, and the style in effect at its end (tmux carries it to the next row).
    ``changes``: the styles SGR sequences made so far, kept to be used again (a screen
    has few: a busy one changes style a thousand times between a dozen styles)."""
    cells: list[Cell] = []
    x = 0
    position = 0
    changes = {} if changes is None else changes
    for found in _ESCAPE.finditer(line):
        x = _text_cells(line[position : found.start()], x, width, style, cells)
        if (parameters := found["sgr"]) is not None:
            changed = changes.get((style, parameters))
            if changed is None:
                changed = changes[(style, parameters)] = styled(style, parameters)
            style = changed
        position = found.end()
    _text_cells(line[position:], x, width, style, cells)
    return tuple(cells), style


def _text_cells(text: str, x: int, width: int, style: Style, cells: list[Cell]) -> int:
    """Add the cells of ``text`` (no escapes) from column ``x``; the column after them."""
    for char in text:
        columns = 1 if " " <= char <= "~" else wcwidth(char)  # ASCII: one cell, at once
        if columns == 0:
            if cells and cells[-1].x + cells[-1].width == x:
                last = cells[-1]
                cells[-1] = Cell(last.x, last.text + char, last.width, last.style)
            continue
        columns = 2 if columns == 2 else 1  # a control character is one cell, as a box
        if x + columns > width:
            return x + columns
        cells.append(Cell(x, char, columns, style))
        x += columns
    return x


def screen_from_capture(
    lines: Sequence[str],
    width: int,
    height: int,
    cursor: tuple[int, int] = (0, 0),
    cursor_visible: bool = True,
) -> Screen:
    """The screen of a pane ``width`` x ``height`` cells whose rows ``capture-pane -e -p
    -N`` printed as ``lines`` (rows past ``height`` left out, missing ones blank)."""
    rows: list[tuple[Cell, ...]] = []
    style = PLAIN
    changes: dict[tuple[Style, str], Style] = {}
    for line in list(lines)[:height]:
        cells, style = row_cells(line, width, style, changes)
        rows.append(cells)
    rows += [()] * (height - len(rows))
    return Screen(width, height, tuple(rows), cursor[0], cursor[1], cursor_visible)


MASK = "*"  # what a masked cell shows (``masked``)


def masked(screen: Screen, spans: Callable[[str], Sequence[tuple[int, int, str]]]) -> Screen:
    """``screen`` with every cell of each row's text that ``spans`` finds (a secret, say)
    showing ``MASK`` in its place, at its width and in its style."""
    rows = []
    for row in screen.rows:
        text = "".join(cell.text for cell in row)
        found = spans(text)
        if not found:
            rows.append(row)
            continue
        cells, at = [], 0
        for cell in row:
            start, at = at, at + len(cell.text)
            hit = any(first < at and start < last for first, last, _ in found)
            cells.append(replace(cell, text=MASK) if hit else cell)
        rows.append(tuple(cells))
    return replace(screen, rows=tuple(rows))
