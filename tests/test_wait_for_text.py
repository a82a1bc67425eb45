"""wait_for_text (with send_keys) against real tmux, through the in-memory MCP client.

A Python REPL driven as an agent would drive it; only rows written after the call count;
the alternate screen; what a wait leaves behind when it ends, times out or is cancelled
(nothing: no link of the pane's window into _schemux, no control client); a session or
pane closed under a wait; the cost of waiting.

A test of ``transport_client`` runs twice: on this machine, and over ssh (``tests.ssh_server``).
"""

from __future__ import annotations

import asyncio
import gc
import threading
import time
import uuid
from collections.abc import Awaitable
from typing import Any

import anyio
import pytest
import regex
from mcp import Client

from schemux.domain.pane_watch import RECHECK_SECONDS, PaneState, PaneWatch
from schemux.tmux.control.engine import Watcher
from tests.support import (
    Pane,
    call,
    call_error,
    new_pane,
    pane_format,
    run,
    tmux,
    until,
    watching_clients,
)
from tests.test_run_command import pane_with_history_limit

pytestmark = pytest.mark.anyio

# longer than any wait here takes to end once its time is up, however loaded the machine
HANG_SECONDS = 10


async def send(client: Client, pane: Pane, keys: str, **options: Any) -> None:
    await call(client, "send_keys", keys=keys, pane_id=pane.pane_id, **options)


def linked(pane: Pane) -> bool:
    """Whether the pane's window is linked into _schemux (a wait on it is armed)."""
    windows = tmux(
        pane.socket_name, "list-windows", "-t", "=_schemux", "-F", "#{window_id}", check=False
    )
    return pane.window_id in windows.split()


async def armed_wait(client: Client, pane: Pane, **arguments: Any) -> asyncio.Task[dict[str, Any]]:
    """A wait_for_text call running in the background, once it has taken its entry rows."""
    marks_before = len(link_marks(pane))
    call_made: Awaitable[dict[str, Any]] = call(
        client, "wait_for_text", pane_id=pane.pane_id, **arguments
    )
    task = asyncio.ensure_future(call_made)
    await until_armed(pane, task, marks_before)
    return task


async def until_armed(pane: Pane, task: asyncio.Future[Any], marks_before: int = 0) -> None:
    """Until the wait ``task`` linked the pane's window and took its entry rows (or
    ended): ``marks_before`` were the link marks on the window before it began (each
    wait's link has a mark of its own). The link, its mark and the entry's captures are
    one command line, which tmux runs whole before any other client's command: a mark
    seen here has its rows taken."""
    await until(lambda: len(link_marks(pane)) > marks_before or task.done())


def link_marks(pane: Pane) -> list[str]:
    """The server options that mark a link of the pane's window as some schemux's."""
    options = tmux(pane.socket_name, "show-options", "-s").splitlines()
    return [
        line
        for line in options
        if line.startswith("@schemux-link-") and line.split()[-1] == pane.window_id
    ]


async def left_behind(pane: Pane) -> None:
    """Wait (a cancellation arrives as a notification, a moment later) until neither
    the link, its mark nor a watcher client is left; fail if they stay."""
    try:
        await until(
            lambda: (
                not linked(pane)
                and not link_marks(pane)
                and watching_clients(pane.socket_name) == 0
            ),
            timeout=4,
        )
    except TimeoutError:
        raise AssertionError(
            "the wait left its link, its mark or its control client behind"
        ) from None


@pytest.fixture
async def repl(transport_client: Client, transport_socket: str) -> Pane:
    pane = new_pane(transport_socket, command="env -u PYTHONSTARTUP python3 -q -i")
    await until(lambda: ">>>" in tmux(transport_socket, "capture-pane", "-p", "-t", pane.pane_id))
    return pane


def oldest_row(pane: Pane) -> str:
    """The first row of the pane's history: another one once tmux has cut history."""
    history = tmux(pane.socket_name, "capture-pane", "-p", "-t", pane.pane_id, "-S", "-")
    return history.split("\n")[0]


