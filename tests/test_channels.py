"""wait_for_channel and signal_channel against real tmux, through the in-memory MCP client.

A signal reaches a wait, or is kept for the next; a shell command signals a wait; a wait
that times out or is cancelled leaves no waiter in tmux (tmux would hand the next signal
to it and lose it) and no extra client; the wait ceiling is named; names tmux could read
as syntax or that schemux reserves are refused, and odd but valid ones stay names.
"""

from __future__ import annotations

import asyncio
import subprocess
import uuid
from collections.abc import AsyncIterator

import anyio
import pytest
from mcp import Client

from tests.contexts import Contexts, client_of
from tests.support import call, call_error, new_pane, tmux

pytestmark = pytest.mark.anyio


def channel() -> str:
    """A name of this test's own: a signal another test left kept cannot reach it."""
    return f"ch-{uuid.uuid4().hex[:12]}"


async def kept(socket_name: str, name: str) -> bool:
    """Whether tmux keeps a signal for ``name`` (a plain ``wait-for`` returns at once); a
    waiter left behind would have taken it. Consumes the signal."""
    argv = ["tmux", "-L", socket_name, "wait-for", "--", name]
    try:
        await asyncio.to_thread(subprocess.run, argv, check=True, timeout=2)
    except subprocess.TimeoutExpired:
        tmux(socket_name, "wait-for", "-S", "--", name)  # free the waiter it left
        return False
    return True


async def none_kept(socket_name: str, name: str) -> bool:
    """Whether tmux keeps no signal for ``name``, told at once rather than by a wait that
    times out: a signal with nobody waiting is kept when none was, and clears one that was
    (test_a_second_signal_with_nobody_waiting_clears_the_first), so after one the channel
    keeps a signal exactly when it kept none before, and no waiter was left to take it.
    Leaves none kept."""
    tmux(socket_name, "wait-for", "-S", "--", name)
    return await kept(socket_name, name)


def control_clients(socket_name: str) -> int:
    return len(tmux(socket_name, "list-clients", "-t", "=_schemux", "-F", "x").split())


async def test_a_signal_reaches_a_wait_or_is_kept_for_the_next(
    memory_client: Client, tmux_socket: str
) -> None:
    name = channel()
    signalled = await call(memory_client, "signal_channel", channel=name)
    assert signalled == {"result": f"Channel {name!r} signalled"}
    waited = await call(memory_client, "wait_for_channel", channel=name, timeout=5)
    assert waited == {"result": f"Channel {name!r} was signalled"}

    waiting = asyncio.ensure_future(call(memory_client, "wait_for_channel", channel=name))
    await asyncio.sleep(0.3)
    assert not waiting.done()
    await call(memory_client, "signal_channel", channel=name)
    assert (await waiting)["result"] == f"Channel {name!r} was signalled"
    assert await none_kept(tmux_socket, name)  # the signal went to the wait, none is left over


async def test_a_shell_command_signals_the_wait(memory_client: Client, tmux_socket: str) -> None:
    pane = new_pane(tmux_socket)
    name = channel()
    await call(
        memory_client,
        "send_keys",
        keys=f"sleep 0.3; echo done-{name}; tmux wait-for -S {name}",
        pane_id=pane.pane_id,
    )
    await call(memory_client, "wait_for_channel", channel=name, timeout=10)
    assert f"done-{name}" in tmux(tmux_socket, "capture-pane", "-p", "-t", pane.pane_id)


async def test_a_timed_out_wait_leaves_no_waiter_and_no_client(
    memory_client: Client, tmux_socket: str
) -> None:
    name = channel()
    warm = channel()  # the clients exist: the shared one, and the spares a first wait starts
    await call(memory_client, "signal_channel", channel=warm)
    await call(memory_client, "wait_for_channel", channel=warm, timeout=10)
    before = control_clients(tmux_socket)
    for _ in range(3):
        error = await call_error(memory_client, "wait_for_channel", channel=name, timeout=0.3)
        assert f"wait-for timeout: channel {name!r} was not signalled within 0.3s" in error
    assert control_clients(tmux_socket) == before  # waits borrow the spares
    # a signal nobody waits for is kept, not taken by a waiter the timeouts left
    tmux(tmux_socket, "wait-for", "-S", "--", name)
    assert await kept(tmux_socket, name)
    # and after the signal the channel is as new: a wait waits
    error = await call_error(memory_client, "wait_for_channel", channel=name, timeout=0.3)
    assert "was not signalled" in error


