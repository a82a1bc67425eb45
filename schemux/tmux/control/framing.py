"""Reading a tmux control client's output into each caller's answer, whatever it holds.

tmux's ``-C`` mode answers each command of a line with a block, ``%begin TIME NUM
FLAGS`` ... ``%end``/``%error`` with the same numbers; commands that run further
commands (``if-shell``, ``source-file``, ...) answer with several blocks. Lines outside
blocks are notifications (``%exit``, ``%window-close``, ...).

That framing cannot be trusted inside a block: tmux writes a command's output raw, so a
``capture-pane`` of a program that prints ``%end 1796044169 269 1`` or ``%exit`` holds
those lines, and block numbers are a guessable counter. So a caller's answer is found by
sentinels instead, which nothing in a pane can print: after each command of a caller's
line runs ``display-message -p TOKEN`` (a random token per call and command), and a line
of its own does after the whole line (it runs even when a command fails, which skips the
rest of its line). The lines up to a sentinel's answer are one command's span; in it,
the first ``%begin`` is genuine (tmux writes nothing of a command before it), and the
last ``%end``/``%error`` with the same numbers is genuine (nothing but notifications
follows it), so everything between them is that command's output, whatever it holds.
A command that runs further commands has several blocks in its span, read in order by
their framing: the commands it runs must not print program-controlled text.

A block whose ``%begin`` ends in flags ``0`` did not come from this client's input: tmux
also runs on a control client commands that find it the best client to run on (the
delayed ``run-shell -b -C`` of another client, whose target client is the most recently
active attached one; hooks of its attach). Such a block is nobody's answer, wherever it
comes: before a caller's first block it would otherwise be taken for that caller's, and
the caller's own answer lost (a just-made pane's ``list-panes`` answered with nothing).
"""

from __future__ import annotations

import asyncio
import secrets
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from schemux.errors import SchemuxError

# commands whose answer is several blocks: they run further commands in place
RUNS_COMMANDS = frozenset({"if-shell", "if", "source-file", "source", "run-shell", "run"})
# commands that print nothing when they succeed, whatever they are given: consecutive ones
# share one span (no sentinel between them: fewer commands for tmux to run, fewer lines
# to read), read by their blocks' framing, which nothing they print can forge where no
# argument of theirs holds a line break (an error may quote an argument)
SILENT = frozenset(
    {
        "copy-mode", "send-keys", "set-buffer", "paste-buffer", "set-option",
        "refresh-client", "link-window", "unlink-window",
    }
)  # fmt: skip
# how a block's framing ends when its command did not come from this client's input
FOREIGN = " 0"


@dataclass
class Answer:
    """A caller's line on its way: the sentinel token that ends each command's span
    (the last one is the line of its own), and what the spans read so far gave."""

    future: asyncio.Future[list[str]]
    sentinels: list[str]
    runs_commands: list[bool]  # per span: several blocks, read by their framing
    spans: list[list[Sequence[str]]] = field(default_factory=list)  # the commands of each
    lines: list[str] = field(default_factory=list)
    error: list[str] | None = None
    span: int = 0
    buffered: list[str] = field(default_factory=list)  # the span from its first %begin

    @classmethod
    def expecting(
        cls, future: asyncio.Future[list[str]], commands: Sequence[Sequence[str]]
    ) -> Answer:
        """The answer to a line of ``commands``, with fresh sentinel tokens: one after
        each span (``spans_of``)."""
        token = f"schemux-{secrets.token_hex(12)}"
        spans = spans_of(commands)
        return cls(
            future,
            [f"{token}-{index}" for index in range(len(spans))],
            [len(span) > 1 or (bool(span[0]) and span[0][0] in RUNS_COMMANDS) for span in spans],
            spans,
        )


def spans_of(commands: Sequence[Sequence[str]]) -> list[list[Sequence[str]]]:
    """The commands of a line, each in a span of its own but for consecutive ``SILENT``
    ones with no line break in their arguments, which share one (pure)."""
    spans: list[list[Sequence[str]]] = []
    shared = False  # whether the last span takes more such commands
    for command in commands:
        silent = bool(command) and command[0] in SILENT and "\n" not in "\0".join(command)
        if shared and silent:
            spans[-1].append(command)
        else:
            spans.append([command])
            shared = silent
    return spans


