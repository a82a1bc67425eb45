"""Unit tests of counting a command's output lines between its shell's OSC 133 marks
(schemux.text.command_marks), as bash, zsh and fish write them, in pieces cut anywhere,
and of no count where the output moved the cursor other than line by line."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from schemux.text.command_marks import CommandOutputLines

C, D = "\x1b]133;C\x07", "\x1b]133;D;0\x07\x1b]133;A\x07"
# as the hooks' shells wrote them (schemux recordings): the echo, then C, output, D
BASH = f"seq 1 3\r\n\x1b[?2004l\r\x1b[5n{C}1\r\n2\r\n3\r\n{D}\x1b[5n\x1b[?2004hroot@vm:~# "
# zsh's PROMPT_SP (its mark, spaces, carriage returns) before its precmd hook's D
ZSH = f"seq 1 3\r\r\n\x1b[5n{C}1\r\n2\r\nx\x1b[1m\x1b[7m#\x1b[0m{' ' * 78}\r \r{D}\x1b[5n\rvm# "
# fish 3 (the hooks' marks), then its title and modes; fish 4 writes its own marks, the
# command line in C's, and turns its keyboard protocols off
FISH3 = (
    f"seq 1 2\r\n\x1b[30m\x1b[m\x0f\x1b[5n{C}\x1b[?2004l\x1b[?1004l\x1b]0; seq 1 2 ~\x07"
    f"\x1b[30m\x1b[m\x0f\r1\r\n2\r\n{D}\x1b[5n\x1b[?1004h\x1b[2m⏎\x1b[m\x0f \r⏎ \r\x1b[K"
)
FISH4 = (
    "seq\r\n\x1b]133;C;cmdline_url=seq%201%202\x07\x1b[=0u\x1b[>4;0m\x1b>\x1b[?2004l"
    "1\r\n2\r\n\x1b]133;D;0\x07\x1b[5n⏎ \r"
)


def counted(*pieces: str) -> int | None:
    lines = CommandOutputLines()
    for piece in pieces:
        lines.feed(piece)
    return lines.line_ends


@pytest.mark.parametrize(("text", "ends"), [(BASH, 3), (ZSH, 2), (FISH3, 2), (FISH4, 2)])
def test_line_ends_between_the_marks(text: str, ends: int) -> None:
    assert counted(text) == ends


MOVED = f"{C}a\r\nb\x1b[1A\r\x1b[2Kc\r\n\x1b[?1049h{D}"


@pytest.mark.parametrize(("text", "ends"), [(BASH, 3), (FISH3, 2), (MOVED, None)])
@given(cuts=st.lists(st.integers(min_value=0, max_value=len(FISH3)), max_size=8))
def test_pieces_cut_anywhere_count_the_same(text: str, ends: int | None, cuts: list[int]) -> None:
    bounds = [0, *sorted(min(cut, len(text)) for cut in cuts), len(text)]
    assert counted(*(text[start:end] for start, end in itertools.pairwise(bounds))) == ends


def test_one_character_at_a_time() -> None:
    assert counted(*ZSH) == 2
    assert counted(*MOVED) is None


def test_nothing_before_the_start_or_after_the_end_counts() -> None:
    assert counted("old\r\nlines\n", C, "a\n", D, "prompt\r\n") == 1


def test_no_count_before_an_end_mark() -> None:
    assert counted("text\n") is None
    assert counted(C, "running\r\n") is None


def test_marks_the_output_writes_end_at_the_last_end() -> None:
    """The hooks' D is the last one while they hold the shell: a command that writes
    marks of its own (a nested shell's, a recording shown) is counted whole."""
    assert counted(C, "a\n", C, "b\n", D, "c\n", D) == 3


def test_line_feeds_as_tmux_takes_them() -> None:
    """tmux moves to a new line on a vertical tab and a form feed too; a carriage
    return and a wrapped long line do not end a line."""
    assert counted(C, "a\vb\fc\rd" + "w" * 300 + "\r\n", D) == 3


@pytest.mark.parametrize(
    "moves",
    [
        *("\x1b[A", "\x1b[3A", "\x1b[B", "\x1b[2E", "\x1b[F", "\x1b[5;1H", "\x1b[H", "\x1b[4d"),
        *("\x1b[2S", "\x1b[T", "\x1b[L", "\x1b[2M", "\x1b[1;10r", "\x1b[2J", "\x1b[3J"),
        *("\x1b[u", "\x1b8", "\x1bM", "\x1bD", "\x1bE", "\x1bc", "\x1b[?1049h", "\x1b[?47h"),
    ],
)
def test_an_output_that_moves_the_cursor_up_or_down_has_no_count(moves: str) -> None:
    """Redrawn rows (a progress display), scrolls, a scroll region, the alternate screen:
    the line ends are no longer the lines the pane shows."""
    assert counted(C, "a\r\n", moves, "b\r\n", D) is None


def test_what_keeps_the_count() -> None:
    """Colours, a line's erase, moves along the row, the cursor saved, modes, titles."""
    kept = "\x1b[1;31mred\x1b[0m\x1b[K\x1b[2C\x1b[5G\x1b[D\x1b7\x1b[s\x1b[?25l\x1b]0;t\x07\x1b[J"
    assert counted(C, f"a\r\n{kept}b\r\n", D) == 2


def test_moves_before_the_start_or_after_the_end_keep_the_count() -> None:
    assert counted("\x1b[A\x1b[H", C, "a\n", D, "\x1b[A\x1b[?1049h") == 1
