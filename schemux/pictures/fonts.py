"""The monospace typeface pictures are drawn in, and which characters it has.

DejaVu Sans Mono when the system has it (Debian's fonts-dejavu-core, Fedora's
dejavu-sans-mono-fonts, Arch's ttf-dejavu): the widest coverage of the free monospace
fonts (box drawing, blocks, Braille, arrows, Greek, Cyrillic; 3,300 characters). No
package on PyPI ships it alone (rinoh-typeface-dejavusansmono needs rinohtype, a whole
document processor), so on a machine without it pictures are drawn in JetBrains Mono,
which the ``fontpkg-jetbrains-mono`` dependency ships (OFL; 980 characters; one file
whose weight is a variation axis).

CJK characters none of these have are drawn from a CJK font when the system has one:
WenQuanYi Micro Hei Mono (Debian's fonts-wqy-microhei, 5 MB installed: the smallest
CJK font Debian packs; Noto Sans CJK is 91 MB), 34,600 characters of Chinese, Japanese
and Korean. A character neither has (an emoji, a private one) is drawn as a box.
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
# the CJK fallback: its file and the face in it (the collection's second is its Mono)
_CJK_FONTS = (
    ("/usr/share/fonts/truetype/wqy/wqy-microhei.ttc", 1),  # Debian, Ubuntu
    ("/usr/share/fonts/wqy-microhei/wqy-microhei.ttc", 1),  # Fedora
)
_JETBRAINS_PACKAGE = "fontpkg_jetbrains_mono"
_JETBRAINS_FACES = ("JetBrainsMono[wght].ttf", "JetBrainsMono-Italic[wght].ttf")
BOLD_WEIGHT = 700  # the weight a variable face is set to for bold


@dataclass(frozen=True)
class Typeface:
    """A monospace typeface's files: ``faces[(bold, italic)]``; a ``variable`` face is
    one file for both weights, set to ``BOLD_WEIGHT`` for bold. ``fallback``: the font
    file and face index of what the faces lack (CJK), when the system has one."""

    name: str
    faces: dict[tuple[bool, bool], Path]
    variable: bool = False
    fallback: tuple[Path, int] | None = None


def find_fallback(fonts: tuple[tuple[str, int], ...] = _CJK_FONTS) -> tuple[Path, int] | None:
    """The first of ``fonts`` (a file and a face in it) the system has; None if none."""
    for path, index in fonts:
        if Path(path).is_file():
            return Path(path), index
    return None


def find_typeface(
    directories: tuple[str, ...] = _DEJAVU_DIRECTORIES,
    fallbacks: tuple[tuple[str, int], ...] = _CJK_FONTS,
) -> Typeface:
    """DejaVu Sans Mono from the first of ``directories`` that has its four faces, else
    the JetBrains Mono the package's dependency ships; with the first of ``fallbacks``
    the system has."""
    fallback = find_fallback(fallbacks)
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
                fallback=fallback,
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
        fallback=fallback,
    )


def characters_of(path: Path, index: int = 0) -> frozenset[int]:
    """The code points the font file at ``path`` (its face ``index``, in a collection)
    has a glyph for (its best cmap)."""
    from fontTools.ttLib import TTFont  # type: ignore[import-untyped]

    with TTFont(str(path), lazy=True, fontNumber=index) as font:
        return frozenset(font.getBestCmap() or {})
