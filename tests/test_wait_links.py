"""The link a wait makes of a user's window into _schemux, seen from everything else.

While a wait_for_text links the pane's window, real tmux names _schemux as the pane's
session for ``-t %N``; still the pane resolves to the user's session, run_command accepts
any session really holding it, start_program's fromPaneId puts the program beside it
there, and tmux_snapshot lists the window once. A ``schemux serve`` killed with SIGKILL
mid-wait leaves its link and the link's mark; the next schemux's reaper removes both,
and leaves the links of live waits (of this process, of another live process) alone.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest
from mcp import Client

from schemux.config import Settings
from schemux.panes.targets import PaneTarget, choose_session, resolve_pane
from schemux.serving.state import ServingState
from schemux.shell.abandoned import (
    LINK_PREFIX,
    LinkMark,
    OwnedWindows,
    links_to_remove,
    parse_owned_windows,
)
from schemux.system.processes import start_ticks
from tests.contexts import Contexts, client_of
from tests.support import Pane, call, call_error, new_pane, tmux, wait_until

pytestmark = pytest.mark.anyio


def links(pane: Pane) -> int:
    """How many times _schemux holds the pane's window."""
    windows = tmux(
        pane.socket_name, "list-windows", "-t", "=_schemux", "-F", "#{window_id}", check=False
    )
    return windows.split().count(pane.window_id)


def marks(pane: Pane) -> list[str]:
    """The names of the link marks of the pane's window (other tests' windows may have
    theirs on the shared server meanwhile)."""
    found = []
    for line in tmux(pane.socket_name, "show-options", "-s").splitlines():
        name, _, value = line.partition(" ")
        if name.startswith(LINK_PREFIX) and value == pane.window_id:
            found.append(name)
    return found


async def waiting(client: Client, pane: Pane, links_before: int) -> asyncio.Task[Any]:
    """A wait_for_text on ``pane`` running in the background, once its link is made."""
    task = asyncio.ensure_future(
        call(client, "wait_for_text", pane_id=pane.pane_id, patterns=["^done$"], regex=True,
             timeout=20)
    )  # fmt: skip
    for _ in range(500):
        if links(pane) > links_before or task.done():
            break
        await asyncio.sleep(0.01)
    assert not task.done()
    assert links(pane) == links_before + 1
    await asyncio.sleep(0.2)  # the wait's entry reads
    return task


async def finish(client: Client, pane: Pane, task: asyncio.Task[Any]) -> None:
    await call(client, "send_keys", keys="echo done", enter=True, pane_id=pane.pane_id)
    assert (await task)["outcome"] == "matched"