@pytest.mark.parametrize(
    "output",
    [
        # at once: tmux cuts history many times between two of the wait's checks
        "seq 1 350; echo found-after-''cuts; seq 1 20",
        # paced: a cut or two between one check and the next, many over the wait
        "for i in $(seq 1 35); do seq 1 10; sleep 0.03; done; echo found-after-''cuts; seq 1 20",
    ],
    ids=["at-once", "paced"],
)
async def test_a_line_written_after_history_cuts_is_found_once(
    transport_client: Client, transport_socket: str, output: str
) -> None:
    """At its history-limit tmux cuts a tenth of the history (10 rows here) and the rows
    below move up by as much: the wait follows them. Its history full before the wait,
    the wait's first row is near the bottom of the screen, and the line comes 20 rows
    above the bottom, so neither reading from where the first row was (the line's rows
    moved up past it) nor a refusal finds it."""
    pane = pane_with_history_limit(transport_socket, 100)
    await run(transport_client, pane, "seq 1 300")
    waiting = await armed_wait(
        transport_client, pane, patterns=["^found-after-cuts$"], regex=True, timeout=10
    )
    await send(transport_client, pane, output)
    result = await waiting
    assert (result["outcome"], result["matched_lines"]) == ("matched", ["found-after-cuts"])


async def test_text_from_before_the_wait_stays_unmatched_across_history_cuts(
    transport_client: Client, transport_socket: str
) -> None:
    """The text is on the screen when the wait begins, and still in the pane after
    tmux cut the history under the wait (six times, between the wait's checks): it is
    not new, so the wait times out."""
    pane = pane_with_history_limit(transport_socket, 100)
    await run(transport_client, pane, "seq 1 300; echo written-''before")
    oldest = oldest_row(pane)
    waiting = await armed_wait(
        transport_client, pane, patterns=["^written-before$"], regex=True, timeout=3
    )
    await send(transport_client, pane, "for i in $(seq 1 6); do seq 1 10; sleep 0.1; done")
    result = await waiting
    assert (result["outcome"], result["matched_at_entry"]) == ("timeout", True)
    assert result["saw_new_output"] is True
    # the scene was the one meant: history was cut under the wait, the text stayed
    assert oldest_row(pane) != oldest
    assert "\nwritten-before\n" in tmux(
        transport_socket, "capture-pane", "-p", "-t", pane.pane_id, "-S", "-"
    )


async def test_history_cleared_under_a_wait_is_an_error(
    transport_client: Client, transport_socket: str
) -> None:
    """clear-history takes the rows above the screen, and the wait's first row was on
    the screen: whether it went with them is not known, so the wait says so."""
    pane = new_pane(transport_socket)
    await run(transport_client, pane, "seq 1 100")
    failing = asyncio.ensure_future(
        call_error(transport_client, "wait_for_text", pane_id=pane.pane_id, timeout=10)
    )
    await until_armed(pane, failing)
    tmux(transport_socket, "clear-history", "-t", pane.pane_id)
    await send(transport_client, pane, "echo after")
    error = await failing
    assert f"pane {pane.pane_id}'s history was cleared while waiting" in error
    await left_behind(pane)


async def test_a_python_repl_driven_by_keys_and_waits(transport_client: Client, repl: Pane) -> None:
    # an expression and its value
    waiting = await armed_wait(transport_client, repl, patterns=["^42$"], regex=True, timeout=10)
    await send(transport_client, repl, "6*7")
    result = await waiting
    assert (result["outcome"], result["matched_lines"]) == ("matched", ["42"])
    assert 0 <= result["elapsed_seconds"] < 10  # matched: within the wait's timeout

    # a slow expression: the wait begins before its value is written
    await send(transport_client, repl, "import time; time.sleep(0.5); print('sl' + 'ow')")
    result = await call(transport_client, "wait_for_text", pane_id=repl.pane_id, patterns=["slow"])
    assert result["matched_lines"] == ["slow"]

    # a prompt, and the answer to it
    # the prompt's own row: the echo of the typed line holds the text too, and Python
    # 3.13's REPL draws that echo a moment before input() prints the prompt
    waiting = await armed_wait(
        transport_client, repl, patterns=[r"^\[y/N\] $"], regex=True, timeout=10
    )
    await send(transport_client, repl, "answer = input('[y/N] ')")
    prompt = await waiting
    assert prompt["matched_lines"][-1] == "[y/N] "
    await send(transport_client, repl, "y")
    waiting = await armed_wait(transport_client, repl, patterns=["answered 'y'"], timeout=10)
    await send(transport_client, repl, "print('answered', repr(answer))")
    assert (await waiting)["outcome"] == "matched"

    # a loop that runs too long, interrupted with C-c
    await send(transport_client, repl, "while True: pass")
    await send(transport_client, repl, "")  # ends the block; the loop runs
    waiting = await armed_wait(
        transport_client, repl, patterns=["KeyboardInterrupt"], stop=["Error"], timeout=10
    )
    await send(transport_client, repl, "C-c", enter=False)
    result = await waiting
    assert result["outcome"] == "matched", result
    # the REPL is back and answers
    waiting = await armed_wait(transport_client, repl, patterns=["^7$"], regex=True, timeout=10)
    await send(transport_client, repl, "3+4")
    assert (await waiting)["found"] is True