def framed_blocks(span: list[str]) -> tuple[list[tuple[bool, list[str]]], list[str]]:
    """The blocks of a span read by their framing (for commands that run further
    commands, whose output is tmux's own): (failed, lines) each, and the lines outside
    blocks (notifications)."""
    blocks: list[tuple[bool, list[str]]] = []
    outside: list[str] = []
    framing: str | None = None
    lines: list[str] = []
    for line in span:
        if framing is None:
            if line.startswith("%begin "):
                framing, lines = line.removeprefix("%begin "), []
            else:
                outside.append(line)
        elif line in (f"%end {framing}", f"%error {framing}"):
            if not framing.endswith(FOREIGN):
                blocks.append((line.startswith("%error "), lines))
            framing = None
        else:
            lines.append(line)
    return blocks, outside


def is_foreign_begin(line: str) -> bool:
    """Whether ``line`` begins a block that is not from this client's input (see the
    module)."""
    return line.startswith("%begin ") and line.endswith(FOREIGN)


def one_block(span: list[str]) -> tuple[bool, list[str], list[str]] | None:
    """A one-command span: (failed, its output, the notifications after it); None when
    it has no end (tmux out of step)."""
    framing = span[0].removeprefix("%begin ")
    ends = (f"%end {framing}", f"%error {framing}")
    for index in range(len(span) - 1, 0, -1):
        if span[index] in ends:
            return span[index].startswith("%error "), span[1:index], span[index + 1 :]
    return None


class FrameReader:
    """The answers a connection waits for, fed its output one line at a time.

    ``notification`` gets every line outside blocks; ``block`` a block that is no
    caller's (the attach's own answer first); ``broken`` the reason when tmux's
    output cannot be read any further.
    """

    def __init__(
        self,
        *,
        notification: Callable[[str], None],
        block: Callable[[bool, list[str]], None],
        broken: Callable[[str], None],
    ) -> None:
        self.answers: deque[Answer] = deque()
        self._notification = notification
        self._block_done = block
        self._broken = broken
        self._sentinel_end = False  # the next line is the %end of a sentinel's block
        self._block: str | None = None  # a block outside any answer: TIME NUM FLAGS
        self._block_lines: list[str] = []

    def feed(self, line: str) -> None:
        if self._sentinel_end:
            self._sentinel_end = False
            if line.startswith("%end "):
                return
        if self._block is not None:  # a block that is no caller's, read to its end
            if line in (f"%end {self._block}", f"%error {self._block}"):
                self._block = None
                self._block_done(line.startswith("%error "), self._block_lines)
            else:
                self._block_lines.append(line)
        elif self.answers and (self.answers[0].buffered or not is_foreign_begin(line)):
            self._answer_line(self.answers[0], line)
        elif line.startswith("%begin "):
            self._block, self._block_lines = line.removeprefix("%begin "), []
        elif line.startswith("%"):
            self._notification(line)

    def _answer_line(self, answer: Answer, line: str) -> None:
        if line in (answer.sentinels[answer.span], answer.sentinels[-1]):
            # the sentinel's answer: its %begin was the line before, its %end is next
            if answer.buffered:
                answer.buffered.pop()
            self._sentinel_end = True
            self._end_span(answer)
            answer.span += 1
            if line == answer.sentinels[-1]:
                self._complete(answer)
        elif answer.buffered or line.startswith("%begin "):
            answer.buffered.append(line)  # the span's genuine %begin, then whatever follows
        elif line.startswith("%"):
            self._notification(line)  # before its command's first block: tmux's own

    def _end_span(self, answer: Answer) -> None:
        """One command's span is complete: take its output, or its error."""
        span, answer.buffered = answer.buffered, []
        if not span:
            return
        if answer.runs_commands[answer.span]:
            blocks, after = framed_blocks(span)
        else:
            read = one_block(span)
            if read is None:
                self._broken("tmux answered a command without ending its block")
                return
            failed, lines, after = read
            blocks = [(failed, lines)]
        for failed, lines in blocks:
            if not failed:
                answer.lines.extend(lines)
            elif answer.error is None:
                answer.error = lines
        for line in framed_blocks(after)[1]:  # a foreign block there is nobody's
            self._notification(line)

    def _complete(self, answer: Answer) -> None:
        if not self.answers or self.answers[0] is not answer:
            return  # the connection failed meanwhile: the caller has its error
        self.answers.popleft()
        if answer.future.done():  # its caller was cancelled or timed out
            return
        if answer.error is not None:
            answer.future.set_exception(SchemuxError("\n".join(answer.error)))
        else:
            answer.future.set_result(answer.lines)
