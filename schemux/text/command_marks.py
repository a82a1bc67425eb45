"""A command's output lines counted in the bytes its pane's shell wrote, between the
OSC 133 marks shells with schemux's hooks write around each command (``schemux.hooks``):
``C`` after the typed line's echo, before the output; ``D`` after the output.

The count is of line ends: the line feeds, vertical tabs and form feeds tmux takes as a
line feed, whatever the terminal's width (a line wider than the pane is one line, as in
a capture with ``-J``). It is kept as the text arrives, a few characters carried over
from one piece to the next, so a long output costs no memory (pure).
"""

from __future__ import annotations

_MARK = "\x1b]133;"
_START = _MARK + "C"  # fish 4 writes ``C;cmdline_url=...``: the prefix is enough
_END = _MARK + "D"
_LINE_FEEDS = ("\n", "\v", "\f")


def _line_ends(text: str) -> int:
    return sum(text.count(feed) for feed in _LINE_FEEDS)


def _partial_mark(text: str) -> str:
    """The end of ``text`` that may begin a mark the next piece completes ("" if none)."""
    start = text.rfind("\x1b", -len(_END) + 1)
    if start == -1:
        return ""
    tail = text[start:]
    return tail if _END.startswith(tail) or _START.startswith(tail) else ""


class CommandOutputLines:
    """The line ends a pane's text holds between the first ``C`` mark and the last
    ``D`` mark after it, fed as the pane writes (``feed``).

    The last ``D`` is taken, not the first, so that an output that writes marks of its
    own is counted whole: read while the hooks hold the shell after its ``D``, nothing
    of the shell's comes after that mark yet."""

    def __init__(self) -> None:
        self._started = False
        self._counted = 0  # line ends since the C mark, up to the carry
        self._at_end: int | None = None  # line ends up to the last D mark
        self._carry = ""  # a mark's beginning, at the end of the last piece

    @property
    def line_ends(self) -> int | None:
        """The line ends of the output up to the last ``D`` mark; None before one."""
        return self._at_end

    def feed(self, text: str) -> None:
        """The pane's next text (as it wrote it, in order)."""
        text = self._carry + text
        if not self._started:
            found = text.find(_START)
            if found == -1:
                self._carry = _partial_mark(text)
                return
            self._started = True
            text = text[found + len(_START) :]
        at = 0
        while (found := text.find(_END, at)) != -1:
            self._counted += _line_ends(text[at:found])
            self._at_end = self._counted
            at = found + len(_END)
        self._carry = _partial_mark(text[at:])
        self._counted += _line_ends(text[at : len(text) - len(self._carry)])
