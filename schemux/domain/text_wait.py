"""wait_for_text's wait: for new text in a pane, with libtmux-mcp 0.1.0a22's rules.

Only rows written after the call began count. At entry the wait notes the pane's
absolute cursor row (history size plus cursor row) and the rows from the cursor row down,
by content; later, every row from that absolute row down whose text was not among those
is new. So neither scrollback nor paint left below the cursor ever matches, while text
written onto the cursor's own row (a command's first line, after a prompt) does. When
the history reaches its limit, tmux cuts its oldest tenth and every row moves up by as
much: the wait follows its first row there (``schemux.text.history_cuts``), each check
reading the pane's history with its rows; only a history cleared (or a pane resized) so
that the row cannot be told is an error. Whether
a pattern already matched somewhere on the visible screen at entry is reported as
``matched_at_entry``. While the pane shows the alternate screen (a pager, an editor, a
full-screen program repainting everything) nothing is matched, and a wait that ends so is
reported as ``alternate_screen`` rather than ``timeout``. ``stop`` wins a tie with
``patterns``. The wait wakes on the pane's own output (``schemux.domain.pane_watch``).

A caller's regular expression runs on the pane's rows in a worker thread, never on the
event loop (the ``regex`` module, which lets go of the GIL while it matches and takes a
time limit; an expression is first checked by ``re``, so the syntax accepted is Python's
own): an expression that backtracks catastrophically cannot stall the server's other
calls, and one that takes more than ``MATCH_SECONDS`` over a reading ends the wait with
an error naming it, rather than burning a CPU until its timeout.

Compiling is no cheaper than matching (a 1 MB literal takes seconds, an expression of
100,000 alternations longer), so the patterns are compiled in a worker thread too, within
the call's budget, and their size is bounded first (``check_pattern_sizes``), on the
loop, where counting is cheap: the longest compile a call can ask for is a fraction of a
second, and the thread it runs in never outlives that by much. An expression is compiled
by ``re`` only to hold it to Python's syntax; a literal (``regex=false``) is escaped text
that any engine takes, so it is compiled once, by ``regex``.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

import regex as _regex

from schemux.domain.pane_watch import PaneState, PaneWatch, watch_pane
from schemux.errors import SchemuxError, preview
from schemux.panes.targets import PaneInfo
from schemux.text.history_cuts import FollowedRow, HistoryReading, HistoryUnknown, captured_rows
from schemux.tmux.server import TmuxServer

TAIL_MAX_LINES = 20
TAIL_MAX_BYTES = 2_000
# the longest the patterns of one argument may take over one reading's rows
MATCH_SECONDS = 1.0
# bounds on what one call may ask to compile (see check_pattern_sizes)
MAX_PATTERNS = 100  # in patterns, and in stop
MAX_PATTERN_CHARACTERS = 10_000  # in one pattern: a wide pane's longest rows, and more
MAX_ALL_PATTERN_CHARACTERS = 20_000  # in patterns and stop together
# reads of one check whose rows began above the first row that counts (tmux cut history
# while the read was on its way), before the rows are left to the next check
READ_TRIES = 3
# patterns this short compile in well under a millisecond: on the loop, without waiting
# for a worker thread (the pool is shared, and busy under load)
INLINE_PATTERN_CHARACTERS = 256

Outcome = Literal["matched", "any_output", "stopped", "alternate_screen", "timeout"]


def check_pattern_sizes(fields: Mapping[str, Sequence[str] | None]) -> None:
    """Refuse, naming the field, more patterns or longer ones than a call may compile
    (``fields`` maps each argument's name to its patterns)."""
    total = 0
    for field_name, values in fields.items():
        values = values or ()
        if len(values) > MAX_PATTERNS:
            raise SchemuxError(
                f"{field_name} has {len(values)} patterns: at most {MAX_PATTERNS} are taken",
                suggestion="pass fewer patterns, or join alternatives into one expression",
            )
        for index, value in enumerate(values):
            if len(value) > MAX_PATTERN_CHARACTERS:
                raise SchemuxError(
                    f"{field_name}[{index}] is {len(value)} characters long: at most "
                    f"{MAX_PATTERN_CHARACTERS} are taken",
                    suggestion="match a shorter, distinctive part of the text",
                )
            total += len(value)
    if total > MAX_ALL_PATTERN_CHARACTERS:
        raise SchemuxError(
            f"{' and '.join(fields)} hold {total} characters together: at most "
            f"{MAX_ALL_PATTERN_CHARACTERS} are taken",
            suggestion="pass fewer or shorter patterns",
        )


def compile_patterns(
    values: Sequence[str] | None, *, field_name: str, regex: bool, match_case: bool
) -> list[_regex.Pattern[str]]:
    """The patterns of one argument, each checked: literal text unless ``regex``."""
    compiled = []
    for index, value in enumerate(values or ()):
        if not value:
            raise SchemuxError(
                f"{field_name}[{index}] is empty", suggestion="pass non-empty text to match"
            )
        source = value if regex else re.escape(value)
        try:
            if regex:
                re.compile(source)  # Python's syntax, and its messages
            compiled.append(_regex.compile(source, 0 if match_case else _regex.IGNORECASE))
        except (re.error, _regex.error) as error:
            raise SchemuxError(
                f"{field_name}[{index}] {preview(value)} is not a valid regular expression: "
                f"{error}",
                suggestion="fix the expression, or pass regex=false to match literal text",
            ) from None
    return compiled


async def compile_off_loop(
    fields: Mapping[str, Sequence[str] | None], *, regex: bool, match_case: bool, deadline: float
) -> list[list[_regex.Pattern[str]]]:
    """Each field's patterns (``fields`` maps its name to them), sizes checked on the loop
    and compiled in a worker thread by ``deadline`` (``time.monotonic``); short ones
    (``INLINE_PATTERN_CHARACTERS`` in all) on the loop."""
    check_pattern_sizes(fields)

    def compile_all() -> list[list[_regex.Pattern[str]]]:
        return [
            compile_patterns(values, field_name=name, regex=regex, match_case=match_case)
            for name, values in fields.items()
        ]

    if sum(len(value) for values in fields.values() for value in values or ()) <= (
        INLINE_PATTERN_CHARACTERS
    ):
        return compile_all()
    try:
        return await asyncio.wait_for(
            asyncio.to_thread(compile_all), timeout=max(0.0, deadline - time.monotonic())
        )
    except TimeoutError:
        raise SchemuxError(
            f"compiling {' and '.join(fields)} took longer than the call's timeout",
            suggestion="pass a longer timeout, or fewer or simpler patterns",
        ) from None


class SlowPattern(Exception):
    """A pattern ran past its time limit (``first_match``'s ``until``)."""

    def __init__(self, index: int) -> None:
        super().__init__(index)
        self.index = index


def first_match(
    patterns: Sequence[_regex.Pattern[str]], lines: Sequence[str], *, until: float | None = None
) -> tuple[int, list[str]] | None:
    """The first pattern (in order) that matches a line, with every line it matches;
    past ``until`` (a ``time.monotonic`` reading), ``SlowPattern`` names the pattern."""
    for index, pattern in enumerate(patterns):
        hits = []
        for line in lines:
            limit = None if until is None else max(0.001, until - time.monotonic())
            try:
                if pattern.search(line, timeout=limit):
                    hits.append(line)
            except TimeoutError:
                raise SlowPattern(index) from None
        if hits:
            return index, hits
    return None


async def _first_match_off_loop(
    field_name: str, patterns: Sequence[_regex.Pattern[str]], lines: Sequence[str]
) -> tuple[int, list[str]] | None:
    """``first_match`` in a worker thread, within ``MATCH_SECONDS``; a pattern that takes
    longer is refused, naming it."""
    if not patterns or not lines:
        return None
    until = time.monotonic() + MATCH_SECONDS
    try:
        return await asyncio.to_thread(first_match, patterns, lines, until=until)
    except SlowPattern as slow:
        raise SchemuxError(
            f"{field_name}[{slow.index}] {preview(patterns[slow.index].pattern)} took more than "
            f"{MATCH_SECONDS:g} s to match the pane's rows: the expression backtracks "
            "catastrophically",
            suggestion="simplify it (no nested or overlapping repetition such as (a|aa)+), "
            "or pass regex=false to match literal text",
        ) from None


def keep_tail(lines: Sequence[str], *, max_lines: int, max_bytes: int) -> list[str]:
    """The last lines that fit ``max_lines`` and ``max_bytes`` (UTF-8, a newline each);
    a single line longer than ``max_bytes`` keeps its end."""
    kept = list(lines[-max_lines:]) if max_lines > 0 else []
    size = sum(len(line.encode("utf-8", "surrogateescape")) + 1 for line in kept)
    while len(kept) > 1 and size > max_bytes:
        size -= len(kept.pop(0).encode("utf-8", "surrogateescape")) + 1
    if kept and size > max_bytes:
        encoded = kept[0].encode("utf-8", "surrogateescape")
        kept[0] = encoded[-max_bytes:].decode("utf-8", "ignore") if max_bytes > 0 else ""
    return kept


@dataclass
class TextWaitResult:
    outcome: Outcome = "timeout"
    matched_index: int | None = None
    matched_lines: list[str] = field(default_factory=list)
    tail: list[str] = field(default_factory=list)
    saw_new_output: bool = False
    matched_at_entry: bool = False
    alternate_screen: bool = False
    elapsed: float = 0.0

    @property
    def found(self) -> bool:
        return self.outcome in ("matched", "any_output")


async def wait_for_new_text(
    server: TmuxServer,
    pane: PaneInfo,
    *,
    patterns: Sequence[_regex.Pattern[str]],
    stop: Sequence[_regex.Pattern[str]],
    started: float,
    deadline: float,
    interval: float,
) -> TextWaitResult:
    """Wait until a pattern (any new text, without patterns) or a stop pattern appears
    on a row written after entry, or until ``deadline`` (``time.monotonic``); raises
    SchemuxError when the pane dies, is respawned or closed, or its history is cleared
    (or the pane resized) so that the rows written after entry cannot be told."""
    if pane.dead:
        raise SchemuxError(
            f"pane {pane.pane_id} is dead: nothing new can appear in it",
            suggestion="read what it shows with capture_pane",
        )
    result = TextWaitResult()
    async with watch_pane(server, pane) as watch:
        # two round trips: the state, then the link (if any) with the entry's rows
        entry = await watch.state()
        _check_lifecycle(watch, entry, entry)
        begun = await watch.begin(entry, (entry.cursor_y, 0))
        rows, screen = begun.captures
        # the first row that counts, followed as tmux cuts history above it
        first = FollowedRow(
            entry.history_size + entry.cursor_y,
            replace(
                begun.history,
                history_size=entry.history_size,
                height=entry.height,
                last_rows=(),
            ),
        )
        _follow(watch, first, begun.history, [], 0)
        entry_rows = frozenset(rows)
        stale_at_entry = await _first_match_off_loop("patterns", patterns, screen) is not None
        result.alternate_screen = entry.alternate_on
        # nothing is new yet: what the pane writes from here on wakes the first wait
        while time.monotonic() < deadline:
            await watch.wait(deadline, interval)
            state = await watch.check()
            _check_lifecycle(watch, entry, state)
            alternate_on, rows = await _rows_since(watch, first, state)
            result.alternate_screen |= state.alternate_on or alternate_on or watch.saw_alternate
            new_lines = [line for line in rows if line not in entry_rows]
            result.saw_new_output |= bool(new_lines)
            if not alternate_on and await _decide(result, patterns, stop, new_lines):
                break
    if result.outcome == "timeout" and result.alternate_screen:
        result.outcome = "alternate_screen"
    result.matched_at_entry = stale_at_entry and not result.found
    result.tail = keep_tail(rows, max_lines=TAIL_MAX_LINES, max_bytes=TAIL_MAX_BYTES)
    result.matched_lines = keep_tail(
        result.matched_lines, max_lines=TAIL_MAX_LINES, max_bytes=TAIL_MAX_BYTES
    )
    result.elapsed = round(time.monotonic() - started, 3)
    return result


async def _decide(
    result: TextWaitResult,
    patterns: Sequence[_regex.Pattern[str]],
    stop: Sequence[_regex.Pattern[str]],
    new_lines: list[str],
) -> bool:
    """Whether the new lines end the wait; if so, ``result`` says how."""
    hit = await _first_match_off_loop("stop", stop, new_lines)
    if hit is not None:
        result.outcome = "stopped"
    elif (hit := await _first_match_off_loop("patterns", patterns, new_lines)) is not None:
        result.outcome = "matched"
    elif not patterns and new_lines:
        result.outcome, result.matched_lines = "any_output", new_lines
        return True
    else:
        return False
    result.matched_index, result.matched_lines = hit
    return True


def _check_lifecycle(watch: PaneWatch, entry: PaneState, state: PaneState) -> None:
    pane_id = watch.pane_id
    if state.dead:
        raise SchemuxError(
            f"pane {pane_id} died while waiting",
            suggestion="read what it shows with capture_pane",
        )
    if state.pid != entry.pid:
        raise SchemuxError(
            f"pane {pane_id} was respawned while waiting (pid {entry.pid} -> {state.pid}); "
            "its rows no longer follow the ones at entry",
            suggestion="call wait_for_text again",
        )
    if watch.linked and not state.in_other_sessions:
        raise SchemuxError(f"the session of pane {pane_id} was closed while waiting")


async def _rows_since(
    watch: PaneWatch, first: FollowedRow, state: PaneState
) -> tuple[bool, list[str]]:
    """Whether the pane shows the alternate screen, and its rows from ``first`` down
    (wrapped lines joined), read in one command line with the pane's history, which
    says where ``first`` is now (``FollowedRow.follow``). The rows are asked for from
    where ``first`` is if tmux cut the fewest rows it can have since the last reading;
    when it cut more (the rows asked for began above ``first``) or fewer (they began
    below it), they are read again from where it is, at most ``READ_TRIES`` times in
    all, and then those that began below it are taken (the rest are read by the next
    check)."""
    history_size, height = state.history_size, state.height
    alternate_on, whole = state.alternate_on, False
    late: list[str] = []  # rows read from below ``first``: the newest, not all
    for _ in range(READ_TRIES):
        number, wanted = first.guess(history_size, height)
        captures: list[tuple[str, ...]] = []
        told: tuple[int | None, int | None] | None = None  # -S and -E of the rows that tell
        if whole:  # every row: wherever the rows that tell are
            told = (None, None)
            captures.append(("-S", "-", "-E", "-"))
        elif wanted is not None:
            told = (wanted.start - history_size, wanted.stop - 1 - history_size)
            captures.append(("-S", str(told[0]), "-E", str(told[1])))
        start = number - history_size
        asked = start < height  # else the row is below the screen: nothing to read yet
        if asked:
            captures.append(("-J", "-S", str(start)))
        read = await watch.read(captures)
        now, alternate_on = read.history, read.alternate_on
        if told is None:
            followed = _follow(watch, first, now, [], 0)
        else:
            told_from = captured_rows(*told, now.history_size, now.height).start
            followed = _follow(watch, first, now, read.captures[0], told_from)
        history_size, height, whole = now.history_size, now.height, not followed
        if not followed:
            continue
        if first.number - now.history_size >= now.height:  # below the screen: none yet
            return alternate_on, []
        if asked:
            read_from = captured_rows(start, None, now.history_size, now.height).start
            if read_from == first.number:
                return alternate_on, read.captures[-1]
            if read_from > first.number:
                late = read.captures[-1]
    return alternate_on, late


def _follow(
    watch: PaneWatch, first: FollowedRow, reading: HistoryReading, rows: list[str], rows_from: int
) -> bool:
    """``first.follow``, its HistoryUnknown said as the wait's error."""
    try:
        return first.follow(reading, rows, rows_from)
    except HistoryUnknown as unknown:
        what = "cleared" if unknown.cause == "cleared" else "resized, its rows rewrapped,"
        raise SchemuxError(
            f"pane {watch.pane_id}'s history was {what} while waiting (history_size "
            f"{unknown.before.history_size} -> {unknown.after.history_size}), so new rows "
            "can no longer be told from old ones",
            suggestion="call wait_for_text again, or use run_command for a command you author",
        ) from None
