"""Unit tests of counting a command's output lines between its shell's OSC 133 marks
(schemux.text.command_marks), as bash, zsh and fish write them, in pieces cut anywhere."""

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
# fish 4 writes its own marks, the command line in C's
FISH4 = "seq\r\n\x1b]133;C;cmdline_url=seq%201%202\x071\r\n2\r\n\x1b]133;D;0\x07\x1b[5n⏎ \r"


def counted(*pieces: str) -> int | None:
    lines = CommandOutputLines()
    for piece in pieces:
        lines.feed(piece)
    return lines.line_ends


@pytest.mark.parametrize(("text", "ends"), [(BASH, 3), (ZSH, 2), (FISH4, 2)])
def test_line_ends_between_the_marks(text: str, ends: int) -> None:
    assert counted(text) == ends


@given(st.lists(st.integers(min_value=0, max_value=len(BASH)), max_size=8))
def test_pieces_cut_anywhere_count_the_same(cuts: list[int]) -> None:
    bounds = [0, *sorted(cuts), len(BASH)]
    assert counted(*(BASH[start:end] for start, end in itertools.pairwise(bounds))) == 3


def test_one_character_at_a_time() -> None:
    assert counted(*ZSH) == 2


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
