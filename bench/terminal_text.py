"""Throughput of ``schemux.text.terminal.TextFilter`` on realistic terminal output.

Builds a stream as a pane's terminal carries it: text lines with a colour change every few
words, CR LF line endings (a few CR CR LF), progress lines redrawn with CR and erase-line,
some UTF-8, now and then a window title (OSC) and a cursor move. ``--programs`` programs
each write ``--megabytes`` of it (its own slice of a shared corpus); their 64 kB reads are
filtered interleaved, one read of each program in turn, on one core, as schemux would
filter 50 panes' pipes. Prints the input megabytes per second (1 MB = 10^6 bytes).

Usage: ``python bench/terminal_text.py [--programs N] [--megabytes M] [--chunk BYTES]``
(defaults: 12 programs of 4 MB, about 50 MB; ``--programs 50`` is the 200 MB of the
issue's 50 programs of 4 MB).
"""

from __future__ import annotations

import argparse
import random
import time

from schemux.text.terminal import TextFilter

WORDS = [
    *["the", "build", "step", "compiled", "module", "warning", "error", "ok", "passed"],
    *["failed", "test", "cache", "layer", "downloading", "resolving", "packages"],
    *["déjà", "naïve", "café", "—", "✓", "✗", "→", "日本語", "ошибка", "😀"],
]
COLOURS = [b"\x1b[31m", b"\x1b[32m", b"\x1b[1;33m", b"\x1b[38;5;208m", b"\x1b[0m", b"\x1b[m"]


def corpus(size: int, seed: int = 7) -> bytes:
    """About ``size`` bytes of mixed terminal output."""
    rng = random.Random(seed)
    parts: list[bytes] = []
    total = 0
    while total < size:
        kind = rng.random()
        if kind < 0.08:  # a progress bar, redrawn in place
            steps = rng.randint(5, 40)
            piece = b"".join(
                b"\r\x1b[K[%-20s] %3d%%" % (b"#" * (20 * i // steps), 100 * i // steps)
                for i in range(steps + 1)
            )
            piece += b"\r\r\n"
        elif kind < 0.10:  # a window title and a cursor move
            piece = b"\x1b]0;job %d\x07\x1b[%d;1H\x1b[2K" % (rng.randint(1, 99), rng.randint(1, 50))
        else:  # a text line, a colour change every few words
            words: list[bytes] = []
            for n in range(rng.randint(4, 16)):
                if n % rng.randint(2, 4) == 0:
                    words.append(rng.choice(COLOURS))
                words.append(rng.choice(WORDS).encode() + b" ")
            piece = b"".join(words) + b"\x1b[0m" + (b"\r\r\n" if rng.random() < 0.1 else b"\r\n")
        parts.append(piece)
        total += len(piece)
    return b"".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=12)
    parser.add_argument("--megabytes", type=float, default=4.0)
    parser.add_argument("--chunk", type=int, default=65536)
    args = parser.parse_args()
    per_program = int(args.megabytes * 1_000_000)
    shared = corpus(per_program + args.programs * 1_000 + 1)
    streams = [shared[p * 1_000 : p * 1_000 + per_program] for p in range(args.programs)]
    filters = [TextFilter() for _ in streams]
    total_in = sum(map(len, streams))
    total_out = 0
    start = time.perf_counter()
    for offset in range(0, per_program, args.chunk):
        for stream, text_filter in zip(streams, filters, strict=True):
            total_out += len(text_filter.feed(stream[offset : offset + args.chunk]))
    for text_filter in filters:
        total_out += len(text_filter.finish())
    seconds = time.perf_counter() - start
    print(
        f"{args.programs} programs x {per_program / 1e6:.1f} MB in {args.chunk} B reads: "
        f"{total_in / 1e6:.1f} MB in, {total_out / 1e6:.1f} M characters out, "
        f"{seconds:.2f} s, {total_in / 1e6 / seconds:.0f} MB/s on one core"
    )


if __name__ == "__main__":
    main()