async def test_a_linked_pane_keeps_its_own_session(
    memory_client: Client, tool_context: ServingState, tmux_socket: str
) -> None:
    pane = new_pane(tmux_socket)
    await call(memory_client, "run_command", command="true", pane_id=pane.pane_id)
    task = await waiting(memory_client, pane, 0)
    # what made this a problem: tmux itself now names _schemux as the pane's session
    told = tmux(tmux_socket, "display-message", "-p", "-t", pane.pane_id, "#{session_name}")
    assert told.strip() == "_schemux"

    resolved = await resolve_pane(
        tool_context.services.tmux(), PaneTarget(pane_id=pane.pane_id), None
    )
    assert (resolved.session_name, resolved.session_id) == (pane.session_name, pane.session_id)
    by_window = await resolve_pane(
        tool_context.services.tmux(), PaneTarget(window_id=pane.window_id), None
    )
    assert by_window.session_name == pane.session_name

    for agreeing in ({"session_name": pane.session_name}, {"session_id": pane.session_id}):
        ran = await call(
            memory_client, "run_command", command="echo agreed", pane_id=pane.pane_id, **agreeing
        )
        assert ran["output"] == ["agreed"]
    # a session really holding the pane is accepted too, one that does not is refused
    other = f"{pane.session_name}-also"
    tmux(tmux_socket, "new-session", "-d", "-s", other)
    tmux(tmux_socket, "link-window", "-d", "-s", pane.window_id, "-t", f"={other}:")
    try:
        ran = await call(
            memory_client, "run_command", command="echo there", pane_id=pane.pane_id,
            session_name=other,
        )  # fmt: skip
        assert ran["output"] == ["there"]
        refused = await call_error(
            memory_client, "run_command", command="echo no", pane_id=pane.pane_id,
            session_name="_schemux",
        )  # fmt: skip
        assert "is not in session_name '_schemux' (it is in session_name 't" in refused
    finally:
        tmux(tmux_socket, "kill-session", "-t", f"={other}")

    started = await call(
        memory_client, "start_program", argv=["sleep", "30"], fromPaneId=pane.pane_id
    )
    home = tmux(tmux_socket, "display-message", "-p", "-t", started["paneId"],
                "#{window_linked_sessions_list}")  # fmt: skip
    assert home.strip() == pane.session_name
    snapshot = (await call(memory_client, "tmux_snapshot"))["data"]
    listed = Counter(
        (session["name"], window["target"]["id"])
        for session in snapshot["sessions"]
        for window in session["windows"]
    )
    assert listed[(pane.session_name, pane.window_id)] == 1
    assert [where for where in listed if where[1] == pane.window_id] == [
        (pane.session_name, pane.window_id)
    ]
    await call(memory_client, "stop_program", programId=started["programId"])

    await finish(memory_client, pane, task)
    wait_until(lambda: links(pane) == 0 and not marks(pane))


async def test_a_program_window_is_still_listed_under_schemux(
    memory_client: Client, tmux_socket: str
) -> None:
    # tests run before this one in the process may have left programs' windows there
    before = await schemux_windows(memory_client)
    started = await call(memory_client, "start_program", argv=["sleep", "30"])
    window_id = tmux(tmux_socket, "display-message", "-p", "-t", started["paneId"], "#{window_id}")
    after = await schemux_windows(memory_client)
    assert [window for window in after if window not in before] == [window_id.strip()]
    await call(memory_client, "stop_program", programId=started["programId"])


async def schemux_windows(client: Client) -> list[str]:
    """The ids of the windows tmux_snapshot lists under _schemux (none without it)."""
    snapshot = (await call(client, "tmux_snapshot"))["data"]
    owned = [s for s in snapshot["sessions"] if s["name"] == "_schemux"]
    return [w["target"]["id"] for w in owned[0]["windows"]] if owned else []


