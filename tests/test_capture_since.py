"""capture_since against real tmux, through the in-memory MCP client: the visible rows and
a cursor, then only rows written or rewritten since (typed on the prompt row, scrolled
into history, none at all); the tail within max_lines and max_bytes; history cleared or
trimmed (lines_missed only when the cursor's rows are gone); a cursor that is unknown,
for another pane, or for a pane respawned or dead; hostile targets."""

from __future__ import annotations

import pytest
from mcp import Client

from schemux.domain.new_rows import tail_within
from tests.support import Pane, call, call_error, new_pane, screen, tmux, wait_for_shell, wait_until

pytestmark = pytest.mark.anyio

PROMPT = "$ "


def prompt_pane(socket_name: str, *, height: int = 10, history_limit: int | None = None) -> Pane:
    """A bash pane with the prompt ``$ `` (and a history limit of its own)."""
    pane = new_pane(socket_name, height=height)
    if history_limit is not None:  # a pane takes its limit when made: make one more
        tmux(socket_name, "set-option", "-t", pane.session_id, "history-limit", str(history_limit))
        new_id = tmux(
            socket_name, "split-window", "-t", pane.pane_id, "-P", "-F", "#{pane_id}",
            "bash --norc --noprofile",
        ).strip()  # fmt: skip
        tmux(socket_name, "kill-pane", "-t", pane.pane_id)
        tmux(socket_name, "resize-window", "-t", pane.window_id, "-y", str(height))
        pane = Pane(socket_name, new_id, pane.window_id, pane.session_id, pane.session_name)
        wait_for_shell(pane)
    tmux(socket_name, "send-keys", "-t", pane.pane_id, "-l", f"PS1='{PROMPT}'; clear")
    tmux(socket_name, "send-keys", "-t", pane.pane_id, "Enter")
    wait_until(lambda: rows(pane) == [PROMPT.rstrip()])
    return pane


def rows(pane: Pane) -> list[str]:
    """The pane's rows that hold anything."""
    return [row for row in screen(pane).split("\n") if row]


async def run(client: Client, pane: Pane, command: str, last: str) -> None:
    """Type ``command`` (typed keys, so the rows hold nothing else), until its ``last``
    line is shown above the next prompt."""
    await call(client, "send_keys", keys=command, pane_id=pane.pane_id)
    wait_until(lambda: rows(pane)[-2:] == [last, "$"])


async def test_the_screen_then_only_what_is_new(memory_client: Client, tmux_socket: str) -> None:
    pane = prompt_pane(tmux_socket)
    first = await call(memory_client, "capture_since", pane_id=pane.pane_id)
    assert first["lines"] == ["$"]
    assert first["pane_id"] == pane.pane_id
    assert first["lines_missed"] is False
    assert first["truncated"] is False

    unchanged = await call(memory_client, "capture_since", cursor=first["cursor"])
    assert unchanged["lines"] == []

    await call(memory_client, "send_keys", keys="abc", pane_id=pane.pane_id, enter=False)
    wait_until(lambda: rows(pane) == ["$ abc"])
    typed = await call(memory_client, "capture_since", cursor=unchanged["cursor"])
    assert typed["lines"] == ["$ abc"]  # the prompt row, rewritten
    await call(memory_client, "send_keys", keys="C-u", pane_id=pane.pane_id, enter=False)

    await run(memory_client, pane, "seq 1 25", "25")  # scrolls most of it into history
    ran = await call(memory_client, "capture_since", cursor=typed["cursor"])
    assert ran["lines"] == ["$ seq 1 25", *map(str, range(1, 26)), "$"]
    assert ran["lines_missed"] is False

    # a cursor can be used again (a retried read)
    again = await call(memory_client, "capture_since", cursor=typed["cursor"])
    assert again["lines"] == ran["lines"]


