"""How the soak (bench/soak.py) judges a call: exact, a clear error near a fault, an
unprovoked error, or wrong; and what it takes as each call's exact result. Pure: no tmux."""

from __future__ import annotations

import subprocess
from typing import Any

import pytest

from bench.soak import (
    CLEAR,
    EXACT,
    UNPROVOKED,
    WRONG,
    Miss,
    Window,
    check_command,
    check_fan_out,
    check_program,
    judge,
    near,
    program_text,
    shortened,
    token_lines,
    unclear,
)


@pytest.mark.parametrize("token", ["sk0x1x0a0b0c", "sk7x123456xffffff", ""])
def test_the_checksum_is_cksums(token: str) -> None:
    printed = subprocess.run(
        ["cksum"], input=f"{token}\n".encode(), capture_output=True, check=True
    ).stdout.decode()
    assert token_lines(token) == [token, printed.strip()]


def test_the_program_text_is_seqs() -> None:
    printed = subprocess.run(
        ["seq", "-f", "tok-%05g", "1", "400"], capture_output=True, check=True, text=True
    ).stdout
    assert program_text("tok") == printed


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "an error with no text"),
        ("   \n", "an error with no text"),
        ('Traceback (most recent call last):\n  File "x.py", line 3', "a traceback"),
        ('oops File "/a/b.py", line 12, in f', "a traceback"),
        ("KeyError: 'pane'", "a bare exception"),
        ("RuntimeError()", "a bare exception"),
        ("asyncio.exceptions.CancelledError", "a bare exception"),
        ("failed", "too short to say what happened"),
        ("no pane matches pane_id='%3' on socket name 's'", None),
        ("tmux did not answer list-panes within 10 s; the control connection was restarted", None),
    ],
)
def test_an_error_is_clear_when_it_says_what_happened(text: str, problem: str | None) -> None:
    assert unclear(text) == problem


CLEAR_TEXT = "the tmux server on socket name 's' exited"


@pytest.mark.parametrize(
    ("miss", "error", "near_fault", "replaced", "outcome"),
    [
        (None, None, False, False, EXACT),
        (None, None, True, False, EXACT),
        (None, CLEAR_TEXT, True, False, CLEAR),
        (None, CLEAR_TEXT, False, False, UNPROVOKED),
        (None, "", True, False, WRONG),  # an error that says nothing, even in a fault
        (None, "Traceback (most recent call last):", True, False, WRONG),
        (Miss("timed out after 60 s", declared=True), None, True, False, CLEAR),
        (Miss("timed out after 60 s", declared=True), None, False, False, UNPROVOKED),
        # a result that claims success and is not the exact one is wrong, fault or not
        (Miss("['x'], not ['y']", declared=False), None, True, False, WRONG),
        (Miss("['x'], not ['y']", declared=False), None, False, False, WRONG),
        # unless the pane it named was given to another since the call began
        (Miss("['x'], not ['y']", declared=False), None, True, True, CLEAR),
    ],
)
def test_judge(
    miss: Miss | None, error: str | None, near_fault: bool, replaced: bool, outcome: str
) -> None:
    assert judge(miss, error, near_fault, replaced)[0] == outcome


def test_a_wrong_result_says_how_it_differs() -> None:
    outcome, reason = judge(Miss("['x'], not ['y']", declared=False), None, True)
    assert (outcome, reason) == (WRONG, "not the exact result: ['x'], not ['y']")


@pytest.mark.parametrize(
    ("windows", "start", "end", "expected"),
    [
        ([], 0.0, 10.0, False),
        ([Window("k", 5.0, 6.0)], 0.0, 10.0, True),  # the fault during the call
        ([Window("k", 5.0, 6.0)], 20.0, 30.0, True),  # within the grace after it
        ([Window("k", 5.0, 6.0)], 27.0, 30.0, False),  # after the grace
        ([Window("k", 5.0, 6.0)], 0.0, 4.0, False),  # before it began
        ([Window("k", 5.0, None)], 100.0, 101.0, True),  # one that still lasts
    ],
)
def test_near(windows: list[Window], start: float, end: float, expected: bool) -> None:
    assert near(windows, start, end, grace=20.0) is expected


def command(output: list[str], status: int | None, timed_out: bool = False) -> dict[str, Any]:
    return {"output": output, "exit_status": status, "timed_out": timed_out}


def test_check_command() -> None:
    lines = token_lines("tok")
    assert check_command(command(lines, 2), "tok", 2) is None
    assert check_command(command(lines, 0), "tok", 2) == Miss(
        f"({lines!r}, 0), not ({lines!r}, 2)", False
    )
    assert check_command(command(lines[:1], 2), "tok", 2) is not None
    assert check_command(command(["junk", *lines], 2), "tok", 2) is not None
    timed_out = check_command(command([], None, timed_out=True), "tok", 2)
    assert timed_out is not None
    assert timed_out.declared


def host(
    name: str, output: list[str], status: int | None, error: str | None = None
) -> dict[str, Any]:
    return {
        "host": name,
        "output": output,
        "exit_status": status,
        "error": error,
        "timed_out": False,
    }


def test_check_fan_out() -> None:
    hosts = ["a", "b"]
    exact = {"results": [host("a", ["tok"], 0), host("b", ["tok"], 0)]}
    assert check_fan_out(exact, "tok", hosts) is None
    one_error = {"results": [host("a", ["tok"], 0), host("b", [], None, "b: unreachable")]}
    miss = check_fan_out(one_error, "tok", hosts)
    assert miss is not None
    assert miss.declared
    assert "b: unreachable" in miss.text
    # a host's wrong answer beside another's error is wrong: the error does not excuse it
    mixed = {"results": [host("a", ["other"], 0), host("b", [], None, "gone")]}
    miss = check_fan_out(mixed, "tok", hosts)
    assert miss is not None
    assert not miss.declared
    missing = {"results": [host("a", ["tok"], 0)]}
    miss = check_fan_out(missing, "tok", hosts)
    assert miss is not None
    assert not miss.declared


def page(**fields: Any) -> dict[str, Any]:
    return {"ended": True, "outcome": "completed", "exitStatus": 0, "outputComplete": True,
            "lostEnd": False, **fields}  # fmt: skip


def test_check_program() -> None:
    expected = program_text("tok", 3)
    assert check_program(expected, expected, page()) is None
    # every byte returned must be the program's, in order, whatever the outcome
    swapped = expected.replace("00001", "00002", 1)
    miss = check_program(swapped, expected, page(outcome="gone", outputComplete=False))
    assert miss is not None
    assert not miss.declared
    assert "byte 8" in miss.text
    # complete but short: wrong
    miss = check_program(expected[:10], expected, page())
    assert miss is not None
    assert not miss.declared
    # a program a fault ended: what was returned is a prefix, and the result says why not all
    miss = check_program(expected[:10], expected, page(outcome="gone", outputComplete=False))
    assert miss is not None
    assert miss.declared
    miss = check_program(expected[:10], expected, page(outputComplete=False, lostEnd=True))
    assert miss is not None
    assert miss.declared
    miss = check_program(expected[:10], expected, None)  # a read failed before the end
    assert miss is not None
    assert miss.declared


def test_alike_errors_count_together() -> None:
    first = "no pane matches pane_id='%3' on socket name 'schemux-soak-12'\nSuggestion: x"
    second = "no pane matches pane_id='%17' on socket name 'schemux-soak-12'"
    assert shortened(first) == shortened(second)