def serve(tmux_socket: str) -> subprocess.Popen[bytes]:
    """A real ``schemux serve`` over stdio, initialized."""
    process = subprocess.Popen(
        [sys.executable, "-m", "schemux", "serve", "--socket-name", tmux_socket],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    send(process, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"}}})  # fmt: skip
    assert process.stdout is not None
    assert json.loads(process.stdout.readline())["id"] == 0
    send(process, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    return process


def wait_in(process: subprocess.Popen[bytes], pane: Pane) -> None:
    """Ask the served schemux for a wait_for_text on ``pane`` that will not end soon."""
    arguments = {"pane_id": pane.pane_id, "patterns": ["never"], "timeout": 60}
    send(process, {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                   "params": {"name": "wait_for_text", "arguments": arguments}})  # fmt: skip


def send(process: subprocess.Popen[bytes], message: dict[str, Any]) -> None:
    assert process.stdin is not None
    process.stdin.write(json.dumps(message).encode() + b"\n")
    process.stdin.flush()


@pytest.fixture
async def second_client(make_context: Contexts, tmux_socket: str) -> AsyncIterator[Client]:
    """Another schemux in this process (its waits' owner is alive: this process)."""
    async with client_of(make_context(socket_name=tmux_socket)) as client:
        yield client


async def test_after_kill_9_mid_wait_the_next_schemux_reaps_the_link(
    second_client: Client, tmux_socket: str
) -> None:
    pane = new_pane(tmux_socket)
    # a live wait of this process first (its schemux reaps when first used: now)
    await call(second_client, "run_command", command="true", pane_id=pane.pane_id)
    task = await waiting(second_client, pane, 0)
    process = serve(tmux_socket)
    try:
        wait_in(process, pane)
        wait_until(lambda: links(pane) == 2, timeout=10)
        dead_mark = f"{LINK_PREFIX}{process.pid}-"
        assert len([name for name in marks(pane) if name.startswith(dead_mark)]) == 1
    finally:
        process.kill()
        process.wait()
    await asyncio.sleep(0.3)
    assert links(pane) == 2  # the dead schemux's link is left behind, with its mark

    # and a link of another live process (the tmux server's pid stands in for a schemux)
    server_pid = int(tmux(tmux_socket, "display-message", "-p", "#{pid}"))
    other_mark = f"{LINK_PREFIX}{server_pid}-{start_ticks(server_pid)}-0123abcd"
    tmux(tmux_socket, "link-window", "-d", "-s", pane.window_id, "-t", "=_schemux:", ";",
         "set-option", "-s", other_mark, pane.window_id)  # fmt: skip
    assert links(pane) == 3

    context = ServingState(Settings(socket_name=tmux_socket))
    await context.services.abandoned.settled(context.services.tmux())
    await context.close()

    assert links(pane) == 2  # the dead one's link only
    left = marks(pane)
    assert not [name for name in left if name.startswith(dead_mark)]
    assert other_mark in left
    assert len(left) == 2
    await finish(second_client, pane, task)  # the live wait still wakes, and cleans up
    assert links(pane) == 1
    assert marks(pane) == [other_mark]
    tmux(tmux_socket, "set-option", "-su", other_mark, ";",
         "unlink-window", "-t", f"=_schemux:{pane.window_id}")  # fmt: skip
    assert tmux(tmux_socket, "list-windows", "-t", f"={pane.session_name}", "-F",
                "#{window_id}").split() == [pane.window_id]  # fmt: skip


async def test_two_schemux_reaping_at_once_take_a_dead_link_once(
    memory_client: Client, tmux_socket: str
) -> None:
    pane = new_pane(tmux_socket)
    await call(memory_client, "run_command", command="true", pane_id=pane.pane_id)
    task = await waiting(memory_client, pane, 0)
    dead_mark = f"{LINK_PREFIX}{os.getpid()}-1-dead"  # this pid did not start at tick 1
    tmux(tmux_socket, "link-window", "-d", "-s", pane.window_id, "-t", "=_schemux:", ";",
         "set-option", "-s", dead_mark, pane.window_id)  # fmt: skip
    assert links(pane) == 2
    contexts = [ServingState(Settings(socket_name=tmux_socket)) for _ in range(2)]
    await asyncio.gather(
        *(context.services.abandoned.settled(context.services.tmux()) for context in contexts)
    )
    for context in contexts:
        await context.close()
    assert links(pane) == 1  # the live wait's link stays
    assert len(marks(pane)) == 1
    assert dead_mark not in marks(pane)
    await finish(memory_client, pane, task)
    assert links(pane) == 0


async def test_a_dead_link_of_a_window_whose_session_closed_ends_it(tmux_socket: str) -> None:
    """As the wait itself would have: the window lived on by the link alone."""
    pane = new_pane(tmux_socket)
    process = serve(tmux_socket)
    try:
        wait_in(process, pane)
        wait_until(lambda: links(pane) == 1, timeout=10)
    finally:
        process.kill()
        process.wait()
    tmux(tmux_socket, "kill-session", "-t", f"={pane.session_name}")
    assert links(pane) == 1
    assert len(marks(pane)) == 1
    context = ServingState(Settings(socket_name=tmux_socket))
    await context.services.abandoned.settled(context.services.tmux())
    await context.close()
    assert links(pane) == 0
    assert not marks(pane)


# pure: which links the reaper takes away


def owned(
    marks: list[tuple[str, bool]], links: dict[str, int], elsewhere: set[str], programs: set[str]
) -> OwnedWindows:
    return OwnedWindows(
        [LinkMark(f"m{n}", window, alive) for n, (window, alive) in enumerate(marks)],
        Counter(links), elsewhere, programs,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("state", "removed"),
    [
        (owned([("@1", False)], {"@1": 1}, {"@1"}, set()), {"@1": 1}),
        (owned([("@1", False), ("@1", True)], {"@1": 2}, {"@1"}, set()), {"@1": 1}),
        # a dead mark whose link went already takes nothing from a live wait
        (owned([("@1", False), ("@1", True)], {"@1": 1}, {"@1"}, set()), {}),
        (owned([("@1", False)], {}, {"@1"}, set()), {}),
        # a window that lives in _schemux alone, running a program: its own place stays
        (owned([("@1", False)], {"@1": 1}, set(), {"@1"}), {}),
        (owned([("@1", False)], {"@1": 2}, set(), {"@1"}), {"@1": 1}),
        # a user's window whose session closed: it ends, as without the link
        (owned([("@1", False), ("@1", False)], {"@1": 2}, set(), set()), {"@1": 2}),
        (owned([("@1", True)], {"@1": 1}, {"@1"}, set()), {}),
        (owned([("@1", False), ("@2", False)], {"@1": 1, "@2": 1}, {"@1", "@2"}, set()),
         {"@1": 1, "@2": 1}),
    ],
)  # fmt: skip
def test_links_to_remove(state: OwnedWindows, removed: dict[str, int]) -> None:
    assert links_to_remove(state) == removed


def test_parse_owned_windows_reads_only_well_formed_marks() -> None:
    lines = [
        f"{LINK_PREFIX}1-2-ab @3",  # pid 1 did not start at tick 2: dead
        f"{LINK_PREFIX}1-2-ab;x @3",
        f"{LINK_PREFIX}x-2-ab @3",
        f"{LINK_PREFIX}1-2-ab #{{pid}}",
        "@schemux-program 1-2",
        "escape-time 500",
        "window\t@3\t1",
        "window\t@3\t0",
        "window\t@4\t1",
        "program\t@4",
    ]
    state = parse_owned_windows(lines)
    assert state.marks == [LinkMark(f"{LINK_PREFIX}1-2-ab", "@3", False)]
    assert state.links == Counter({"@3": 1, "@4": 1})
    assert (state.elsewhere, state.with_programs) == ({"@3"}, {"@4"})


@dataclass(frozen=True)
class Session:
    session_id: str
    session_name: str
    session_activity: int | None


def rows(*sessions: tuple[str, str, int]) -> list[Session]:
    return [Session(sid, name, activity) for sid, name, activity in sessions]


@pytest.mark.parametrize(
    ("target", "chosen"),
    [
        (PaneTarget(pane_id="%1"), "b"),
        (PaneTarget(pane_id="%1", session_name="a"), "a"),
        (PaneTarget(pane_id="%1", session_id="$1"), "a"),
        (PaneTarget(pane_id="%1", session_name="_schemux"), "b"),  # refused, as below
        (PaneTarget(pane_id="%1", session_name="nowhere"), "b"),  # refused by the agreement
    ],
)
def test_choose_session(target: PaneTarget, chosen: str) -> None:
    found = choose_session(rows(("$0", "_schemux", 9), ("$1", "a", 5), ("$2", "b", 7)), target)
    assert found is not None
    assert found.session_name == chosen


def test_choose_session_ties_and_programs() -> None:
    tie = choose_session(rows(("$3", "a", 5), ("$4", "b", 5)), PaneTarget(pane_id="%1"))
    assert tie is not None
    assert tie.session_name == "b"
    for named in (None, "_schemux"):
        target = PaneTarget(pane_id="%1", session_name=named)
        alone = choose_session(rows(("$0", "_schemux", 5)), target)
        assert alone is not None
        assert alone.session_name == "_schemux"
    assert choose_session([], PaneTarget(pane_id="%1")) is None
