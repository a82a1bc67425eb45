"""The pictures' pure parts, with no tmux: tmux's SGR rows read back into cells, and
screens drawn as PNG (compared by their pixels) and as SVG."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET

import pytest
from PIL import Image

from schemux.pictures.cells import (
    MASK,
    PLAIN,
    Style,
    masked,
    row_cells,
    screen_from_capture,
    styled,
)
from schemux.pictures.fonts import find_typeface
from schemux.pictures.raster import CELL_WIDTH, PngPainter, png_bytes
from schemux.pictures.theme import DEFAULT_BG, DEFAULT_FG, cell_colours, palette_colour
from schemux.pictures.vector import svg_picture
from tests.support import missing


@pytest.mark.parametrize(
    ("parameters", "expected"),
    [
        ("31", Style(fg=1)),
        ("1;38;5;196", Style(fg=196, bold=True)),
        ("38;2;1;2;3", Style(fg=(1, 2, 3))),
        ("38:2::1:2:3", Style(fg=(1, 2, 3))),
        ("48:5:17", Style(bg=17)),
        (
            "2;3;4;7;9",
            Style(dim=True, italic=True, underline=True, reverse=True, strikethrough=True),
        ),
        ("", PLAIN),
        ("38;5", PLAIN),  # cut short: no colour, no crash
    ],
)
def test_sgr_parameters(parameters: str, expected: Style) -> None:
    assert styled(PLAIN, parameters) == expected


def test_wide_and_combining_characters_take_their_cells_and_style_carries() -> None:
    cells, style = row_cells("\x1b[1m中e\u0301\x1b]8;;http://x\x1b\\z", 10)
    assert [(cell.x, cell.text, cell.width) for cell in cells] == [
        (0, "中", 2), (2, "e\u0301", 1), (3, "z", 1),
    ]  # fmt: skip
    assert style.bold
    screen = screen_from_capture(["\x1b[41mab", "c"], 4, 3)
    assert screen.rows[1][0].style.bg == 1  # tmux carries the style to the next row
    assert screen.rows[2] == ()
    assert [cell.x for cell in row_cells("abcdef", 4)[0]] == [0, 1, 2, 3]


def test_palette_and_attributes() -> None:
    assert palette_colour(196) == (255, 0, 0)
    assert palette_colour(244) == (128, 128, 128)
    assert cell_colours(Style(reverse=True)) == (DEFAULT_BG, DEFAULT_FG)
    assert cell_colours(Style(hidden=True, bg=(1, 2, 3))) == ((1, 2, 3), (1, 2, 3))


@pytest.fixture(scope="module")
def painter() -> PngPainter:
    return PngPainter(find_typeface())


def test_a_missing_glyph_is_a_box_of_its_width_and_control_characters_never_crash(
    painter: PngPainter,
) -> None:
    # U+E000 is a private use character no font has; U+1F600 takes two cells
    screen = screen_from_capture(["\ue000 \U0001f600 \x01"], 8, 1, cursor_visible=False)
    image = Image.open(io.BytesIO(painter.paint(screen))).convert("RGB")
    height = painter.cell_height
    middle = height // 2
    assert image.getpixel((1, middle)) == DEFAULT_FG  # the box's left side, in column 0
    assert image.getpixel((CELL_WIDTH - 2, middle)) == DEFAULT_FG  # its right side
    assert image.getpixel((CELL_WIDTH // 2, middle)) == DEFAULT_BG  # hollow
    # the emoji's box spans columns 2 and 3: its right side near the end of column 3
    assert image.getpixel((4 * CELL_WIDTH - 2, middle)) == DEFAULT_FG
    assert image.getpixel((3 * CELL_WIDTH - 2, middle)) == DEFAULT_BG


def test_a_cjk_character_is_drawn_from_the_cjk_font_not_as_a_box(painter: PngPainter) -> None:
    """With a CJK font on the system (Debian's fonts-wqy-microhei, which .ci/run installs),
    a character the main typeface lacks is drawn from it: glyph pixels across its two
    cells, never the box's outline."""
    if painter.typeface.fallback is None:
        missing("no CJK font is installed (Debian: fonts-wqy-microhei)")
    screen = screen_from_capture(["中"], 2, 1, cursor_visible=False)
    image = Image.open(io.BytesIO(painter.paint(screen))).convert("RGB")
    height = painter.cell_height
    inked = {
        (x, y)
        for x in range(2 * CELL_WIDTH)
        for y in range(height)
        if image.getpixel((x, y)) != DEFAULT_BG
    }
    box_side = {(1, y) for y in range(2, height - 2)}
    assert not box_side <= inked  # no box's left side
    assert len(inked) > 20  # the glyph's strokes
    # 中's vertical stroke, in the middle of its two cells, and its box reaching both
    assert any(
        (x, y) in inked for x in range(CELL_WIDTH - 2, CELL_WIDTH + 2) for y in range(height)
    )
    assert min(x for x, _ in inked) < CELL_WIDTH // 2
    assert max(x for x, _ in inked) > CELL_WIDTH * 3 // 2


def test_runs_drawn_from_what_was_kept_are_the_same_pixels_and_the_png_is_exact(
    painter: PngPainter,
) -> None:
    """A run drawn again from what the painter kept, or by a painter that keeps none, is
    the same picture byte for byte; the PNG decodes to exactly the pixels drawn."""
    rows = ["\x1b[1;31mbold red\x1b[0m plain  \x1b[3mitalic\x1b[0m é", "\x1b[4mplain\x1b[0m jq"]
    screen = screen_from_capture(rows, 30, 3, (2, 1))
    keeping_none = PngPainter(painter.typeface, kept_runs=0)
    first = painter.paint(screen)
    assert painter.paint(screen) == first
    assert keeping_none.paint(screen) == first
    image = Image.new("RGB", (7, 3))
    image.putdata([(x * 30, y * 80, (x * y) % 256) for y in range(3) for x in range(7)])
    decoded = Image.open(io.BytesIO(png_bytes(image)))
    assert decoded.mode == "RGB"
    assert decoded.tobytes() == image.tobytes()


def test_svg_is_xml_whatever_the_cells_hold(painter: PngPainter) -> None:
    screen = screen_from_capture(["\x1b[1;4m<&>\x01\x1b[0m"], 6, 1)
    root = ET.fromstring(svg_picture(screen, painter.cell_width, painter.cell_height))
    [text] = list(root.iter("{http://www.w3.org/2000/svg}text"))
    assert text.text == "<&>\ufffd"
    assert text.get("font-weight") == "bold"
    assert text.get("text-decoration") == "underline"


def test_the_fallback_typeface_draws_when_the_system_has_none() -> None:
    typeface = find_typeface(directories=())
    assert typeface.name == "JetBrains Mono"
    screen = screen_from_capture(["\x1b[1mbold\x1b[0m x"], 8, 1)
    image = Image.open(io.BytesIO(PngPainter(typeface).paint(screen)))
    assert image.size[0] == 8 * CELL_WIDTH


def test_masked_cells_keep_their_place_width_and_style() -> None:
    """A secret's cells show the mask, a wide one still two cells; the rest is as it was."""
    red = styled(PLAIN, "31")
    line = "key=\x1b[31mAKIAIOSFODNN7EXAMPLE\x1b[0m 秘 ok"
    screen = screen_from_capture([line], width=40, height=1)
    found = [(4, 24, "AWS Access Key"), (25, 26, "test")]
    (row,) = masked(screen, lambda text: found if text.startswith("key=") else []).rows
    assert "".join(cell.text for cell in row) == "key=" + MASK * 20 + " " + MASK + " ok"
    assert [cell.x for cell in row] == [cell.x for cell in screen.rows[0]]
    assert [cell.width for cell in row] == [cell.width for cell in screen.rows[0]]
    assert {cell.style for cell in row[4:24]} == {red}
    untouched = screen_from_capture(["nothing here"], width=40, height=1)
    assert masked(untouched, lambda text: []) == untouched