async def test_the_tail_is_kept_within_the_bounds(memory_client: Client, tmux_socket: str) -> None:
    pane = prompt_pane(tmux_socket)
    first = await call(memory_client, "capture_since", pane_id=pane.pane_id)
    await run(memory_client, pane, "seq 1 40", "40")
    by_lines = await call(memory_client, "capture_since", cursor=first["cursor"], max_lines=5)
    assert by_lines["lines"] == ["37", "38", "39", "40", "$"]
    assert by_lines["truncated"] is True
    assert by_lines["truncated_lines"] == 37  # the command's row and 1..36
    by_bytes = await call(memory_client, "capture_since", cursor=first["cursor"], max_bytes=6)
    assert by_bytes["lines"] == ["39", "40", "$"]
    assert by_bytes["truncated"] is True
    unbounded = await call(
        memory_client, "capture_since", cursor=first["cursor"], max_lines=None, max_bytes=None
    )
    assert len(unbounded["lines"]) == 42
    assert unbounded["truncated"] is False
    error = await call_error(memory_client, "capture_since", cursor=first["cursor"], max_lines=-1)
    assert "max_lines: -1 is less than the minimum of 0; give 0 or more" in error


def test_tail_within() -> None:
    assert tail_within(["a", "b", "c"], None, None) == (["a", "b", "c"], 0, 0)
    assert tail_within(["a", "b", "c"], 2, None) == (["b", "c"], 1, 1)
    assert tail_within(["aa", "bb", "cc"], None, 4) == (["bb", "cc"], 1, 2)
    assert tail_within(["abcdef"], None, 2) == (["ef"], 0, 4)
    assert tail_within(["é€"], None, 3) == (["€"], 0, 2)
    assert tail_within(["a"], 0, None) == ([], 1, 1)


async def test_history_cleared_misses_lines(memory_client: Client, tmux_socket: str) -> None:
    pane = prompt_pane(tmux_socket)
    await run(memory_client, pane, "seq 1 30", "30")
    first = await call(memory_client, "capture_since", pane_id=pane.pane_id)
    await run(memory_client, pane, "seq 31 35", "35")
    tmux(tmux_socket, "clear-history", "-t", pane.pane_id)
    await run(memory_client, pane, "echo after", "after")
    missed = await call(memory_client, "capture_since", cursor=first["cursor"])
    assert missed["lines_missed"] is True
    assert missed["lines"] == rows(pane)
    # the fresh cursor follows on from there
    await run(memory_client, pane, "echo next", "next")
    following = await call(memory_client, "capture_since", cursor=missed["cursor"])
    assert following["lines"] == ["$ echo next", "next", "$"]
    assert following["lines_missed"] is False


async def test_trimmed_history_keeps_the_rows_it_still_holds(
    memory_client: Client, tmux_socket: str
) -> None:
    pane = prompt_pane(tmux_socket, history_limit=100)
    await run(memory_client, pane, "seq 1 85", "85")
    first = await call(memory_client, "capture_since", pane_id=pane.pane_id)
    await run(memory_client, pane, "seq 1000 1040", "1040")  # past the limit: tmux trims a tenth
    trimmed = await call(memory_client, "capture_since", cursor=first["cursor"], max_lines=None)
    assert trimmed["lines_missed"] is False
    assert trimmed["lines"] == ["$ seq 1000 1040", *map(str, range(1000, 1041)), "$"]

    await run(memory_client, pane, "seq 2000 2300", "2300")  # far past: the cursor's rows are gone
    gone = await call(memory_client, "capture_since", cursor=trimmed["cursor"])
    assert gone["lines_missed"] is True
    assert gone["lines"] == rows(pane)


