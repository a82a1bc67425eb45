"""wait_for_text's patterns and tails (schemux.domain.text_wait): literal or regular
expression, case, the first pattern to match, time and size limits, compiling off the
event loop where it costs."""

from __future__ import annotations

import asyncio
import re
import time
from typing import Any

import pytest

from schemux.domain.text_wait import (
    SlowPattern,
    check_pattern_sizes,
    compile_off_loop,
    compile_patterns,
    first_match,
    keep_tail,
)
from schemux.errors import SchemuxError


def test_literal_patterns_take_regex_characters_as_text() -> None:
    (pattern,) = compile_patterns(["a.b(["], field_name="patterns", regex=False, match_case=True)
    assert pattern.search("x a.b([ y")
    assert not pattern.search("aXb([")


def test_case_is_ignored_unless_asked() -> None:
    (loose,) = compile_patterns(["Ready"], field_name="patterns", regex=False, match_case=False)
    (strict,) = compile_patterns(["Ready"], field_name="patterns", regex=False, match_case=True)
    assert loose.search("READY")
    assert not strict.search("READY")


@pytest.mark.parametrize(
    ("values", "regex", "message"),
    [
        (["ok", ""], False, "stop[1] is empty"),
        (["(unclosed"], True, "stop[0] '(unclosed' is not a valid regular expression"),
        (["a", "[z-a]"], True, "stop[1] '[z-a]' is not a valid regular expression"),
    ],
)
def test_bad_patterns_are_refused_naming_them(values: list[str], regex: bool, message: str) -> None:
    with pytest.raises(SchemuxError) as refused:
        compile_patterns(values, field_name="stop", regex=regex, match_case=False)
    assert message in refused.value.message


def test_no_patterns_compile_to_none() -> None:
    assert compile_patterns(None, field_name="patterns", regex=True, match_case=False) == []


def test_the_first_pattern_in_order_wins_with_all_its_lines() -> None:
    patterns = compile_patterns(["b", "a"], field_name="patterns", regex=False, match_case=True)
    assert first_match(patterns, ["a1", "b1", "b2"]) == (0, ["b1", "b2"])
    assert first_match(patterns, ["a1"]) == (1, ["a1"])
    assert first_match(patterns, ["c"]) is None


def test_a_pattern_past_its_time_limit_is_named() -> None:
    patterns = compile_patterns(
        ["never", "(a|aa)+$"], field_name="patterns", regex=True, match_case=True
    )
    started = time.monotonic()
    with pytest.raises(SlowPattern) as slow:
        first_match(patterns, ["a" * 60 + "b"], until=started + 0.2)
    assert slow.value.index == 1
    # SlowPattern comes only from the regex module's timeout: the search (2**60 steps,
    # years) was stopped by the limit. The bound only says not long after it: how soon
    # is the regex module's and the machine's (over 2 s for this 0.2 s under load)
    assert time.monotonic() - started < 30


def test_python_syntax_is_what_is_accepted() -> None:
    # the regex module takes \p{L} (a Unicode property); Python's re, which the contract
    # names, does not
    with pytest.raises(SchemuxError, match="not a valid regular expression"):
        compile_patterns([r"\p{L}"], field_name="patterns", regex=True, match_case=True)


@pytest.mark.parametrize(
    ("lines", "max_lines", "max_bytes", "kept"),
    [
        (["a", "b", "c"], 2, 100, ["b", "c"]),
        (["a", "b", "c"], 5, 100, ["a", "b", "c"]),
        (["aaaa", "bbbb", "cc"], 10, 8, ["bbbb", "cc"]),  # each line counts its newline
        (["x" * 10], 10, 4, ["xxxx"]),  # one line too long keeps its end
        (["ab", "é" * 3], 10, 5, ["éé"]),  # never half a character
        ([], 20, 2000, []),
    ],
)
def test_tails_keep_the_end(
    lines: list[str], max_lines: int, max_bytes: int, kept: list[str]
) -> None:
    assert keep_tail(lines, max_lines=max_lines, max_bytes=max_bytes) == kept


def test_a_literal_is_compiled_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Escaped text is valid in every engine: only an expression is held to ``re``'s
    syntax, so a literal is not compiled twice."""
    checked: list[str] = []
    monkeypatch.setattr(re, "compile", lambda source, *rest: checked.append(source))
    compile_patterns(["a.b"], field_name="patterns", regex=False, match_case=True)
    compile_patterns(["c.d"], field_name="patterns", regex=True, match_case=True)
    assert checked == ["c.d"]


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"patterns": ["x"] * 101, "stop": None}, "patterns has 101 patterns: at most 100"),
        ({"patterns": None, "stop": ["ok", "y" * 10_001]}, "stop[1] is 10001 characters long"),
        (
            {"patterns": ["p" * 10_000, "q" * 5_000], "stop": ["s" * 5_001]},
            "patterns and stop hold 20001 characters together",
        ),
    ],
)
def test_pattern_sizes_are_bounded_naming_the_field(
    fields: dict[str, list[str] | None], message: str
) -> None:
    with pytest.raises(SchemuxError) as refused:
        check_pattern_sizes(fields)
    assert message in refused.value.message
    check_pattern_sizes({"patterns": ["x"] * 100, "stop": ["y" * 10_000]})  # at the bounds


@pytest.mark.anyio
async def test_short_patterns_compile_on_the_loop_and_long_ones_off_it(
    anyio_backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker thread only where compiling costs: none for a wait without patterns or
    with a few short ones (the shared pool can be busy under load)."""
    threads: list[object] = []
    real_to_thread = asyncio.to_thread

    async def counted(function: Any, *args: Any) -> Any:
        threads.append(function)
        return await real_to_thread(function, *args)

    monkeypatch.setattr(asyncio, "to_thread", counted)
    deadline = time.monotonic() + 5
    short = {"patterns": ["ready", "done"], "stop": None}
    assert (
        len((await compile_off_loop(short, regex=False, match_case=False, deadline=deadline))[0])
        == 2
    )
    assert await compile_off_loop(
        {"patterns": None, "stop": None}, regex=True, match_case=False, deadline=deadline
    ) == [[], []]
    assert threads == []
    await compile_off_loop(
        {"patterns": ["x" * 300], "stop": None}, regex=False, match_case=False, deadline=deadline
    )
    assert len(threads) == 1
