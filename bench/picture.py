"""How long a picture of a 160x48 pane takes, against tmux's own capture of it.

A private tmux server's 160x48 pane is filled with coloured text (every row full, a
colour change every few words, some wide characters): the worst case for drawing. The
floor is ``tmux capture-pane -e -p -N`` of the pane, run as a process, what any picture
must at least read. A picture is that capture read into cells, drawn as PNG (and as SVG)
by the painter picture_pane uses, the painter made once as schemux keeps it (so the runs
of text it drew before are drawn again from what it kept, as for a pane's next
picture), and by one that keeps none (the worst case: a screen of all new text). Prints
the medians and the ratios to the floor; fails when either PNG's median passes 100 ms.

Usage: ``python bench/picture.py [--rounds N]``
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from schemux.pictures.cells import screen_from_capture
from schemux.pictures.fonts import find_typeface
from schemux.pictures.raster import PngPainter
from schemux.pictures.vector import svg_picture

WIDTH, HEIGHT = 160, 48
BAR_MS = 100.0
WORDS = ["build", "ok", "error", "warning", "module", "passed", "日本", "✓", "→", "cache"]
COLOURS = ["\x1b[31m", "\x1b[1;32m", "\x1b[38;5;208m", "\x1b[48;2;30;40;90m", "\x1b[0m"]


def filling(rows: int, seed: int = 7) -> str:
    """``rows`` lines of coloured words, each a full row or more."""
    rng = random.Random(seed)
    lines = []
    for _ in range(rows):
        words = [rng.choice(COLOURS) + rng.choice(WORDS) for _ in range(45)]
        lines.append(" ".join(words)[: WIDTH * 4])
    return "\r\n".join(lines)


def median_ms(action: object, rounds: int) -> float:
    assert callable(action)
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        action()
        times.append((time.perf_counter() - start) * 1000)
    return sorted(times)[len(times) // 2]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    rounds = parser.parse_args().rounds
    with tempfile.TemporaryDirectory() as directory:
        socket = f"bench-picture-{uuid.uuid4().hex[:8]}"
        env = {"TMUX_TMPDIR": directory, "PATH": "/usr/bin:/bin"}
        tmux = ["tmux", "-L", socket]
        text = Path(directory, "screen.txt")
        text.write_text(filling(HEIGHT - 1))
        subprocess.run(
            [*tmux, "new-session", "-d", "-x", str(WIDTH), "-y", str(HEIGHT),
             f"cat {text}; exec sleep 600"],
            env=env, check=True,
        )  # fmt: skip
        try:
            capture = [*tmux, "capture-pane", "-e", "-p", "-N"]

            def captured() -> list[str]:
                done = subprocess.run(capture, env=env, capture_output=True, text=True, check=True)
                return done.stdout.split("\n")

            deadline = time.monotonic() + 10
            while sum(len(line) for line in captured()) < WIDTH * (HEIGHT - 2):
                if time.monotonic() > deadline:
                    raise RuntimeError("the pane was never filled")
                time.sleep(0.05)
            typeface = find_typeface()
            painter = PngPainter(typeface)
            keeping_none = PngPainter(typeface, kept_runs=0)
            floor = median_ms(captured, rounds)

            def png() -> bytes:
                return painter.paint(screen_from_capture(captured(), WIDTH, HEIGHT, (0, 0)))

            def png_new() -> bytes:
                screen = screen_from_capture(captured(), WIDTH, HEIGHT, (0, 0))
                return keeping_none.paint(screen)

            def svg() -> bytes:
                screen = screen_from_capture(captured(), WIDTH, HEIGHT, (0, 0))
                return svg_picture(screen, painter.cell_width, painter.cell_height)

            png_ms, svg_ms = median_ms(png, rounds), median_ms(svg, rounds)
            new_ms = median_ms(png_new, rounds)
        finally:
            subprocess.run([*tmux, "kill-server"], env=env, check=False)
    print(f"{WIDTH}x{HEIGHT} pane, {rounds} rounds, typeface {painter.typeface.name}")
    print(
        f"load   {os.getloadavg()[0]:.1f} (the last minute's: figures on a loaded machine are slow)"
    )
    print(f"floor  tmux capture-pane -e: {floor:6.1f} ms")
    print(f"png    capture + draw:       {png_ms:6.1f} ms  ({png_ms / floor:.1f}x the floor)")
    print(f"png    nothing kept:         {new_ms:6.1f} ms  ({new_ms / floor:.1f}x the floor)")
    print(f"svg    capture + write:      {svg_ms:6.1f} ms  ({svg_ms / floor:.1f}x the floor)")
    ok = max(png_ms, new_ms) < BAR_MS
    print(f"bar    png under {BAR_MS:.0f} ms: {'met' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
