"""Unit tests of finding a command's output among a pane's rows (schemux.shell.output)."""

from __future__ import annotations

import pytest

from schemux.shell.capture import (
    BOTTOM_ROWS,
    BottomStarts,
    StartCursorRow,
    command_start_from,
    quiet_output,
    quiet_reading,
    start_at_bottom,
)
from schemux.shell.output import (
    Located,
    OutputEnd,
    Prompt,
    Report,
    after_last_mention,
    cell_width,
    keep_tail,
    locate_output,
    through_interrupt_echo,
    without_interrupt_echo,
)
from schemux.shell.wrapped import same_prompt

TOKEN = "0123456789ab"
TYPED = "printf '\\r\\33[K';("
ECHO_END = f");tmux if -F '#{{@schemux_{TOKEN}}}' ..."


def echo(prompt: str = "$ ") -> list[str]:
    return [prompt + TYPED, "> echo A; history 1; echo B", "> " + ECHO_END]


HEAD = "$ " + TYPED


@pytest.mark.parametrize(
    ("lines", "head", "expected"),
    [
        # the usual case
        ([*echo(), "A", "B"], HEAD, Located(["A", "B"], True)),
        # the command printed the typed text, token included: it does not cut the output
        (
            [*echo(), "A", "  12  " + TYPED, "echo A; history 1; echo B", ECHO_END, "B"],
            HEAD,
            Located(["A", "  12  " + TYPED, "echo A; history 1; echo B", ECHO_END, "B"], True),
        ),
        # echo off: prompt rows, no head; only what follows a printed token is surely output
        (["$ ", "> ", "> ", "A", "  12  " + TYPED, ECHO_END, "B"], HEAD, Located(["B"], False)),
        # an older call's echo survives: so does this one's, and its token ends the echo
        (["$ " + TYPED, "> true", "> );tmux other", *echo(), "X"], HEAD, Located(["X"], True)),
        # a prompt read before the shell drew it: the head is the typed line alone
        (["bash-5.2# " + TYPED, "> " + ECHO_END, "X"], TYPED, Located(["X"], True)),
    ],
    ids=["plain", "token printed", "echo off", "older echo", "prompt drawn late"],
)
def test_locate_output(lines: list[str], head: str, expected: Located) -> None:
    assert locate_output(lines, TOKEN, head) == expected


def test_an_echo_drawn_row_by_row_ends_where_the_typed_line_ends() -> None:
    """zsh's line editor draws a long typed line on rows the terminal does not join: the
    rows after the first mention of the token are still the echo."""
    last = ECHO_END + " wait schemux_r_" + TOKEN + ";set -pu @schemux_" + TOKEN + '"'
    rows = ["$ " + TYPED, "> echo A", "> " + last[:30], last[30:60], last[60:], "A"]
    assert locate_output(rows, TOKEN, HEAD, last) == Located(["A"], True)
    # the command's output is never taken for the echo: it comes after the first end
    printed = [*rows, last]
    assert locate_output(printed, TOKEN, HEAD, last) == Located(["A", last], True)


def test_no_mention_is_left_to_the_caller() -> None:
    assert locate_output(["$ ", "A"], TOKEN, "$ " + TYPED) is None


def test_prompt_parse_restores_the_trimmed_spaces_and_counts_cells() -> None:
    screen = ["old output", "bash-5.2#", ""]
    assert Prompt.at(10, 1, 10, screen) == Prompt(10, 1, 10, "bash-5.2# ")
    wide = Prompt.at(0, 0, 6, ["漢字 > x"])
    assert wide.text == "漢字 >"
    assert cell_width(wide.text) == 6
    assert Prompt.at(3, 4, 0, None) == Prompt(3, 4, 0, "")
    assert Prompt(0, 0, 2, "$ ").echo_head("(") == "$ ("


def test_report_keeps_the_owner_mark_out_of_the_fields() -> None:
    report = Report.parse("E 3 5 6 7 2000 A 123 456")
    assert report is not None
    assert report.exit_status == 3
    assert report.end.history_limit == 2000
    assert Report.parse("A 123 456") is None


def test_the_echo_of_an_interrupt_is_not_output() -> None:
    assert without_interrupt_echo(["before", "^C"], 130) == ["before"]
    assert without_interrupt_echo(["before^C"], 130) == ["before"]
    assert without_interrupt_echo(["before", "^C"], 0) == ["before", "^C"]
    assert without_interrupt_echo(["^C", "after"], 130) == ["^C", "after"]
    assert without_interrupt_echo([], 130) == []
    assert without_interrupt_echo(["before", "^C\u23ce   "], 130) == ["before"]


def test_a_prompt_is_known_again_by_its_first_word() -> None:
    assert same_prompt("$ ", "$ ")
    assert same_prompt("root@vm /w/x [SIGINT]# ", "root@vm /w/x# ")
    assert not same_prompt("> ", "bash-5.2# ")
    assert not same_prompt("$ x", "$ ")
    assert not same_prompt("    ", "root@vm /w/x# ")


