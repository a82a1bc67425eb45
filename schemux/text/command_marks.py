"""A command's output lines counted in the bytes its pane's shell wrote, between the
OSC 133 marks shells with schemux's hooks write around each command (``schemux.hooks``):
``C`` after the typed line's echo, before the output; ``D`` after the output.

The count is of line ends: the line feeds, vertical tabs and form feeds tmux takes as a
line feed, whatever the terminal's width (a line wider than the pane is one line, as in
a capture with ``-J``). That is the output's number of lines only while the output is
written line after line: one that moves the cursor up or down, scrolls, sets a scroll
region, restores a saved cursor, clears the screen or switches to the alternate screen
(a progress display redrawing its rows) has no count. It is kept as the text arrives, an
escape sequence cut between two pieces carried over to the next, so a long output costs
no memory (pure).
"""

from __future__ import annotations

import re

# what the count follows: the hooks' marks (fish 4 writes ``C;cmdline_url=...``: the
# prefix is enough), and what makes line ends no longer the output's lines: cursor moves
# up or down, scrolls, inserted or deleted rows, a scroll region (CSI A B E F H L M S T
# d e f r), clears of the screen or history (CSI 2J, 3J), a restored cursor (CSI u, ESC 8),
# the alternate screen, a line feed or reverse one by ESC D, E, M, a reset (ESC c)
_EVENTS = re.compile(
    r"\x1b\]133;([CD])"
    r"|\x1b\[[0-9;]*[ABEFHLMSTdefr]|\x1b\[[23]J|\x1b\[u"
    r"|\x1b\[\?(?:1049|1047|47)h|\x1b[8DEMc]"
)
# the end of a piece that may begin one of those, which the next piece completes
_CUT = re.compile(r"\x1b(?:\][0-9;]{0,4}|\[\??[0-9;]{0,16})?\Z")
_LINE_FEEDS = ("\n", "\v", "\f")


def _line_ends(text: str) -> int:
    return sum(text.count(feed) for feed in _LINE_FEEDS)


class CommandOutputLines:
    """The line ends a pane's text holds between the first ``C`` mark and the last
    ``D`` mark after it, fed as the pane writes (``feed``).

    The last ``D`` is taken, not the first, so that an output that writes marks of its
    own is counted whole: read while the hooks hold the shell after its ``D``, nothing
    of the shell's comes after that mark yet."""

    def __init__(self) -> None:
        self._started = False
        self._counted = 0  # line ends since the C mark
        self._moved = False  # the cursor moved otherwise since the C mark
        self._at_end: int | None = None  # line ends up to the last D mark
        self._carry = ""  # an escape sequence's beginning, at the end of the last piece

    @property
    def line_ends(self) -> int | None:
        """The line ends of the output up to the last ``D`` mark; None before one, or
        when the output moved the cursor other than line by line before it."""
        return self._at_end

    def feed(self, text: str) -> None:
        """The pane's next text (as it wrote it, in order)."""
        text = self._carry + text
        cut = _CUT.search(text, max(len(text) - 24, 0))
        self._carry = cut.group() if cut is not None else ""
        text = text[: len(text) - len(self._carry)]
        at = 0
        for event in _EVENTS.finditer(text):
            if self._started:
                self._counted += _line_ends(text[at : event.start()])
            at = event.end()
            mark = event.group(1)
            if mark == "C":
                self._started = True
            elif not self._started:
                continue
            elif mark == "D":
                self._at_end = None if self._moved else self._counted
            else:
                self._moved = True
        if self._started:
            self._counted += _line_ends(text[at:])