async def test_cursors_that_cannot_be_followed(memory_client: Client, tmux_socket: str) -> None:
    pane = prompt_pane(tmux_socket)
    other = new_pane(tmux_socket)
    first = await call(memory_client, "capture_since", pane_id=pane.pane_id)
    for cursor in ("", "nonsense", first["cursor"] + "x", "%0;kill-server"):
        error = await call_error(memory_client, "capture_since", cursor=cursor)
        assert "is malformed, or not one this schemux server issued" in error
    error = await call_error(
        memory_client, "capture_since", cursor=first["cursor"], pane_id=other.pane_id
    )
    assert f"the cursor is for pane {pane.pane_id}, not {other.pane_id}" in error
    same = await call(memory_client, "capture_since", cursor=first["cursor"], pane_id=pane.pane_id)
    assert same["pane_id"] == pane.pane_id

    tmux(tmux_socket, "respawn-pane", "-k", "-t", pane.pane_id, "bash --norc --noprofile")
    error = await call_error(memory_client, "capture_since", cursor=same["cursor"])
    assert f"pane {pane.pane_id} was respawned" in error

    dead = new_pane(tmux_socket, command="sh -c 'sleep 0.5'", remain_on_exit=True)
    error = await call_error(memory_client, "capture_since", pane_id=dead.pane_id)
    assert "is dead" in error

    closing = prompt_pane(tmux_socket)
    last = await call(memory_client, "capture_since", pane_id=closing.pane_id)
    tmux(tmux_socket, "kill-pane", "-t", closing.pane_id)
    error = await call_error(memory_client, "capture_since", cursor=last["cursor"])
    assert f"pane {closing.pane_id} was closed" in error


@pytest.mark.parametrize(
    "target",
    [
        {"pane_id": "%0;kill-server"},
        {"pane_id": "#{pane_id}"},
        {"pane_id": "-t"},
        {"window_id": "@0 ; kill-server"},
        {"session_name": "#(touch /tmp/owned)"},
    ],
)
async def test_hostile_targets_are_refused(
    memory_client: Client, tmux_socket: str, target: dict[str, str]
) -> None:
    await call_error(memory_client, "capture_since", **target)
    assert tmux(tmux_socket, "display-message", "-p", "ok").strip() == "ok"


async def test_a_cursor_names_its_server(
    memory_client: Client, tmux_socket: str, other_tmux_socket: str
) -> None:
    pane = prompt_pane(other_tmux_socket)
    first = await call(
        memory_client, "capture_since", pane_id=pane.pane_id, socket_name=other_tmux_socket
    )
    tmux(other_tmux_socket, "send-keys", "-t", pane.pane_id, "echo elsewhere", "Enter")
    wait_until(lambda: rows(pane)[-2:] == ["elsewhere", "$"])
    followed = await call(memory_client, "capture_since", cursor=first["cursor"])
    assert followed["lines"] == ["$ echo elsewhere", "elsewhere", "$"]
    same = await call(
        memory_client, "capture_since", cursor=first["cursor"], socket_name=other_tmux_socket
    )
    assert same["lines"] == followed["lines"]
    error = await call_error(
        memory_client, "capture_since", cursor=first["cursor"], socket_name=tmux_socket
    )
    assert f"the cursor is for pane {pane.pane_id} of the tmux server on" in error


async def test_a_cursor_taken_with_no_history_misses_lines_once_history_was_trimmed(
    memory_client: Client, tmux_socket: str
) -> None:
    pane = prompt_pane(tmux_socket, history_limit=100)
    assert tmux(tmux_socket, "display", "-p", "-t", pane.pane_id, "#{history_size}").strip() == "0"
    first = await call(memory_client, "capture_since", pane_id=pane.pane_id)
    await run(memory_client, pane, "seq 1 50", "50")  # into history, nothing trimmed
    kept = await call(memory_client, "capture_since", cursor=first["cursor"], max_lines=None)
    assert kept["lines"] == ["$ seq 1 50", *map(str, range(1, 51)), "$"]
    await run(memory_client, pane, "seq 1 300", "300")  # trimmed: row 0 is gone
    missed = await call(memory_client, "capture_since", cursor=first["cursor"])
    assert missed["lines_missed"] is True
    assert missed["lines"] == rows(pane)