async def test_only_rows_written_after_the_call_count(transport_client: Client, repl: Pane) -> None:
    await send(transport_client, repl, "print('RE' + 'ADY')")
    await until(
        lambda: "\nREADY" in tmux(repl.socket_name, "capture-pane", "-p", "-t", repl.pane_id)
    )
    stale = await call(
        transport_client, "wait_for_text", pane_id=repl.pane_id, patterns=["^READY$"], regex=True,
        timeout=0.5,
    )  # fmt: skip
    assert (stale["outcome"], stale["found"], stale["matched_at_entry"]) == (
        "timeout",
        False,
        True,
    )
    assert stale["saw_new_output"] is False
    # the same text written again is a fresh occurrence
    waiting = await armed_wait(transport_client, repl, patterns=["^READY$"], regex=True, timeout=10)
    await send(transport_client, repl, "print('RE' + 'ADY')")
    fresh = await waiting
    assert (fresh["outcome"], fresh["matched_at_entry"]) == ("matched", False)


async def test_a_pager_suppresses_matching(transport_client: Client, transport_socket: str) -> None:
    pane = new_pane(transport_socket)
    waiting = await armed_wait(transport_client, pane, patterns=["root"], timeout=2)
    await send(transport_client, pane, "less /etc/passwd")
    result = await waiting
    assert (result["outcome"], result["found"], result["alternate_screen"]) == (
        "alternate_screen",
        False,
        True,
    )
    await send(transport_client, pane, "q", enter=False)