def test_a_prompt_of_two_rows_after_an_interrupt_is_not_output() -> None:
    lines = ["before", "^C", "root@vm ~ [130]"]
    assert through_interrupt_echo(lines) == ["before", "^C"]
    assert through_interrupt_echo(["before", "after"]) == ["before", "after"]
    assert through_interrupt_echo(["^C", "a", "b", "c", "d"]) == ["^C", "a", "b", "c", "d"]


def test_report_parses_only_complete_records() -> None:
    assert Report.parse("armed") is None
    assert Report.parse("E 0 5 6") is None
    assert Report.parse("E 3 5 6 7 2000") == Report(3, OutputEnd(5, 6, 7, 2000))
    assert Report.parse("E x 5 6 7 2000") is None


def test_rows_are_relative_to_the_screen_at_the_end() -> None:
    # the prompt was on absolute row 10+4; the output ended 20 history rows later, on row 6
    end = OutputEnd(history=30, row=6, column=0, history_limit=2000)
    assert end.first_row_since(Prompt(10, 4)) == -16
    assert end.last_output_row == 5  # the cursor's row holds nothing yet
    assert OutputEnd(30, 6, 3, 2000).last_output_row == 6


@pytest.mark.parametrize(
    ("before", "after", "limit", "known"),
    [
        (10, 30, 2000, True),
        (10, 1799, 2000, True),
        (10, 1800, 2000, False),  # a collection leaves at least 2000 - 200 rows
        (500, 400, 2000, False),  # history shrank: cleared or collected
        (0, 0, 0, False),  # no history at all: every scrolled row is gone
    ],
)
def test_prompt_row_unknown_once_history_may_have_dropped(
    before: int, after: int, limit: int, known: bool
) -> None:
    first = OutputEnd(after, 0, 0, limit).first_row_since(Prompt(before, 0))
    assert (first is not None) is known


def test_after_last_mention() -> None:
    lines = ["$ old", "wrapper tok1 start", "wrapper tok1 end", "out1", "out2"]
    assert after_last_mention(lines, "tok1") == (["out1", "out2"], True)
    assert after_last_mention(["a", "b"], "tok1") == (["a", "b"], False)


@pytest.mark.parametrize(
    ("max_lines", "kept", "dropped"),
    [(None, ["a", "b", "c"], 0), (5, ["a", "b", "c"], 0), (2, ["b", "c"], 1), (0, [], 3)],
)
def test_keep_tail(max_lines: int | None, kept: list[str], dropped: int) -> None:
    assert keep_tail(["a", "b", "c"], max_lines) == (kept, dropped)


@pytest.mark.parametrize(
    ("history", "row", "limit", "known"),
    [
        (0, 1, 2000, 199),  # a fresh pane: the first tenth went, all but the prompt's row
        (1950, 19, 2000, 31),  # near the top of a full history: 1969-2000 went
        (199, 0, 2000, 1),  # the start was the tenth's last row
        (200, 0, 2000, 200),  # ... or the next tenth's first
        (3, 2, 5, 1),  # history-limit below 10: one row at a time
    ],
)
def test_rows_known_dropped_reach_from_the_start_to_the_first_tenth_past_it(
    history: int, row: int, limit: int, known: int
) -> None:
    """tmux drops history-limit/10 rows at a time from the top: once it dropped the
    output's first row, at least the rows from it to the end of that tenth went."""
    end = OutputEnd(history=limit - 10, row=19, column=0, history_limit=limit)
    assert end.rows_dropped_from(Prompt(history, row)) == known


@pytest.mark.parametrize(
    ("history", "reach", "captured", "echo_row", "distance"),
    [
        (5, 1, ["old", "$ true", ""], "$ true", 1),  # the echo's last row just above
        # fish under a command line taller than the pane: a blank row between
        (5, 1, ["old", "xxxx", "", ""], "xxxx", 2),
        (0, 1, ["$ true", ""], "$ true", 1),  # no history: -S -1 starts at the screen's top
        (5, 1, ["", "", ""], "", 1),  # nothing to find it by
        # further up the history (all 5 of its rows, as tmux gives no more), then 3 screen
        # rows of which the cursor's is the last: fish under a much taller line
        (5, 200, ["a", "xxxx", "", "", "", "", "", ""], "xxxx", 6),
        (2, 200, ["", "", "", "", ""], "", 1),
    ],
    ids=["above", "blank-between", "no-history", "all-blank", "history", "history-blank"],
)
def test_a_command_start_keeps_the_nearest_row_above_that_is_not_blank(
    history: int, reach: int, captured: list[str], echo_row: str, distance: int
) -> None:
    """``capture-pane -S -REACH`` gives up to ``reach`` history rows and the screen; the
    cursor is on the last row given here."""
    cursor_y = len(captured) - 1 - min(reach, history)
    start = command_start_from([f"{history}\t{cursor_y}\t0\t2000\t40", *captured], reach)
    assert (start.echo_row, start.echo_distance) == (echo_row, distance)
    assert (start.at.history, start.at.row) == (history, cursor_y)


