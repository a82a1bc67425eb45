"""Where a typed command's output lies in a pane's rows, and whether that is certain.

Pure functions over what tmux reported; ``schemux.shell.capture`` does the tmux work.

The output starts after the shell's echo of the typed wrapper, whose last line carries
the call's private token. The command can print that token too (``history 1`` prints the
typed text), so a mention alone proves nothing: the echo is identified by where it
starts, on the prompt's row at the prompt's cursor, which was read before typing, in the
same tmux call. Its first typed line (``(``) must appear there, after the prompt's own
text; the first mention of the token from there on ends the echo. A command printing the
token comes later, so it cannot move the start.

When that cannot be established (the shell echoed nothing, as after ``stty -echo``; or
tmux dropped history rows so that the prompt's row is unknown and the echo head cannot be
found), the output is never guessed: the lines after the last mention of the token (which
only the command can have printed) are a tail of the output, reported as cut; with no
mention at all, the caller decides from what else it knows, or fails.
"""

from __future__ import annotations

import dataclasses
import unicodedata
from dataclasses import dataclass


@dataclass(frozen=True)
class Prompt:
    """Where the prompt was just before typing, and its row's text up to the cursor."""

    history: int
    row: int
    column: int = 0
    text: str = ""

    @classmethod
    def at(cls, history: int, row: int, column: int = 0, screen: list[str] | None = None) -> Prompt:
        """The prompt at history size ``history``, cursor ``row`` and ``column``;
        ``screen`` the visible rows (``capture-pane -p`` without ``-J``: one line a row,
        trailing spaces trimmed)."""
        rows = screen or []
        text = rows[row] if 0 <= row < len(rows) else ""
        before = text[: _index_of_cell(text, column)]
        # the trim took the spaces the prompt wrote before the cursor: put them back
        return cls(history, row, column, before + " " * (column - cell_width(before)))

    def echo_head(self, typed: str) -> str:
        """What the prompt's row shows once the shell echoed ``typed`` at the cursor."""
        return self.text + typed


