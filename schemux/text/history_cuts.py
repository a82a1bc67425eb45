"""A row of a pane's grid followed as tmux cuts the history above it (pure).

Rows are numbered from the oldest one tmux keeps: the visible top row is number
``history_size``. When the history reaches ``history-limit`` and one more row scrolls
into it, tmux frees the oldest tenth of the limit (``grid_collect_history``: at least one
row), and every row's number drops by as much; nothing else tmux does frees rows from the
top, but ``clear-history`` (or a program's ``CSI 3 J``) frees them all, and a change of
the pane's width rewraps them.

A reading (``HistoryReading``) does not say how many tenths were cut since the last one:
output that goes on while the pane is read cuts a tenth for every tenth of the limit it
writes. It says enough to tell: the history size a cut leaves is never below the limit
less a tenth, so a shorter history was not cut (it was cleared, or the pane grew taller
and took rows back onto its screen); and the last rows of history at one reading are in
the next one as they were, higher by exactly the rows cut (rows in history never
change), unless they were cut themselves. ``FollowedRow.follow`` tries each number of
tenths in turn, the fewest first, and takes the first under which those rows are where
they should be: when repeated text matches under two numbers, it takes the smaller, so
the row is never placed higher than it is (no row older than it is ever taken for a row
below it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

# the last rows of history each reading keeps, to find them in the next one
LAST_ROWS = 10
# rows read around where those rows are expected, for output written meanwhile
_SLACK_ROWS = 2 * LAST_ROWS


@dataclass(frozen=True)
class HistoryReading:
    """A pane's grid at one moment: its history size and limit, its size, and the last
    rows of its history (at most ``LAST_ROWS``, as ``capture-pane`` prints them unjoined)."""

    history_size: int
    history_limit: int
    height: int
    width: int
    last_rows: tuple[str, ...] = ()


class HistoryUnknown(Exception):
    """The rows above the followed row changed in a way a cut does not explain: the
    history was cleared, or the pane was resized, so where the row is cannot be told."""

    def __init__(self, before: HistoryReading, after: HistoryReading, cause: str) -> None:
        super().__init__(cause)
        self.before = before
        self.after = after
        self.cause = cause


def captured_rows(start: int | None, end: int | None, history_size: int, height: int) -> range:
    """The rows (by number) that ``capture-pane -S start -E end`` prints from a grid of
    ``history_size`` and ``height``: ``start`` and ``end`` are relative to the visible top,
    ``None`` is ``-`` (the oldest row, the bottom row); tmux clamps both to the grid and
    takes them in either order."""
    bottom_row = history_size + height - 1

    def row(offset: int | None, default: int) -> int:
        if offset is None:
            return default
        return min(0 if -offset > history_size else history_size + offset, bottom_row)

    top, bottom = row(start, 0), row(end, bottom_row)
    return range(min(top, bottom), max(top, bottom) + 1)


def _cuts(before: HistoryReading, history_size: int, height: int) -> tuple[int, bool] | None:
    """The fewest rows tmux can have cut from the top between ``before`` and a reading
    of ``history_size`` and ``height``, and whether it may have cut more (any number of
    tenths of the limit more); None when no cut explains a history this short."""
    limit = before.history_limit
    if limit == 0:  # no history: rows leave the screen's top with no number to follow
        return 0, False
    tenth = max(1, limit // 10)
    grown = max(0, height - before.height)  # rows a taller pane took back from history
    shrank = history_size < before.history_size - grown
    if history_size < limit - tenth + 1 - grown:  # shorter than any cut leaves it
        return None if shrank else (0, False)
    return (tenth if shrank else 0), True


class FollowedRow:
    """A row's number, followed from reading to reading of its pane (see the module);
    once the row itself is cut, every row left is below where it was, and the number is
    0 for good."""

    def __init__(self, number: int, reading: HistoryReading) -> None:
        self.number = max(0, number)
        self.reading = reading

    def guess(self, history_size: int, height: int) -> tuple[int, range | None]:
        """For a reading about to be taken of a grid last seen with ``history_size`` and
        ``height``: the row's number if tmux cut the fewest rows it can have, and the rows
        (in that numbering) that ``follow`` will need to tell (None: none)."""
        cuts = _cuts(self.reading, history_size, height)
        if cuts is None or self.number == 0:
            return self.number, None
        fewest, more = cuts
        number = max(0, self.number - fewest)
        last = self.reading.last_rows
        if not more or not last:
            return number, None
        end = self.reading.history_size - fewest  # just below where the last rows are
        return number, range(max(0, end - len(last) - _SLACK_ROWS), max(0, end + _SLACK_ROWS))

    def follow(self, reading: HistoryReading, rows: Sequence[str], first: int) -> bool:
        """Follow the row to ``reading``, taken after the last one, given ``rows`` of its
        grid, unjoined, from row number ``first``; False (nothing changed) when the rows
        that would tell how much tmux cut are not among them. Raises HistoryUnknown when
        the history was cleared or the pane resized such that the row cannot be told."""
        if self.number > 0:
            cut = self._cut(reading, rows, first)
            if cut is None:
                return False
            self.number = max(0, self.number - cut)
        self.reading = reading
        return True

    def _cut(self, reading: HistoryReading, rows: Sequence[str], first: int) -> int | None:
        """How many rows tmux cut from the top since the last reading; None when
        ``rows`` (from row ``first``) do not hold the rows that tell."""
        before = self.reading
        cuts = _cuts(before, reading.history_size, reading.height)
        if cuts is None:
            # the history was cleared: a row that was in it went with it, and every row
            # left is below it
            if self.number <= before.history_size and _same_size(before, reading):
                return self.number
            raise HistoryUnknown(before, reading, "cleared")
        cut, more = cuts
        if not more:
            return cut
        last, end = before.last_rows, before.history_size
        tenth = max(1, before.history_limit // 10)
        while True:
            top = end - len(last) - cut  # where the first of the last rows is, cut so much
            kept = last[max(0, -top) :]
            if not kept:  # those rows were cut too, all of them
                if last and not _same_size(before, reading):
                    raise HistoryUnknown(before, reading, "resized")
                return cut
            at = max(0, top) - first
            if at < 0 or at + len(kept) > len(rows):
                return None
            if tuple(rows[at : at + len(kept)]) == kept:
                return cut
            cut += tenth


def _same_size(before: HistoryReading, after: HistoryReading) -> bool:
    return (before.width, before.height) == (after.width, after.height)