@pytest.mark.parametrize(
    ("cursor_y", "height", "rows", "found"),
    [
        (23, 24, ["x", "y", "$ true", ""], ("$ true", 1)),
        (23, 24, ["x", "$ true", "", ""], ("$ true", 2)),
        (23, 24, ["", "", "", ""], None),  # nothing above within reach: the screen is read
        (20, 24, ["x", "y", "$ true", ""], None),  # the cursor is not on the last row
        (23, 30, ["x", "y", "$ true", ""], None),  # resized since
        (23, 24, ["x", "$ true", ""], None),  # fewer rows than asked for
    ],
    ids=["above", "blank-between", "all-blank", "not-at-bottom", "resized", "short"],
)
def test_a_start_at_the_screens_bottom_is_read_from_its_last_rows(
    cursor_y: int, height: int, rows: list[str], found: tuple[str, int] | None
) -> None:
    """Where the last command began on the last row of a 24-row screen, its last
    ``BOTTOM_ROWS`` rows are read: the nearest row above the cursor that is not blank,
    as the whole screen would give it; anything else is read whole."""
    assert BOTTOM_ROWS == 4
    start = start_at_bottom([f"100\t{cursor_y}\t0\t2000\t{height}", *rows], 24)
    if found is None:
        assert start is None
        return
    assert start is not None
    assert (start.echo_row, start.echo_distance) == found
    assert (start.at.history, start.at.row, start.history_limit) == (100, 23, 2000)
    whole = command_start_from(["100\t23\t0\t2000\t24", "history", *([""] * 20), *rows], 1)
    assert (whole.echo_row, whole.echo_distance) == found


def test_a_pane_is_read_at_its_bottom_only_while_its_commands_begin_there() -> None:
    bottom = BottomStarts()
    bottom.note("%1", StartCursorRow(100, 23, 0, 2000, 24))
    assert bottom.height("%1") == 24
    bottom.note("%1", StartCursorRow(100, 5, 0, 2000, 24))  # cleared: at the top again
    assert bottom.height("%1") is None
    bottom.note("%2", StartCursorRow(0, 2, 0, 2000, 3))  # too short to read its bottom
    assert bottom.height("%2") is None


def test_a_tail_counted_from_the_output_stream() -> None:
    """Lines lost = the output's line ends less those of the lines kept; a count that
    cannot be right (fewer line ends than the lines kept have) changes nothing."""
    tail = Located(["8", "9", "10"], False, lines_lost=2, line_ends=3)
    assert tail.counted(10).lines_lost == 7
    assert tail.counted(2) == tail
    assert tail.counted(None) == tail
    assert Located(["a"], True, line_ends=1).counted(5).lines_lost == 0
    partial = Located(["9", "no newline"], False, line_ends=1)
    assert partial.counted(10).lines_lost == 9
    # the interrupt's echo, a last line of its own without a line break, taken off
    interrupted = partial.with_lines(["9"])
    assert (interrupted.lines, interrupted.line_ends) == (["9"], 1)
    assert Located(["^C"], False, line_ends=1).with_lines([]).line_ends == 0


def test_a_command_that_wrote_nothing_is_read_with_its_end() -> None:
    """Where the hooks saw the output begin is where a command that wrote nothing leaves
    the cursor: no row is read there, but zsh's end-of-line mark's row (blank once zsh
    wiped its mark); nothing is read ahead where tmux may drop history meanwhile, or the
    history-limit is not known."""
    start = command_start_from(["7\t3\t0\t2000\t4", "", "$ true", "", ""], 1)
    assert quiet_reading("%1", start, "") == (OutputEnd(7, 3, 0, 2000), ())
    end, capture = quiet_reading("%1", start, "%") or (None, ())
    assert end == OutputEnd(7, 3, 0, 2000)
    assert capture[1:] == ("capture-pane", "-p", "-J", "-t", "%1", "-S", "3", "-E", "3")
    assert quiet_output([], start, end, "") == Located([], True, line_ends=0)
    assert quiet_output([" " * 10], start, end, "%") == Located([], True, line_ends=0)
    assert quiet_output(["abc%   "], start, end, "%") == Located(["abc"], True, line_ends=0)
    full = command_start_from(["1900\t3\t0\t2000\t4", "", "$ true", "", ""], 1)
    assert quiet_reading("%1", full, "") is None
    unknown = command_start_from(["7\t3\t0\t0\t4", "", "$ true", "", ""], 1)
    assert quiet_reading("%1", unknown, "") is None