async def test_a_pager_entered_between_the_state_and_the_rows_is_not_matched(
    transport_client: Client, transport_socket: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pane enters the alternate screen after a check read its state and before the
    rows are read (a loaded run on Debian 13): the pager's screen is not matched."""
    pane = new_pane(transport_socket)
    check = PaneWatch.check
    paged = False

    async def check_then_page(watch: PaneWatch) -> PaneState:
        nonlocal paged
        state = await check(watch)
        if not paged:
            paged = True
            tmux(transport_socket, "send-keys", "-t", pane.pane_id, "less /etc/passwd", "Enter")
            await until(
                lambda: (
                    "root" in tmux(transport_socket, "capture-pane", "-p", "-t", pane.pane_id)
                    and pane_format(pane, "#{alternate_on}") == "1"
                )
            )
        return state

    monkeypatch.setattr(PaneWatch, "check", check_then_page)
    result = await call(
        transport_client, "wait_for_text", pane_id=pane.pane_id, patterns=["root"], timeout=2
    )
    assert paged
    assert (result["outcome"], result["found"], result["alternate_screen"]) == (
        "alternate_screen",
        False,
        True,
    )
    await send(transport_client, pane, "q", enter=False)


async def test_a_moment_on_the_alternate_screen_is_seen(
    transport_client: Client, transport_socket: str
) -> None:
    # the pane's program passes through the alternate screen when told (a channel), not
    # a command typed over the transport: over ssh on a loaded machine 1.5 s, then 3 s,
    # ran out before a typed printf ran. The wait runs to its timeout: it is told by
    # its outcome, alternate_screen rather than timeout
    go = f"go-{uuid.uuid4().hex}"
    moment = r'printf "\033[?1049hX\033[?1049l"'
    pane = new_pane(transport_socket, command=f"sh -c 'tmux wait-for {go}; {moment}; exec cat'")
    waiting = await armed_wait(transport_client, pane, patterns=["never"], timeout=3)
    tmux(transport_socket, "wait-for", "-S", go)
    result = await waiting
    assert (result["outcome"], result["alternate_screen"]) == ("alternate_screen", True)


async def test_typed_escapes_are_not_the_alternate_screen(
    transport_client: Client, transport_socket: str
) -> None:
    pane = new_pane(transport_socket)
    # 3 s: over ssh on a loaded machine the wait's own start and the typing took 1 s
    waiting = await armed_wait(transport_client, pane, patterns=["never"], timeout=3)
    await send(transport_client, pane, r"echo '\033[?1049h'", literal=True)
    result = await waiting
    assert (result["outcome"], result["alternate_screen"]) == ("timeout", False)
    assert result["saw_new_output"] is True


async def test_timeout_and_result_leave_nothing_behind(
    transport_client: Client, transport_socket: str
) -> None:
    pane = new_pane(transport_socket)
    await send(transport_client, pane, "true")  # schemux's own clients are up
    timeout = 0.4
    timed_out = await call(
        transport_client, "wait_for_text", pane_id=pane.pane_id, patterns=["x"], timeout=timeout
    )
    assert timed_out["outcome"] == "timeout"
    # ended by its timeout, not before it; how soon after it is latency (bench/), so the
    # upper bound only tells a wait that ends from one that runs on
    assert timeout <= timed_out["elapsed_seconds"] < HANG_SECONDS
    await left_behind(pane)
    waiting = await armed_wait(transport_client, pane, timeout=10)
    await send(transport_client, pane, "echo moved")
    assert (await waiting)["outcome"] == "any_output"
    await left_behind(pane)
    assert tmux(
        transport_socket, "list-windows", "-t", pane.session_name, "-F", "#{window_id}"
    ).split() == [pane.window_id]


async def test_cancellation_stops_the_wait_and_changes_nothing(
    transport_client: Client, transport_socket: str
) -> None:
    pane = new_pane(transport_socket)
    await send(transport_client, pane, "echo settled")

    def settled() -> bool:
        """The echo ran and the next prompt is drawn: nothing more comes to the screen (a
        screen read while the command line was still typed changed under a loaded run)."""
        lines = (
            tmux(transport_socket, "capture-pane", "-p", "-t", pane.pane_id).strip().splitlines()
        )
        return len(lines) >= 3 and lines[-2] == "settled" and lines[-1].strip() != ""

    await until(settled)
    screen = tmux(transport_socket, "capture-pane", "-p", "-t", pane.pane_id)
    started = time.monotonic()
    armed = anyio.Event()

    async def see_the_link() -> None:
        for _ in range(100):
            if linked(pane):
                armed.set()
                return
            await anyio.sleep(0.01)

    async with anyio.create_task_group() as group:
        group.start_soon(see_the_link)
        with anyio.move_on_after(0.8) as scope:
            await transport_client.call_tool(
                "wait_for_text", {"pane_id": pane.pane_id, "patterns": ["never"], "timeout": 30}
            )
    assert scope.cancelled_caught
    assert armed.is_set()  # the wait was under way when it was cancelled
    await left_behind(pane)
    assert time.monotonic() - started < 10
    assert tmux(transport_socket, "capture-pane", "-p", "-t", pane.pane_id) == screen
    after = await call(transport_client, "run_command", command="echo next", pane_id=pane.pane_id)
    assert after["output"] == ["next"]


async def test_concurrent_waits_and_commands_on_one_pane(
    transport_client: Client, transport_socket: str
) -> None:
    pane = new_pane(transport_socket)
    await call(transport_client, "run_command", command="true", pane_id=pane.pane_id)
    first = await armed_wait(transport_client, pane, patterns=["^both$"], regex=True, timeout=10)
    second = await armed_wait(transport_client, pane, patterns=["^both$"], regex=True, timeout=10)
    ran = await call(transport_client, "run_command", command="echo both", pane_id=pane.pane_id)
    assert ran["output"] == ["both"]
    assert (await first)["outcome"] == (await second)["outcome"] == "matched"
    await left_behind(pane)


async def test_a_program_pane_is_watched_without_a_link(memory_client: Client) -> None:
    started = await call(
        memory_client, "start_program", argv=["sh", "-c", "sleep 0.5; echo late; sleep 30"]
    )
    result = await call(
        memory_client, "wait_for_text", pane_id=started["paneId"], patterns=["late"], timeout=10
    )
    assert result["outcome"] == "matched"
    await call(memory_client, "stop_program", programId=started["programId"])


async def test_the_session_closed_under_a_wait(
    transport_client: Client, transport_socket: str
) -> None:
    pane = new_pane(transport_socket)
    waiting = await armed_wait(transport_client, pane, patterns=["never"], timeout=10)
    tmux(transport_socket, "kill-session", "-t", pane.session_name)
    with pytest.raises(AssertionError):
        await waiting
    # the window ends, as it would have without the wait's link
    await until(
        lambda: (
            pane.window_id not in tmux(transport_socket, "list-windows", "-a", "-F", "#{window_id}")
        )
    )


async def test_the_pane_killed_under_a_wait(
    transport_client: Client, transport_socket: str
) -> None:
    pane = new_pane(transport_socket)
    waiting = asyncio.ensure_future(
        call_error(transport_client, "wait_for_text", pane_id=pane.pane_id, timeout=10)
    )
    await until_armed(pane, waiting)
    tmux(transport_socket, "kill-pane", "-t", pane.pane_id)
    assert f"pane {pane.pane_id} was closed while waiting" in await waiting


async def test_waiting_costs_little(
    transport_client: Client, transport_socket: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a wait costs: how often it looks at the pane, counted (a quiet pane once a
    RECHECK_SECONDS, not once an interval; a pane writing as fast as it can once an
    interval, not once a write), and this process's CPU time, bounded by the wait's
    length (a wait that polled or woke for every write would burn a core throughout).
    The CPU bound is an order of magnitude, not a figure: a loaded machine's share of a
    core varies (bench/ measures it). Each measurement begins after a full collection:
    collecting what the run's earlier tests left is not the wait's cost."""
    checks: list[str] = []
    check = PaneWatch.check

    async def counted_check(watch: PaneWatch) -> PaneState:
        checks.append(watch.pane_id)
        return await check(watch)

    monkeypatch.setattr(PaneWatch, "check", counted_check)
    # the noisy pane's `yes` and its tmux server keep two cores busy for the timeout
    timeout, interval = 1.5, 0.05
    quiet = new_pane(transport_socket)
    gc.collect()
    cpu = time.process_time()
    await call(
        transport_client, "wait_for_text", pane_id=quiet.pane_id, patterns=["x"],
        timeout=timeout, interval=interval,
    )  # fmt: skip
    assert time.process_time() - cpu < timeout / 4
    assert len(checks) <= timeout / RECHECK_SECONDS + 1, checks  # polling: 60
    # a pane writing as fast as it can: one wake-up a check, not one per write; it starts
    # once the wait has begun (its history cut many times over while the wait follows it)
    go = f"go-{uuid.uuid4().hex}"
    noisy = new_pane(transport_socket, command=f"sh -c 'tmux wait-for {go}; exec yes'")
    try:
        gc.collect()
        checks.clear()
        cpu = time.process_time()
        waiting = asyncio.ensure_future(
            call(
                transport_client,
                "wait_for_text",
                pane_id=noisy.pane_id,
                patterns=["never"],
                timeout=timeout,
                interval=interval,
            )
        )
        await until_armed(noisy, waiting)
        tmux(transport_socket, "wait-for", "-S", go)
        result = await waiting
        spent = time.process_time() - cpu
    finally:  # left running, it would keep a core busy for the rest of the run
        tmux(transport_socket, "kill-session", "-t", noisy.session_id)
    assert result["saw_new_output"] is True
    assert len(checks) <= timeout / interval + 1  # `yes` writes thousands of times
    assert spent < timeout / 2


async def test_schemux_session_killed_under_a_wait(
    transport_client: Client, transport_socket: str
) -> None:
    pane = new_pane(transport_socket)
    failing = asyncio.ensure_future(
        call_error(transport_client, "wait_for_text", pane_id=pane.pane_id, timeout=10)
    )
    await until_armed(pane, failing)
    tmux(transport_socket, "kill-session", "-t", "=_schemux")
    assert "(the tmux server exited, or _schemux was closed)" in await failing
    # the user's window is untouched, and the next wait works (schemux makes _schemux again)
    windows = tmux(transport_socket, "list-windows", "-t", pane.session_name, "-F", "#{window_id}")
    assert windows.split() == [pane.window_id]
    waiting = await armed_wait(transport_client, pane, patterns=["^again$"], regex=True, timeout=10)
    await send(transport_client, pane, "echo again")
    assert (await waiting)["outcome"] == "matched"
    await left_behind(pane)


async def test_schemux_killed_under_the_unlink_leaves_no_mark(
    memory_client: Client, tmux_socket: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """_schemux is killed just as the wait's end unlinks the window: the control client
    the unlink runs on dies under it, and the link's mark is removed all the same (it
    was left on the server once, under a loaded run)."""
    pane = new_pane(tmux_socket)
    run = Watcher.run
    killed = False

    async def killed_first(watcher: Watcher, *args: str) -> list[str]:
        nonlocal killed
        if args[:2] == ("set-option", "-su") and not killed:
            killed = True
            tmux(tmux_socket, "kill-session", "-t", "=_schemux")
        return await run(watcher, *args)

    monkeypatch.setattr(Watcher, "run", killed_first)
    result = await call(
        memory_client, "wait_for_text", pane_id=pane.pane_id, patterns=["never"], timeout=0.5
    )
    assert (killed, result["outcome"]) == (True, "timeout")
    await left_behind(pane)


async def test_a_catastrophic_pattern_stalls_no_other_call_and_is_refused(
    transport_client: Client, transport_socket: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The match runs off the loop: while it runs to its limit (made seconds long here,
    so that a match on the loop would hold the loop's timers for seconds, far beyond
    what a loaded machine makes them late), other calls are answered and the timers
    keep time; the call is refused at the limit, long before its timeout."""
    match_seconds, timeout = 2.0, 100  # timers ran 0.03 s late at worst with 4 busy processes
    monkeypatch.setattr("schemux.domain.text_wait.MATCH_SECONDS", match_seconds)
    pane = new_pane(transport_socket)
    line = "a" * 60 + "b"  # (a|aa)+$ tries about 2**40 ways on it before it fails
    tmux(transport_socket, "send-keys", "-t", pane.pane_id, "-l", f"echo {line}")
    tmux(transport_socket, "send-keys", "-t", pane.pane_id, "Enter")
    await until(
        lambda: f"\n{line}" in tmux(transport_socket, "capture-pane", "-p", "-t", pane.pane_id)
    )
    started = time.monotonic()
    failing = call_error(
        transport_client, "wait_for_text", pane_id=pane.pane_id,
        patterns=["(a|aa)+$"], regex=True, timeout=timeout,
    )  # fmt: skip
    # captures answered all along, and timers on time: on the loop, the match would
    # hold both for match_seconds
    lateness, error = await lateness_until(transport_client, pane, failing)
    took = time.monotonic() - started
    assert lateness < match_seconds / 2
    assert (
        f"patterns[0] '(a|aa)+$' took more than {match_seconds:g} s to match the pane's rows"
        in error
    )
    # refused at its limit, before the timeout (where the limit is wall-clock time, a
    # loaded machine gives the matching thread little of it: 43 s was seen under load)
    assert match_seconds <= took < timeout
    await left_behind(pane)


async def test_a_wait_begins_in_two_round_trips_on_its_watcher(
    transport_client: Client, transport_socket: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pane's state, then the link with its mark and the entry's rows in one line:
    nothing more before the wait waits for output."""
    pane = new_pane(transport_socket)
    await send(transport_client, pane, "true")  # schemux's own clients are up
    sent: list[tuple[str, ...]] = []
    before_waiting: list[list[tuple[str, ...]]] = []
    run, wait = Watcher.run, PaneWatch.wait

    async def counted_run(self: Watcher, *args: str) -> list[str]:
        sent.append(args)
        return await run(self, *args)

    async def first_wait(self: PaneWatch, deadline: float, interval: float) -> None:
        if not before_waiting:
            before_waiting.append(list(sent))
        await wait(self, deadline, interval)

    monkeypatch.setattr(Watcher, "run", counted_run)
    monkeypatch.setattr(PaneWatch, "wait", first_wait)
    # 1 s: a deadline that passes during the two round trips never waits (seen over ssh
    # under load at 0.3 s)
    result = await call(
        transport_client, "wait_for_text", pane_id=pane.pane_id, patterns=["never"], timeout=1
    )
    assert result["outcome"] == "timeout"
    (lines,) = before_waiting
    assert [args[0] for args in lines] == ["display-message", "link-window"]
    # the last rows of history (to follow the rows as tmux cuts history), the rows
    # from the cursor, and the screen
    assert lines[1].count("capture-pane") == 3
    await left_behind(pane)


async def lateness_until(client: Client, pane: Pane, answer: Awaitable[Any]) -> tuple[float, Any]:
    """How late the event loop's timers ran, other calls (captures) answered meanwhile,
    until ``answer`` came; and the answer."""
    task = asyncio.ensure_future(answer)
    worst = 0.0
    while not task.done():
        slept = time.monotonic()
        await asyncio.sleep(0.05)
        worst = max(worst, time.monotonic() - slept - 0.05)
        await call(client, "capture_pane", pane_id=pane.pane_id)
    return worst, await task


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"patterns": ["a" * 1_000_000]}, "patterns[0] is 1000000 characters long: at most"),
        ({"patterns": ["ok", "b" * 10_001]}, "patterns[1] is 10001 characters long"),
        (
            {"patterns": ["(?:x|y)" * 100_000], "regex": True},
            "patterns[0] is 700000 characters long",
        ),
        ({"stop": [f"s{index}" for index in range(10_000)]}, "stop has 10000 patterns: at most"),
        (
            {"patterns": ["p" * 10_000], "stop": ["s" * 10_000, "t"]},
            "patterns and stop hold 20001 characters together: at most 20000",
        ),
    ],
)
async def test_too_many_or_too_long_patterns_are_refused_at_once(
    transport_client: Client,
    transport_socket: str,
    arguments: dict[str, Any],
    message: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Before the bounds, compiling a 1 MB literal held the event loop for seconds. At
    once: refused before anything is compiled (every pattern goes through
    ``regex.compile``)."""
    pane = new_pane(transport_socket)
    await call(transport_client, "capture_pane", pane_id=pane.pane_id)  # clients are up
    compiled: list[str] = []
    real_compile = regex.compile

    def recorded_compile(pattern: str, *args: Any, **kwargs: Any) -> Any:
        compiled.append(pattern)
        return real_compile(pattern, *args, **kwargs)

    monkeypatch.setattr(regex, "compile", recorded_compile)
    error = await call_error(
        transport_client, "wait_for_text", pane_id=pane.pane_id, timeout=0.3, **arguments
    )
    assert message in error
    assert len(error) < 1000  # the value is not echoed
    assert compiled == []
    await left_behind(pane)


async def test_patterns_compile_off_the_loop_within_the_budget(
    transport_client: Client, transport_socket: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The largest patterns allowed, compiled in a worker thread: every other call is
    answered meanwhile, and a compile that outlasts the call's timeout ends the call
    at its timeout."""
    pane = new_pane(transport_socket)
    await call(transport_client, "capture_pane", pane_id=pane.pane_id)
    # a line to match once the compile is done, however long a loaded machine takes
    tmux(pane.socket_name, "send-keys", "-t", pane.pane_id,
         "while :; do echo re''ady; sleep 0.2; done", "Enter")  # fmt: skip
    heaviest = {
        "patterns": ["(?:x|y)" * 1428, "ready"],
        "stop": ["(?:x|z)" * 1428],
        "regex": True,
    }
    # no lateness measured here: the heaviest compile takes about 0.3 s, which a loaded
    # machine's timers can be late by anyway; the held compile below tells the loop
    result = await call(
        transport_client, "wait_for_text", pane_id=pane.pane_id, timeout=30, **heaviest
    )
    assert (result["outcome"], result["matched_index"]) == ("matched", 1)
    tmux(pane.socket_name, "send-keys", "-t", pane.pane_id, "C-c")

    real_compile = regex.compile
    compiling, released = threading.Event(), threading.Event()
    compile_hold = 30.0

    def slow_compile(*args: Any, **kwargs: Any) -> Any:
        compiling.set()
        released.wait(compile_hold)  # as a compile of seconds would, without a CPU to spare
        return real_compile(*args, **kwargs)

    monkeypatch.setattr(regex, "compile", slow_compile)
    refused = call_error(
        transport_client,
        "wait_for_text",
        pane_id=pane.pane_id,
        patterns=["slow" * 100],
        timeout=0.3,
    )  # longer than is compiled on the loop
    try:
        lateness, error = await lateness_until(transport_client, pane, refused)
        assert compiling.is_set()
        assert not released.is_set()  # the call ended with the compile still running
    finally:
        released.set()
    assert lateness < compile_hold / 3  # on the loop, the held compile holds the timers
    assert "compiling patterns and stop took longer than the call's timeout" in error
    await left_behind(pane)