async def test_a_cancelled_wait_leaves_no_waiter(memory_client: Client, tmux_socket: str) -> None:
    name = channel()
    with anyio.move_on_after(0.5) as scope:
        await memory_client.call_tool("wait_for_channel", {"channel": name, "timeout": 30})
    assert scope.cancelled_caught
    await asyncio.sleep(0.5)  # the cancellation arrives as a notification
    tmux(tmux_socket, "wait-for", "-S", "--", name)
    assert await kept(tmux_socket, name)
    await call(memory_client, "signal_channel", channel=name)
    await call(memory_client, "wait_for_channel", channel=name, timeout=5)


async def test_a_wait_giving_up_does_not_wake_another_on_the_channel(
    memory_client: Client, tmux_socket: str
) -> None:
    name = channel()
    patient = asyncio.ensure_future(
        call(memory_client, "wait_for_channel", channel=name, timeout=20)
    )
    await asyncio.sleep(0.3)
    error = await call_error(memory_client, "wait_for_channel", channel=name, timeout=0.3)
    assert "was not signalled" in error
    await asyncio.sleep(0.5)
    assert not patient.done()
    await call(memory_client, "signal_channel", channel=name)
    assert (await patient)["result"] == f"Channel {name!r} was signalled"
    # the given-up wait's waiter was woken with it: the next signal is kept
    tmux(tmux_socket, "wait-for", "-S", "--", name)
    assert await kept(tmux_socket, name)


@pytest.fixture
async def low_ceiling_client(make_context: Contexts, tmux_socket: str) -> AsyncIterator[Client]:
    context = make_context(socket_name=tmux_socket, wait_ceiling=0.5)
    async with client_of(context) as client:
        yield client


async def test_the_wait_ceiling_is_named(low_ceiling_client: Client) -> None:
    name = channel()
    error = await call_error(low_ceiling_client, "wait_for_channel", channel=name, timeout=100)
    assert "not signalled within 0.5s (timeout enforced: 0.5 s, the server's wait ceiling" in error
    await call(low_ceiling_client, "signal_channel", channel=name)
    waited = await call(low_ceiling_client, "wait_for_channel", channel=name)
    assert waited["result"] == (
        f"Channel {name!r} was signalled (timeout enforced: 0.5 s, the server's wait "
        "ceiling, not the 30 s asked)"
    )


@pytest.mark.parametrize(
    "name",
    ["", "a b", "a;b", "a\\;b", "#{pane_id}", "#(touch /tmp/owned)", "x\ny", "é", "a'b", "x" * 129],
)
async def test_names_tmux_could_read_as_syntax_are_refused(
    memory_client: Client, tmux_socket: str, name: str
) -> None:
    for tool in ("signal_channel", "wait_for_channel"):
        error = await call_error(memory_client, tool, channel=name)
        assert "Invalid channel name" in error
    assert tmux(tmux_socket, "display-message", "-p", "ok").strip() == "ok"


async def test_schemux_own_channels_are_refused(memory_client: Client) -> None:
    for tool in ("signal_channel", "wait_for_channel"):
        error = await call_error(memory_client, tool, channel="schemux_d_0123abcd")
        assert "begins with 'schemux_'" in error


@pytest.mark.parametrize("name", ["-S", "--", "-L", "-U", ":.-_", "x" * 128])
async def test_valid_names_that_look_like_flags_stay_names(
    memory_client: Client, tmux_socket: str, name: str
) -> None:
    await call(memory_client, "signal_channel", channel=name)
    assert await kept(tmux_socket, name)  # -S and -L were not read as flags
    tmux(tmux_socket, "wait-for", "-S", "--", name)
    await call(memory_client, "wait_for_channel", channel=name, timeout=5)
    assert await none_kept(tmux_socket, name)


async def test_a_second_signal_with_nobody_waiting_clears_the_first(
    memory_client: Client, tmux_socket: str
) -> None:
    name = channel()
    await call(memory_client, "signal_channel", channel=name)
    await call(memory_client, "signal_channel", channel=name)
    error = await call_error(memory_client, "wait_for_channel", channel=name, timeout=0.3)
    assert "was not signalled" in error
