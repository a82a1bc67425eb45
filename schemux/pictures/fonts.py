"""The monospace typeface pictures are drawn in, and which characters it has.

DejaVu Sans Mono when the system has it (Debian's fonts-dejavu-core, Fedora's
dejavu-sans-mono-fonts, Arch's ttf-dejavu): the widest coverage of the free monospace
fonts (box drawing, blocks, Braille, arrows, Greek, Cyrillic; 3,300 characters). No
package on PyPI ships it alone (rinoh-typeface-dejavusansmono needs rinohtype, a whole
document processor), so on a machine without it pictures are drawn in JetBrains Mono,
which the ``fontpkg-jetbrains-mono`` dependency ships (OFL; 980 characters; one file
whose weight is a variation axis). A character the typeface lacks is drawn as a box.
"""

from __future__ import annotations

import importlib.resources
from dataclasses import dataclass
from pathlib import Path

_DEJAVU_DIRECTORIES = (
    "/usr/share/fonts/truetype/dejavu",  # Debian, Ubuntu
    "/usr/share/fonts/dejavu-sans-mono-fonts",  # Fedora
    "/usr/share/fonts/TTF",  # Arch
    "/usr/share/fonts/dejavu",  # Alpine
)
_DEJAVU_FACES = (
    "DejaVuSansMono.ttf",
    "DejaVuSansMono-Bold.ttf",
    "DejaVuSansMono-Oblique.ttf",
    "DejaVuSansMono-BoldOblique.ttf",
)
_JETBRAINS_PACKAGE = "fontpkg_jetbrains_mono"
_JETBRAINS_FACES = ("JetBrainsMono[wght].ttf", "JetBrainsMono-Italic[wght].ttf")
BOLD_WEIGHT = 700  # the weight a variable face is set to for bold


@dataclass(frozen=True)
class Typeface:
    """A monospace typeface's files: ``faces[(bold, italic)]``; a ``variable`` face is
    one file for both weights, set to ``BOLD_WEIGHT`` for bold."""

    name: str
    faces: dict[tuple[bool, bool], Path]
    variable: bool = False


def find_typeface(directories: tuple[str, ...] = _DEJAVU_DIRECTORIES) -> Typeface:
    """DejaVu Sans Mono from the first of ``directories`` that has its four faces, else
    the JetBrains Mono the package's dependency ships."""
    for directory in directories:
        paths = [Path(directory, face) for face in _DEJAVU_FACES]
        if all(path.is_file() for path in paths):
            regular, bold, italic, bold_italic = paths
            return Typeface(
                "DejaVu Sans Mono",
                {
                    (False, False): regular,
                    (True, False): bold,
                    (False, True): italic,
                    (True, True): bold_italic,
                },
            )
    files = importlib.resources.files(_JETBRAINS_PACKAGE).joinpath("files")
    upright, italic = (Path(str(files.joinpath(face))) for face in _JETBRAINS_FACES)
    return Typeface(
        "JetBrains Mono",
        {
            (False, False): upright,
            (True, False): upright,
            (False, True): italic,
            (True, True): italic,
        },
        variable=True,
    )


def characters_of(path: Path) -> frozenset[int]:
    """The code points the font file at ``path`` has a glyph for (its best cmap)."""
    from fontTools.ttLib import TTFont  # type: ignore[import-untyped]

    with TTFont(str(path), lazy=True) as font:
        return frozenset(font.getBestCmap() or {})
