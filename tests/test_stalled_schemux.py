"""A schemux stopped while a run_command call's command ends (SIGSTOP for longer than any
former hold: a laptop asleep, a swapping machine, a debugger) still returns the command's
exact output and status once it goes on (issue 32, item 1): in the agent's pane, whose
hooks hold the shell as long as schemux lives, and in a pane schemux did not make, whose
wrapper holds it as long as schemux's control client lives."""

from __future__ import annotations

import os
import signal
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

import anyio
import pytest
from mcp import Client

from tests.conftest import stdio_parameters
from tests.process_table import processes
from tests.support import Pane, call, new_pane, remove_server, tagged_socket_name, tmux

pytestmark = pytest.mark.anyio

# longer than the hooks' former give-up (5 to 7 s) and the wrapper's former hold (5 s)
STOPPED_SECONDS = 8


@dataclass
class Served:
    client: Client
    pid: int
    socket_name: str


def serve_pid(socket_name: str) -> int:
    """The ``schemux serve`` process serving ``socket_name``."""
    (pid,) = [
        process.pid
        for process in processes()
        if b"serve" in process.argv and socket_name.encode() in process.argv
    ]
    return pid


@pytest.fixture
def socket_name() -> Iterator[str]:
    name = tagged_socket_name("stalled")
    yield name
    remove_server(name)


@pytest.fixture
async def served(anyio_backend: str, socket_name: str) -> AsyncIterator[Served]:
    async with Client(stdio_parameters("--socket-name", socket_name)) as client:
        await call(client, "run_command", command="true")  # the server and agent pane made
        yield Served(client, serve_pid(socket_name), socket_name)


async def stopped_while(
    served: Served, calls: list[dict[str, str]], pid: int | None = None, seconds: float = 0
) -> list[dict[str, object]]:
    """The calls' results (run at once), process ``pid`` (schemux's by default) stopped
    from 0.5 s after they began for ``seconds`` (STOPPED_SECONDS by default)."""
    pid = pid or served.pid
    outcome: dict[int, dict[str, object]] = {}

    async def calling(index: int) -> None:
        outcome[index] = await call(served.client, "run_command", **calls[index])

    async with anyio.create_task_group() as group:
        for index in range(len(calls)):
            group.start_soon(calling, index)
        await anyio.sleep(0.5)
        os.kill(pid, signal.SIGSTOP)
        try:
            await anyio.sleep(seconds or STOPPED_SECONDS)
        finally:
            os.kill(pid, signal.SIGCONT)
    return [outcome[index] for index in range(len(calls))]


@pytest.mark.long
async def test_the_agent_s_pane_and_a_pane_schemux_did_not_make(served: Served) -> None:
    """A call in each, through the same stopped seconds."""
    pane: Pane = new_pane(served.socket_name)
    command = "sleep 1; echo done; false"
    in_agent, in_pane = await stopped_while(
        served, [{"command": command}, {"command": command, "pane_id": pane.pane_id}]
    )
    await exact_then_clean(served, pane, in_agent, in_pane)


async def test_a_tmux_server_stopped_past_the_terminal_s_answer(served: Served) -> None:
    """tmux stopped while the command ends (its status query unanswered past the 2 s a
    barrier waited): the barrier waits for the answer, so it is never left to come later
    into the shell's input, where it was typed at the prompt (``-bash: n: command not
    found`` before the next command's output)."""
    pane: Pane = new_pane(served.socket_name)
    server = int(tmux(served.socket_name, "display-message", "-p", "#{pid}"))
    command = "sleep 1; echo done; false"
    in_agent, in_pane = await stopped_while(
        served,
        [{"command": command}, {"command": command, "pane_id": pane.pane_id}],
        server,
        seconds=3.5,
    )
    await exact_then_clean(served, pane, in_agent, in_pane)


async def exact_then_clean(
    served: Served, pane: Pane, in_agent: dict[str, object], in_pane: dict[str, object]
) -> None:
    """Both calls got their command's exact output and status, and the next command in
    each pane runs alone (nothing left in its input)."""
    assert (in_agent["output"], in_agent["exit_status"]) == (["done"], 1)
    assert (in_pane["output"], in_pane["exit_status"]) == (["done"], 1)
    after = await call(served.client, "run_command", command="echo next")
    assert (after["output"], after["exit_status"]) == (["next"], 0)
    after = await call(served.client, "run_command", command="echo next", pane_id=pane.pane_id)
    assert (after["output"], after["exit_status"]) == (["next"], 0)
