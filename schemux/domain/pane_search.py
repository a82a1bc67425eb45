"""search_panes: the panes whose text matches a pattern, a page of them at a time
(libtmux-mcp's search_panes, its ``SearchPanesResult``).

Each pane of the server (or of one session) is read with ``capture-pane -J`` (a line
wrapped on screen is one line, so a match may cross the wrap), its visible screen or the
rows ``content_start`` and ``content_end`` name, each pane once: a pane whose window is
in several sessions is read under the first. Nothing of the pattern reaches tmux. The
pattern is literal text unless ``regex``, held to Python's syntax, and matched by the
``regex`` module in a worker thread within ``MATCH_SECONDS`` for the whole search
(``schemux.domain.text_wait``'s rule): one that backtracks catastrophically is refused,
and never stalls the server's other calls. The matching panes are ordered by pane id and
paged by ``offset`` and ``limit``; each keeps its last ``max_matched_lines_per_pane``
matching lines.
"""

from __future__ import annotations

import asyncio
import re
import time
from dataclasses import dataclass

import regex as _regex

from schemux.domain.text_wait import SlowPattern, first_match
from schemux.domain.tmux_objects import Objects, PaneFacts
from schemux.errors import SchemuxError, TmuxCommandError, preview
from schemux.tmux.format import readable
from schemux.tmux.server import TmuxServer

MATCH_SECONDS = 2.0
MAX_PATTERN_CHARACTERS = 1_000


@dataclass(frozen=True)
class SearchRequest:
    pattern: _regex.Pattern[str]
    session_id: str | None
    content_start: int | None
    content_end: int | None
    max_matched_lines_per_pane: int
    limit: int | None
    offset: int


@dataclass(frozen=True)
class PaneMatch:
    pane_id: str
    pane_left: int | None
    pane_top: int | None
    pane_right: int | None
    pane_bottom: int | None
    pane_at_left: bool
    pane_at_right: bool
    pane_at_top: bool
    pane_at_bottom: bool
    pane_tty: str
    pane_current_command: str
    pane_current_path: str
    window_id: str
    window_name: str | None
    session_id: str
    session_name: str | None
    matched_lines: list[str]
    is_caller: bool | None


@dataclass(frozen=True)
class SearchPage:
    matches: list[PaneMatch]
    truncated: bool
    truncated_panes: list[str]
    total_panes_matched: int
    offset: int
    limit: int | None


def compiled(pattern: str, *, regex: bool, match_case: bool) -> _regex.Pattern[str]:
    """``pattern`` as searched (literal text unless ``regex``); SchemuxError naming it
    when it is too long or no valid expression."""
    if len(pattern) > MAX_PATTERN_CHARACTERS:
        raise SchemuxError(
            f"pattern is {len(pattern)} characters long: at most {MAX_PATTERN_CHARACTERS} "
            "are taken",
            suggestion="search for a shorter, distinctive part of the text",
        )
    source = pattern if regex else re.escape(pattern)
    try:
        if regex:
            re.compile(source)  # Python's syntax, and its messages
        return _regex.compile(source, 0 if match_case else _regex.IGNORECASE)
    except (re.error, _regex.error) as error:
        raise SchemuxError(
            f"pattern {preview(pattern)} is not a valid regular expression: {error}",
            suggestion="fix the expression, or pass regex=false to search for literal text",
        ) from None


async def search(server: TmuxServer, objects: Objects, request: SearchRequest) -> SearchPage:
    """The page of ``objects``' panes that ``request`` asks for (see the module)."""
    panes: dict[str, PaneFacts] = {}
    for pane in objects.panes:
        if request.session_id in (None, pane.session_id):
            panes.setdefault(pane.pane_id, pane)
    texts = await asyncio.gather(*(_text(server, pane_id, request) for pane_id in panes))
    read = {pane_id: lines for pane_id, lines in zip(panes, texts, strict=True) if lines}
    until = time.monotonic() + MATCH_SECONDS
    try:
        hits = await asyncio.to_thread(_hits, request.pattern, read, until)
    except SlowPattern:
        raise SchemuxError(
            f"pattern {preview(request.pattern.pattern)} took more than {MATCH_SECONDS:g} s to "
            "match the panes' text: the expression backtracks catastrophically",
            suggestion="simplify it (no nested or overlapping repetition such as (a|aa)+), "
            "or pass regex=false to search for literal text",
        ) from None
    names = {(w.session_id, w.window_id): w for w in objects.windows}
    keep = request.max_matched_lines_per_pane
    matches = []
    for pane_id in sorted(hits, key=lambda pane_id: int(pane_id.lstrip("%"))):
        pane = panes[pane_id]
        window = names.get((pane.session_id, pane.window_id))
        matches.append(
            PaneMatch(
                pane_id=pane_id,
                pane_left=pane.pane_left,
                pane_top=pane.pane_top,
                pane_right=pane.pane_right,
                pane_bottom=pane.pane_bottom,
                pane_at_left=pane.pane_at_left,
                pane_at_right=pane.pane_at_right,
                pane_at_top=pane.pane_at_top,
                pane_at_bottom=pane.pane_at_bottom,
                pane_tty=pane.pane_tty,
                pane_current_command=pane.pane_current_command,
                pane_current_path=pane.pane_current_path,
                window_id=pane.window_id,
                window_name=None if window is None else window.window_name,
                session_id=pane.session_id,
                session_name=None if window is None else window.session_name,
                matched_lines=hits[pane_id][-keep:] if keep else [],
                is_caller=pane.is_caller,
            )
        )
    lines_cut = any(len(lines) > keep for lines in hits.values())
    start = request.offset
    end = None if request.limit is None else start + request.limit
    page = matches[start:end]
    skipped = [match.pane_id for match in matches[start + len(page) :]]
    return SearchPage(
        matches=page,
        truncated=lines_cut or bool(skipped),
        truncated_panes=skipped,
        total_panes_matched=len(matches),
        offset=request.offset,
        limit=request.limit,
    )


async def _text(server: TmuxServer, pane_id: str, request: SearchRequest) -> list[str]:
    """The lines of ``pane_id`` the search reads; none of a pane closed meanwhile."""
    rows: tuple[str, ...] = ()
    if request.content_start is not None:
        rows += ("-S", str(request.content_start))
    if request.content_end is not None:
        rows += ("-E", str(request.content_end))
    try:
        lines = await server.run("capture-pane", "-p", "-J", "-t", pane_id, *rows)
    except TmuxCommandError as error:
        if error.target_gone:
            return []
        raise
    return [readable(line) for line in lines]


def _hits(
    pattern: _regex.Pattern[str], read: dict[str, list[str]], until: float
) -> dict[str, list[str]]:
    """Each pane's lines that ``pattern`` matches, for the panes with any."""
    hits = {}
    for pane_id, lines in read.items():
        found = first_match([pattern], lines, until=until)
        if found is not None:
            hits[pane_id] = found[1]
    return hits
