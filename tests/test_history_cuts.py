"""A row followed across tmux's history cuts (schemux.text.history_cuts), against a model
of tmux's grid: at its history-limit, the next row that scrolls into history first frees
the oldest tenth of the limit (grid_collect_history, then grid_scroll_history)."""

from __future__ import annotations

from typing import cast

import pytest
from hypothesis import given
from hypothesis import strategies as st

from schemux.domain.pane_watch import PaneState, PaneWatch, Reading
from schemux.domain.text_wait import _rows_since
from schemux.text.history_cuts import (
    LAST_ROWS,
    FollowedRow,
    HistoryReading,
    HistoryUnknown,
    captured_rows,
)
from tests.support import run_apart

WIDTH = 80


class Grid:
    """A pane's grid as tmux keeps it, its cursor on the bottom row: each line written
    scrolls the screen's top row into history. Every row has an id of its own, so a row
    is known wherever it moved, whatever its text."""

    def __init__(self, limit: int, height: int) -> None:
        self.limit, self.height = limit, height
        self.texts = [f"screen {row}" for row in range(height)]
        self.ids = list(range(-height, 0))
        self.written = 0

    @property
    def history_size(self) -> int:
        return len(self.texts) - self.height

    def write(self, count: int, period: int | None = None) -> int:
        """Write ``count`` lines (their text repeating every ``period``); the rows cut."""
        cuts = 0
        for _ in range(count):
            if self.history_size >= self.limit:
                cut = min(max(1, self.limit // 10), self.history_size)
                del self.texts[:cut], self.ids[:cut]
                cuts += cut
            self.written += 1
            self.texts.append(f"row {self.written % period if period else self.written}")
            self.ids.append(self.written)
        return cuts

    def clear_history(self) -> None:
        del self.texts[: self.history_size], self.ids[: self.history_size]

    def reading(self) -> HistoryReading:
        size = self.history_size
        last = tuple(self.texts[max(0, size - LAST_ROWS) : size])
        return HistoryReading(size, self.limit, self.height, WIDTH, last)

    def number_of(self, row_id: int) -> int:
        """Where the row is now; 0 once it was cut (every row left is below it)."""
        return self.ids.index(row_id) if row_id in self.ids else 0


def follow_as_the_wait_does(followed: FollowedRow, grid: Grid) -> int:
    """Read the rows ``guess`` asks for, and when they do not tell, the whole grid (which
    always tells); the number guessed."""
    number, wanted = followed.guess(grid.history_size, grid.height)
    rows, first = [], 0
    if wanted is not None:
        rows, first = grid.texts[wanted.start : wanted.stop], wanted.start
    if not followed.follow(grid.reading(), rows, first):
        assert followed.follow(grid.reading(), grid.texts, 0)
    return number


bursts = st.lists(st.integers(min_value=0, max_value=400), min_size=1, max_size=12)


@given(
    limit=st.sampled_from([5, 50, 100, 2000]),
    before=st.integers(min_value=0, max_value=2500),
    cursor=st.integers(min_value=0, max_value=23),
    bursts=bursts,
)
def test_a_row_is_followed_exactly_through_any_output(
    limit: int, before: int, cursor: int, bursts: list[int]
) -> None:
    """Distinct rows: wherever the row is after each burst (many cuts between two
    readings included, and the row itself cut), that is its number, unless the rows that
    were in history at the last reading were all cut while the row was on the screen
    (or there were none): then it is placed no higher than it is."""
    grid = Grid(limit, 24)
    grid.write(before)
    row_id = grid.ids[grid.history_size + cursor]
    followed = FollowedRow(grid.history_size + cursor, grid.reading())
    for burst in bursts:
        size, number = grid.history_size, followed.number
        exact = number == grid.number_of(row_id)
        cut = grid.write(burst)
        guessed = follow_as_the_wait_does(followed, grid)
        assert guessed >= followed.number >= grid.number_of(row_id)
        if exact and (cut == 0 or cut < size or number <= size):
            assert followed.number == grid.number_of(row_id)


@given(
    limit=st.sampled_from([50, 100, 2000]),
    period=st.sampled_from([1, 2, 3, 7]),
    before=st.integers(min_value=0, max_value=2500),
    bursts=bursts,
)
def test_repeated_text_never_places_the_row_higher(
    limit: int, period: int, before: int, bursts: list[int]
) -> None:
    """Rows that repeat (``yes``, a loop's output) match under several numbers of cuts:
    the row is placed no higher than it is, so no older row is taken for a newer one."""
    grid = Grid(limit, 24)
    grid.write(before, period)
    row_id = grid.ids[grid.history_size + 23]
    followed = FollowedRow(grid.history_size + 23, grid.reading())
    for burst in bursts:
        grid.write(burst, period)
        guessed = follow_as_the_wait_does(followed, grid)
        assert guessed >= followed.number >= grid.number_of(row_id)


def test_without_a_cut_the_row_keeps_its_number_and_nothing_is_read() -> None:
    grid = Grid(2000, 24)
    grid.write(100)
    followed = FollowedRow(grid.history_size + 23, grid.reading())
    grid.write(50)
    assert followed.guess(grid.history_size, grid.height) == (123, None)
    assert followed.follow(grid.reading(), [], 0)
    assert followed.number == 123


def test_rows_that_do_not_tell_change_nothing() -> None:
    grid = Grid(100, 24)
    grid.write(200)
    followed = FollowedRow(grid.history_size + 23, grid.reading())
    grid.write(35)  # several cuts: the last rows of history are three tenths higher
    before = (followed.number, followed.reading)
    screen = grid.history_size  # the rows that tell are in history, above the screen
    assert not followed.follow(grid.reading(), grid.texts[screen:], screen)
    assert (followed.number, followed.reading) == before
    assert followed.follow(grid.reading(), grid.texts, 0)


def test_a_history_cleared_above_the_row_leaves_only_newer_rows() -> None:
    grid = Grid(2000, 24)
    grid.write(100)
    followed = FollowedRow(grid.history_size + 23, grid.reading())
    grid.write(40)  # the row is in history now
    assert followed.follow(grid.reading(), [], 0)
    grid.clear_history()
    grid.write(3)
    assert followed.follow(grid.reading(), [], 0)
    assert followed.number == 0


def test_a_history_cleared_while_the_row_was_on_the_screen_cannot_be_told() -> None:
    grid = Grid(2000, 24)
    grid.write(100)
    followed = FollowedRow(grid.history_size + 23, grid.reading())
    grid.clear_history()
    grid.write(3)
    with pytest.raises(HistoryUnknown) as raised:
        followed.follow(grid.reading(), [], 0)
    assert (raised.value.cause, raised.value.before.history_size) == ("cleared", 100)


def test_a_taller_pane_taking_rows_back_from_history_is_no_cut() -> None:
    reading = HistoryReading(500, 2000, 24, WIDTH, ("a",))
    followed = FollowedRow(510, reading)
    assert followed.follow(HistoryReading(490, 2000, 34, WIDTH, ("b",)), [], 0)
    assert followed.number == 510


def test_a_rewrapped_history_with_no_row_left_where_it_was_cannot_be_told() -> None:
    grid = Grid(100, 24)
    grid.write(200)
    followed = FollowedRow(grid.history_size + 23, grid.reading())
    grid.write(15)
    wider = HistoryReading(grid.history_size, 100, 24, WIDTH + 20, ())
    with pytest.raises(HistoryUnknown) as raised:
        followed.follow(wider, ["rewrapped"] * len(grid.texts), 0)
    assert raised.value.cause == "resized"


def test_a_row_cut_stays_at_zero() -> None:
    followed = FollowedRow(-5, HistoryReading(0, 100, 24, WIDTH))
    assert followed.number == 0
    assert followed.guess(0, 24) == (0, None)
    assert followed.follow(HistoryReading(0, 100, 24, WIDTH), [], 0)  # cleared: still 0


@pytest.mark.parametrize(
    ("start", "end", "rows"),
    [
        (None, None, range(0, 124)),  # -S - -E -: the whole grid
        (-10, -1, range(90, 100)),  # the last ten rows of history
        (-500, -1, range(0, 100)),  # from before the oldest row: from the oldest
        (-10, None, range(90, 124)),
        (5, None, range(105, 124)),
        (40, None, range(123, 124)),  # past the bottom: the bottom row
        (-1, -10, range(90, 100)),  # either order
        (-3, -200, range(0, 98)),
    ],
)
def test_captured_rows_are_tmux_s(start: int | None, end: int | None, rows: range) -> None:
    """cmd-capture-pane.c's clamps, for a grid of 100 rows of history and 24 on screen."""
    assert captured_rows(start, end, 100, 24) == rows


class GridWatch:
    """PaneWatch's reads, on a ``Grid``: before each read answers, the grid is written
    to (``during``, a count a read, in turn: output that arrives while the read is on its
    way). Rows do not wrap here: a joined capture is the same rows."""

    pane_id = "%0"

    def __init__(self, grid: Grid, during: list[int]) -> None:
        self.grid = grid
        self.during = during
        self.reads = 0

    async def read(self, captures: list[tuple[str, ...]]) -> Reading:
        self.grid.write(self.during[self.reads % len(self.during)])
        self.reads += 1
        printed = []
        for flags in captures:
            options = dict(zip(*[iter(flag for flag in flags if flag != "-J")] * 2, strict=True))
            start, end = (options.get(flag, "-") for flag in ("-S", "-E"))
            rows = captured_rows(
                None if start == "-" else int(start),
                None if end == "-" else int(end),
                self.grid.history_size,
                self.grid.height,
            )
            printed.append(self.grid.texts[rows.start : rows.stop])
        return Reading(self.grid.reading(), False, printed)


def order(text: str) -> int:
    """Where a row of a ``Grid`` came in the order written (a screen's first rows first)."""
    kind, number = text.split()
    return int(number) - (24 if kind == "screen" else 1)


def state_of(grid: Grid) -> PaneState:
    return PaneState(grid.history_size, grid.height - 1, grid.height, "1", False, False, True)


@given(
    limit=st.sampled_from([50, 100, 2000]),
    before=st.integers(min_value=0, max_value=2500),
    bursts=bursts,
    during=st.lists(st.integers(min_value=0, max_value=300), min_size=1, max_size=4),
)
def test_a_wait_reads_no_row_above_its_first_while_output_goes_on(
    limit: int, before: int, bursts: list[int], during: list[int]
) -> None:
    """The wait's reads (``text_wait._rows_since``) with output arriving between a
    check and its read, cutting history any number of times: the rows a read returns
    begin at the first row that counts or below it, never above; and with no output
    during the reads, they are exactly the rows from where it is placed down."""
    grid = Grid(limit, 24)
    grid.write(before)
    row_id, first_text = grid.ids[-1], grid.texts[-1]
    followed = FollowedRow(grid.history_size + 23, grid.reading())
    watch = GridWatch(grid, during)
    for burst in bursts:
        grid.write(burst)
        state = state_of(grid)
        _, rows = run_apart(_rows_since, cast(PaneWatch, watch), followed, state)
        assert followed.number >= grid.number_of(row_id)
        if rows:  # in the order written, from the first row that counts or a later one
            written = [order(text) for text in rows]
            assert written == list(range(written[0], written[0] + len(rows)))
            assert written[0] >= order(first_text)
        if not any(during):  # no output while reading: every row from where it is placed
            assert rows == grid.texts[followed.number :]