@dataclass(frozen=True)
class OutputEnd:
    """Where a command's output ends: the terminal cursor's row and column then, the
    history size and history-limit."""

    history: int
    row: int
    column: int
    history_limit: int

    @property
    def last_output_row(self) -> int:
        """Row (relative to the visible screen) of the last output line."""
        return self.row if self.column > 0 else self.row - 1

    def rows_dropped_from(self, start: Prompt) -> int:
        """How many rows from ``start``'s on tmux has certainly dropped, once it dropped
        that row itself: it drops history-limit/10 rows at a time from the top, so at
        least the first multiple of that reaching past ``start``'s row; any more
        (another tenth for every tenth the output scrolled by since) it keeps no count of.
        """
        tenth = max(1, self.history_limit // 10)
        index = start.history + start.row  # from the top of the history then
        return -(-(index + 1) // tenth) * tenth - index

    def first_row_since(self, prompt: Prompt) -> int | None:
        """Row (relative to the visible screen) where ``prompt`` is now; None when tmux may
        have dropped history rows since, so that the prompt's row is no longer known.

        tmux frees a tenth of history-limit whenever the history is full, so after any
        drop the history holds at least limit - limit/10 rows.
        """
        collected = max(1, self.history_limit // 10)
        if self.history < prompt.history or self.history >= self.history_limit - collected:
            return None
        return prompt.history + prompt.row - self.history


@dataclass(frozen=True)
class Report:
    """What the wrapper recorded after the command: ``E status history row column limit``,
    followed by what the option held before (the owner's mark)."""

    exit_status: int
    end: OutputEnd

    @classmethod
    def parse(cls, value: str) -> Report | None:
        """None while the command has not ended (or for anything else)."""
        fields = value.split()
        if len(fields) < 6 or fields[0] != "E":
            return None
        try:
            status, history, row, column, limit = (int(field) for field in fields[1:6])
        except ValueError:
            return None
        return cls(status, OutputEnd(history, row, column, limit))


# characters besides the typed line that its echo's rows may show (PS2, a right prompt)
PS2_SLACK = 160


@dataclass(frozen=True)
class Located:
    """The output lines, and whether they are certainly all of it (else a tail); of a
    tail, how many lines of its head tmux dropped: counted exactly from the pane's
    output stream where that was seen, else the rows tmux is known to have dropped (a
    lower bound where no line is wider than the pane: see
    ``OutputEnd.rows_dropped_from``; 0 where that is not known). ``line_ends``: how many
    of the lines ended with a line break in the output (all, or all but the last), where
    known."""

    lines: list[str]
    exact: bool
    lines_lost: int = 0
    line_ends: int | None = None

    def with_lines(self, lines: list[str]) -> Located:
        """The same output with ``lines`` in place of its lines: its last line's echo of
        an interrupt taken off, or that whole line (``without_interrupt_echo``)."""
        ends = None if self.line_ends is None else min(self.line_ends, len(lines))
        return dataclasses.replace(self, lines=lines, line_ends=ends)

    def counted(self, line_ends: int | None) -> Located:
        """This tail, its lines lost counted exactly from the output's ``line_ends`` (all
        the command wrote: ``text.command_marks``); as it is when either count is not
        known, or they disagree."""
        if self.exact or line_ends is None or self.line_ends is None:
            return self
        if line_ends < self.line_ends:
            return self
        return dataclasses.replace(self, lines_lost=line_ends - self.line_ends)


@dataclass(frozen=True)
class Finished:
    """How a typed command's call ended: its output, its exit status (None for one still
    running), and whether the call timed out."""

    output: Located
    exit_status: int | None
    timed_out: bool


def locate_output(
    lines: list[str], token: str, echo_head: str, last_typed: str = ""
) -> Located | None:
    """The output among ``lines`` (joined rows, from the prompt's row or from the top of
    the history, up to the output's last row). None when no line mentions the token.

    The echo starts on a line showing ``echo_head`` (the prompt's text, then the first
    typed line); the first mention of the token from there ends it. An older call's echo
    shows the same head, but it is older than this one's, so tmux drops it first, and its
    token differs: the first mention after it is still this call's echo. Only the command
    itself can put the head on a line after this echo was dropped (by printing the
    prompt's text and the typed line together), or before it (by moving the cursor up).

    An echo may span rows that are not joined (zsh's line editor draws a long line row by
    row, where the terminal does not wrap it): the head is then looked for in the rows
    put together, and the echo of the last typed line, ``last_typed``, ends on the first
    row from the first mention on where those rows put together end as that line ends,
    within that line's length.
    """
    first = next((index for index, line in enumerate(lines) if token in line), None)
    if first is None:
        return None
    if any(echo_head in line for line in lines[: first + 1]) or _compact(echo_head) in "".join(
        _compact(line) for line in lines[: first + 1]
    ):
        return Located(lines[_echo_end(lines, first, last_typed) + 1 :], True)
    return Located(after_last_mention(lines, token)[0], False)


def _echo_end(lines: list[str], first: int, last_typed: str) -> int:
    """The index of the echo's last row, from ``first``, the first that mentions the token
    (see ``locate_output``)."""
    ending = last_typed[-24:]
    if not ending:
        return first
    ending = _compact(ending)
    shown = ""
    for index in range(first, len(lines)):
        shown += _compact(lines[index])  # rows the editor drew: the line cut anywhere
        if len(shown) > len(last_typed) + PS2_SLACK:
            break
        if shown.endswith(ending):
            return index
    return first


def _compact(text: str) -> str:
    """``text`` without spaces: rows an editor drew, put together, lose the spaces where
    it cut the line (the terminal trims them), so they are compared without any."""
    return text.replace(" ", "")


def after_last_mention(lines: list[str], token: str) -> tuple[list[str], bool]:
    """The lines after the last one that shows ``token``, and whether there was one;
    without one, all the lines."""
    for index in range(len(lines) - 1, -1, -1):
        if token in lines[index]:
            return lines[index + 1 :], True
    return lines, False


# what the terminal echoes for the C-c that interrupted a command (ECHOCTL)
INTERRUPT_ECHO = "^C"
INTERRUPTED_STATUS = 130  # 128 + SIGINT
FISH_NO_NEWLINE_MARK = "\u23ce"  # fish's ⏎ after output without a final newline


def without_interrupt_echo(lines: list[str], status: int | None) -> list[str]:
    """``lines`` without the terminal's echo of the C-c that interrupted the command (the
    terminal's, not the command's output): the ``^C`` that ends the last line."""
    if status != INTERRUPTED_STATUS or not lines:
        return lines
    # fish marks the line (its prompt's "missing newline" mark, and spaces) after it
    last = lines[-1].rstrip(" ").removesuffix(FISH_NO_NEWLINE_MARK)
    if not last.endswith(INTERRUPT_ECHO):
        return lines
    last = last.removesuffix(INTERRUPT_ECHO)
    return [*lines[:-1], last] if last else lines[:-1]


def through_interrupt_echo(lines: list[str], within: int = 4) -> list[str]:
    """``lines`` up to the last of their last ``within`` that ends with the terminal's
    echo of a C-c: what follows it is the prompt the shell drew after dropping the
    interrupted line (a prompt of two rows or more); all of them without such an echo."""
    for index in range(len(lines) - 1, max(len(lines) - within, 0) - 1, -1):
        if lines[index].rstrip(" ").removesuffix(FISH_NO_NEWLINE_MARK).endswith(INTERRUPT_ECHO):
            return lines[: index + 1]
    return lines


def keep_tail(lines: list[str], max_lines: int | None) -> tuple[list[str], int]:
    """The last ``max_lines`` lines (all of them for None) and how many were dropped."""
    if max_lines is None or len(lines) <= max_lines:
        return lines, 0
    return lines[len(lines) - max_lines :], len(lines) - max_lines


def char_width(char: str) -> int:
    """Terminal cells of one character: 2 for wide, 0 for combining marks, else 1."""
    if unicodedata.combining(char):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def cell_width(text: str) -> int:
    return sum(char_width(char) for char in text)


def _index_of_cell(text: str, column: int) -> int:
    """The index in ``text`` of the character at cell ``column`` (len(text) past it)."""
    cells = 0
    for index, char in enumerate(text):
        if cells >= column:
            return index
        cells += char_width(char)
    return len(text)
