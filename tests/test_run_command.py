"""run_command's behaviour against real tmux, through the in-memory MCP client.

Covers what the contract examples cannot show: history that tmux dropped during the
command, what a timed-out or cancelled call leaves behind, the shell's history, input
the shell never finished reading, and panes that keys would not reach.

A test of ``transport_client`` runs twice: on this machine, and over ssh (``tests.ssh_server``).
"""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import signal
import subprocess
from typing import Any

import anyio
import pytest
from mcp import Client

from schemux.config import Settings
from schemux.generated.bindings import BINDINGS
from schemux.generated.models.run_command import RunCommandOutput
from schemux.serving.state import ServingState
from schemux.tmux.control.engine import ControlEngine
from schemux.tmux.server import TmuxServer
from tests.contexts import client_of
from tests.process_table import children
from tests.support import (
    SHELL_ENVIRONMENT,
    Pane,
    call,
    call_error,
    call_model,
    control_client_pid,
    new_pane,
    pane_format,
    private_tmux_server,
    run,
    shell_holds_terminal,
    tmux,
    until,
    wait_for_shell,
    wait_until,
)

pytestmark = pytest.mark.anyio


async def run_error(client: Client, **arguments: Any) -> str:
    return await call_error(client, "run_command", **arguments)


def private_options(pane: Pane) -> list[str]:
    options = tmux(pane.socket_name, "show-options", "-p", "-t", pane.pane_id)
    return [line for line in options.splitlines() if "schemux" in line]


@pytest.fixture
def known_token(monkeypatch: pytest.MonkeyPatch) -> str:
    """The private token of the next calls, so their channels can be looked at."""
    token = "0123456789ab"
    monkeypatch.setattr("schemux.shell.wrapper.secrets.token_hex", lambda _: token)
    return token


def channels_left_signalled(socket_name: str, token: str) -> list[str]:
    """The call's channels that tmux still remembers as signalled: tmux keeps a
    ``wait-for -S`` on a channel nobody waits on, and a later ``wait-for`` on it returns
    at once instead of waiting."""
    left = []
    for channel in (f"schemux_d_{token}", f"schemux_r_{token}"):
        try:
            tmux_wait = ["tmux", "-L", socket_name, "wait-for", channel]
            subprocess.run(tmux_wait, timeout=0.3, check=False)
            left.append(channel)
        except subprocess.TimeoutExpired:
            pass
    return left


class Waits:
    """How many ``wait-for`` waits of the engine are in progress (``counted_waits``)."""

    in_progress = 0


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> Waits:
    """Counts the engine's waits in progress: a wait still in progress after its call
    ended is a client left blocked inside tmux."""
    waits = Waits()
    wait = ControlEngine.wait

    async def counted(
        engine: ControlEngine,
        channel: str,
        sent: asyncio.Event | None = None,
        starter: object = None,
    ) -> None:
        waits.in_progress += 1
        try:
            await wait(engine, channel, sent, starter)
        finally:
            waits.in_progress -= 1

    monkeypatch.setattr(ControlEngine, "wait", counted)
    return waits


def still_settling(pane: Pane, waits: Waits) -> list[str]:
    """What a call's clean-up has still to remove: its options, its engine's waits."""
    left = [f"pane option {line!r}" for line in private_options(pane)]
    server_options = tmux(pane.socket_name, "show-options", "-s")
    left += [f"server option {line!r}" for line in server_options.splitlines() if "schemux" in line]
    if waits.in_progress:
        left.append(f"{waits.in_progress} wait(s) in progress")
    return left


def signalled_channels(pane: Pane, token: str) -> list[str]:
    """The call's channels left signalled, looked at once: a look is a ``wait-for`` of
    its own, which takes the signal it finds (a second look would see nothing)."""
    return [
        f"signalled channel {channel}"
        for channel in channels_left_signalled(pane.socket_name, token)
    ]


def left_behind(pane: Pane, token: str, waits: Waits) -> list[str]:
    """What a finished call left in tmux or in the engine: empty when it left nothing.
    The channels are looked at only once nothing is settling: no wait of the engine's in
    progress (a look would take a signal meant for its waiter), no option of the call
    (the disarm that removes them is what signals)."""
    return still_settling(pane, waits) or signalled_channels(pane, token)


def nothing_left_behind(pane: Pane, token: str, waits: Waits) -> bool:
    return left_behind(pane, token, waits) == []


async def left_behind_once_settled(
    pane: Pane, token: str, waits: Waits, deadline: float = 15
) -> list[str]:
    """What is still left once clean-up had ``deadline`` seconds: the checks run off the
    loop, so the in-memory server keeps serving its clean-up while they run; the
    channels are looked at once, when nothing is settling any more."""
    left = ["nothing checked in time"]
    with anyio.move_on_after(deadline):
        while left := await anyio.to_thread.run_sync(still_settling, pane, waits):  # noqa: ASYNC110
            await anyio.sleep(0.05)
        return await anyio.to_thread.run_sync(signalled_channels, pane, token)
    return left


def pane_with_history_limit(socket_name: str, limit: int) -> Pane:
    """history-limit applies to panes created after it is set: set it, then split."""
    first = new_pane(socket_name)
    tmux(socket_name, "set-option", "-t", first.session_id, "history-limit", str(limit))
    pane_id = tmux(
        socket_name, "split-window", "-d", "-t", first.pane_id, "-P", "-F", "#{pane_id}",
        *[f"-e{key}={value}" for key, value in SHELL_ENVIRONMENT.items()],
        "bash --norc --noprofile",
    ).strip()  # fmt: skip
    tmux(socket_name, "kill-pane", "-t", first.pane_id)
    pane = Pane(socket_name, pane_id, first.window_id, first.session_id, first.session_name)
    wait_for_shell(pane)
    return pane


async def test_output_is_exact_when_history_is_collected_but_the_start_survives(
    transport_client: Client, transport_socket: str
) -> None:
    pane = pane_with_history_limit(transport_socket, 100)
    await run(transport_client, command="seq 1 95", pane_id=pane.pane_id)  # history nearly full
    result = await call_model(
        transport_client, RunCommandOutput, command="seq 1 40", pane_id=pane.pane_id
    )
    assert result.output == [str(n) for n in range(1, 41)]
    assert result.output_truncated is False


async def test_a_head_lost_to_history_limit_is_reported(
    transport_client: Client, transport_socket: str
) -> None:
    pane = pane_with_history_limit(transport_socket, 50)
    result = await run(transport_client, command="seq 1 500", pane_id=pane.pane_id)
    output = result["output"]
    assert output[-1] == "500"
    assert output == [str(n) for n in range(501 - len(output), 501)]  # a clean tail
    assert 50 <= len(output) < 500
    assert result["output_truncated"] is True


async def test_trailing_spaces_blank_lines_and_wrapped_lines(
    transport_client: Client, transport_socket: str
) -> None:
    pane = new_pane(transport_socket, width=80)
    result = await call_model(
        transport_client,
        RunCommandOutput,
        command="printf 'a\\n\\nb  \\n%0250d\\n' 0",
        pane_id=pane.pane_id,
    )
    assert result.output == ["a", "", "b  ", "0" * 250]


async def test_timeout_leaves_nothing_behind(
    transport_client: Client, transport_socket: str, known_token: str, waits: Waits
) -> None:
    pane = new_pane(transport_socket)
    result = await run(
        transport_client, command="echo started; sleep 1.5; echo late", pane_id=pane.pane_id,
        timeout=0.4,
    )  # fmt: skip
    assert result["timed_out"] is True
    assert result["exit_status"] is None
    assert result["output"] == ["started"]
    assert nothing_left_behind(pane, known_token, waits)
    # the command finishes later: its wrapper must then do nothing at all
    wait_until(lambda: shell_holds_terminal(pane), timeout=5)
    assert nothing_left_behind(pane, known_token, waits)
    after = await run(transport_client, command="echo next", pane_id=pane.pane_id)
    assert after["output"] == ["next"]
    assert nothing_left_behind(pane, known_token, waits)


async def takes_the_next_call(client: Client, pane: Pane, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pane's shell is back at its prompt and runs the next call as ever (with what
    the test patched undone: the next call has a token of its own, as every call has).
    The wait runs off the loop, so the in-memory server keeps serving a clean-up still
    on its way."""
    await anyio.to_thread.run_sync(lambda: wait_until(lambda: shell_holds_terminal(pane), 5))
    monkeypatch.undo()
    after = await run(client, command="echo next", pane_id=pane.pane_id)
    assert after["output"] == ["next"]


async def test_cancelled_call_leaves_nothing_behind(
    transport_client: Client,
    transport_socket: str,
    known_token: str,
    waits: Waits,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pane = new_pane(transport_socket)
    with anyio.move_on_after(0.4) as scope:
        await transport_client.call_tool(
            "run_command", {"command": "sleep 1", "pane_id": pane.pane_id, "timeout": 10}
        )
    assert scope.cancelled_caught
    # the cancellation reaches the server as a notification, a moment later, and its
    # clean-up takes round trips (when the command had reported, the option goes with
    # the disarm, the hold flag a round trip later with the release): wait for all of it
    assert await left_behind_once_settled(pane, known_token, waits) == []
    # the next call with a token of its own: with the known token its option had the
    # cancelled call's name, and that call's disarm, still on its way over ssh, removed
    # it, so its wrapper reported nothing (30 s, "still reading input")
    await takes_the_next_call(transport_client, pane, monkeypatch)


async def cancel_while_typing(
    client: Client,
    pane: Pane,
    monkeypatch: pytest.MonkeyPatch,
    *,
    held: bool,
    command: str = "sleep 1",
    reported_first: bool = False,
) -> None:
    """Call run_command in ``pane`` and cancel the call while its keys are on their way:
    they are typed half a second after the cancellation, and the clean-up can interrupt
    the moment they are answered. Returns once they were (with ``held``, and the shell
    resumed).

    ``held``: the shell is held in the middle of the typed line. Its terminal's output is
    stopped (C-s, as a person's scroll lock would) before the keys come, so a shell that
    leaves the terminal's flow control on (bash, zsh) blocks echoing the first key, and
    resumed (C-q) half a second after the keys were answered: a clean-up that interrupts
    at once interrupts the shell mid-line.

    ``reported_first``: the clean-up's disarm waits until the wrapper has reported (a
    command that ends before the clean-up looks)."""
    typing = asyncio.Event()
    typed: list[asyncio.Task[list[str]]] = []
    tmux_run = TmuxServer.run

    async def resume(server: TmuxServer) -> list[str]:
        if not held:
            return []
        await asyncio.sleep(0.5)
        return await tmux_run(server, "send-keys", "-t", pane.pane_id, "C-q")

    async def slow_typing(server: TmuxServer, *args: str) -> list[str]:
        if reported_first and typed and args[0] == "display-message" and "if-shell" in args:
            # the clean-up's disarm (not the release of the call's claim after it)
            with anyio.fail_after(5):  # its first command reads the wrapper's option
                while not (await tmux_run(server, *args[:5]))[0].startswith("E"):  # noqa: ASYNC110
                    await asyncio.sleep(0.01)
        if "send-keys" not in args or typing.is_set():
            return await tmux_run(server, *args)
        typing.set()
        await asyncio.sleep(0.5)  # the keys still on their way when the call is cancelled
        if held:
            await tmux_run(server, "send-keys", "-t", pane.pane_id, "C-s")
        answer = await tmux_run(server, *args)
        if held:
            await asyncio.sleep(0.2)  # the shell takes the first key, and blocks echoing it
        typed.append(asyncio.create_task(resume(server)))
        return answer

    monkeypatch.setattr(TmuxServer, "run", slow_typing)
    async with anyio.create_task_group() as group:

        async def cancel_once_typing() -> None:
            await typing.wait()
            group.cancel_scope.cancel()

        group.start_soon(cancel_once_typing)
        await client.call_tool(
            "run_command", {"command": command, "pane_id": pane.pane_id, "timeout": 10}
        )
    with anyio.fail_after(10):
        while not typed:  # noqa: ASYNC110 - the keys answered, the wrapper armed
            await anyio.sleep(0.01)
    await typed[0]


@pytest.mark.parametrize(
    ("command", "reported_first"), [("sleep 1", False), ("true", True)], ids=["runs", "reported"]
)
async def test_a_call_cancelled_while_its_keys_are_on_their_way_leaves_nothing_behind(
    transport_client: Client,
    transport_socket: str,
    known_token: str,
    waits: Waits,
    monkeypatch: pytest.MonkeyPatch,
    command: str,
    reported_first: bool,
) -> None:
    """Cancelled before any waiter waits on the call's channel: nothing may stay signalled
    on it (tmux keeps a signal for a waiter that never comes), neither the clean-up's own
    nor the wrapper's report, when the command ended before the clean-up looked.

    Cancelled while its shell is still taking in the typed lines: the interrupt must wait
    for the shell to have read them. A C-c acts the moment it reaches the terminal (a
    SIGINT, and the input not yet read is discarded); bash's line editor caught busy in a
    line takes the signal without leaving the line, and sits in it with no prompt (the
    next call found "the cursor's row is empty", or "still reading input" where it was
    caught between two of the wrapper's lines). bash is held mid-line here
    (``cancel_while_typing``): the race, about one run in three, every time."""
    pane = new_pane(transport_socket)
    await cancel_while_typing(
        transport_client,
        pane,
        monkeypatch,
        held=True,
        command=command,
        reported_first=reported_first,
    )
    assert await left_behind_once_settled(pane, known_token, waits) == []
    await takes_the_next_call(transport_client, pane, monkeypatch)


async def test_a_cancelled_call_whose_waiter_is_never_woken_still_ends(
    transport_client: Client, transport_socket: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The clean-up of a cancelled call waits for its waiter a bounded while: a waiter
    whose signal went elsewhere (another client waiting on the channel woke instead, its
    own ``wait-for`` arriving after the signal was taken) is ended, not waited for."""
    pane = new_pane(transport_socket)
    lost = Waits()

    async def never_woken(
        engine: ControlEngine, channel: str, sent: object = None, starter: object = None
    ) -> None:
        lost.in_progress += 1
        try:
            await asyncio.Event().wait()
        finally:
            lost.in_progress -= 1

    monkeypatch.setattr(ControlEngine, "wait", never_woken)
    with anyio.move_on_after(0.4) as scope:
        await transport_client.call_tool(
            "run_command", {"command": "sleep 1", "pane_id": pane.pane_id, "timeout": 10}
        )
    assert scope.cancelled_caught
    with anyio.fail_after(10):
        while lost.in_progress or private_options(pane):  # noqa: ASYNC110
            await anyio.sleep(0.05)
    await takes_the_next_call(transport_client, pane, monkeypatch)


async def test_unfinished_input_is_cancelled_and_explained(
    transport_client: Client, transport_socket: str
) -> None:
    pane = new_pane(transport_socket)
    message = await run_error(
        transport_client, command="echo 'unclosed", pane_id=pane.pane_id, timeout=0.5
    )
    assert "still reading input" in message
    assert private_options(pane) == []
    result = await run(transport_client, command="echo fine", pane_id=pane.pane_id)
    assert result["output"] == ["fine"]


async def test_suppress_history(transport_client: Client, transport_socket: str) -> None:
    pane = new_pane(transport_socket)
    await run(transport_client, command="echo hidden-one", pane_id=pane.pane_id)
    await run(
        transport_client, command="echo shown-two", pane_id=pane.pane_id, suppress_history=False
    )
    result = await run(transport_client, command="history", pane_id=pane.pane_id)
    history = "\n".join(result["output"])
    assert "shown-two" in history
    assert "hidden-one" not in history


async def test_copy_mode_is_refused_without_typing(
    transport_client: Client, transport_socket: str
) -> None:
    pane = new_pane(transport_socket)
    tmux(transport_socket, "copy-mode", "-t", pane.pane_id)
    message = await run_error(transport_client, command="echo x", pane_id=pane.pane_id)
    assert "copy mode" in message
    assert pane_format(pane, "#{pane_in_mode}") == "1"
    assert private_options(pane) == []
    # the suggested command reaches this server (its socket), not the default one
    await anyio.run_process(suggested_command(message))
    assert pane_format(pane, "#{pane_in_mode}") == "0"


async def test_a_missing_pane_s_suggestion_lists_this_server_s_panes(
    transport_client: Client, transport_socket: str
) -> None:
    """The suggestion once said `tmux list-panes -a`, which in a person's terminal lists
    another tmux server's panes."""
    pane = new_pane(transport_socket)
    message = await run_error(transport_client, command="true", pane_id="%999999")
    listed = await anyio.run_process(suggested_command(message))
    assert pane.pane_id in listed.stdout.decode().split()


def suggested_command(message: str) -> list[str]:
    """The argv of the command an error's suggestion gives in backquotes, which names its
    server's socket (checked before it runs: it must never reach the default server)."""
    (command,) = re.findall(r"`(tmux [^`]*)`", message)
    argv = shlex.split(command)
    assert argv[1] in ("-S", "-L"), command
    return argv


async def test_state_changes_stay_in_the_subshell(
    transport_client: Client, transport_socket: str
) -> None:
    pane = new_pane(transport_socket)
    start = pane_format(pane, "#{pane_current_path}")
    await run(transport_client, command="cd /; export SCHEMUX_PROBE=1", pane_id=pane.pane_id)
    result = await run(
        transport_client, command='echo "$PWD ${SCHEMUX_PROBE:-unset}"', pane_id=pane.pane_id
    )
    assert result["output"] == [f"{start} unset"]


async def test_a_pane_closed_during_the_command(
    transport_client: Client, transport_socket: str
) -> None:
    pane = new_pane(transport_socket)

    async def close_pane() -> None:
        # once the command runs (over ssh the call takes longer to get there)
        with anyio.fail_after(10):
            while pane_format(pane, "#{pane_current_command}") != "sleep":  # noqa: ASYNC110
                await anyio.sleep(0.02)
        await anyio.run_process(["tmux", "-L", transport_socket, "kill-pane", "-t", pane.pane_id])

    async with anyio.create_task_group() as group:
        group.start_soon(close_pane)
        message = await run_error(
            transport_client, command="sleep 5", pane_id=pane.pane_id, timeout=1
        )
    assert f"pane {pane.pane_id} was closed" in message


async def test_a_closed_pane_is_reported_when_tmux_says_so(
    transport_client: Client, transport_socket: str
) -> None:
    """Not at the call's timeout (issue 18, item 7)."""
    pane = new_pane(transport_socket)

    async def close_pane() -> None:
        with anyio.fail_after(10):
            while pane_format(pane, "#{pane_current_command}") != "sleep":  # noqa: ASYNC110
                await anyio.sleep(0.02)
        tmux(transport_socket, "kill-pane", "-t", pane.pane_id)

    async with anyio.create_task_group() as group:
        group.start_soon(close_pane)
        started = anyio.current_time()
        message = await run_error(transport_client, command="sleep 60", pane_id=pane.pane_id)
    assert f"pane {pane.pane_id} was closed" in message
    assert anyio.current_time() - started < 15


async def test_a_signal_taken_by_another_waiter_does_not_hold_the_call(
    transport_client: Client,
    transport_socket: str,
    known_token: str,
    waits: Waits,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A client left waiting on the call's channel (a cancelled waiter whose client has not
    gone yet) takes the wrapper's signal: the call still ends at once, with its output,
    and the next one runs (issue 18, item 11: it waited forever). The next call has a
    token of its own, as every call has: with the first one's, its signal could wake the
    first call's own wait, still blocked on that channel, before its wait was there."""
    pane = new_pane(transport_socket)
    channel = f"schemux_d_{known_token}"
    stale = await anyio.open_process(["tmux", "-L", transport_socket, "wait-for", channel])
    try:
        with anyio.fail_after(10):
            result = await run(transport_client, command="echo taken", pane_id=pane.pane_id)
        assert result["output"] == ["taken"]
        with anyio.fail_after(5):
            assert await stale.wait() == 0  # it was the one woken
        monkeypatch.setattr("schemux.shell.wrapper.secrets.token_hex", lambda _: "fedcba987654")
        with anyio.fail_after(10):
            after = await run(transport_client, command="echo next", pane_id=pane.pane_id)
        assert after["output"] == ["next"]
        assert nothing_left_behind(pane, known_token, waits)
    finally:
        if stale.returncode is None:
            stale.kill()
        await stale.aclose()


async def test_a_tmux_server_killed_mid_command_fails_the_call_at_once() -> None:
    with private_tmux_server("doomed") as socket_name:
        pane = new_pane(socket_name)
        context = ServingState(Settings(socket_name=socket_name))
        async with client_of(context, BINDINGS) as client:

            async def kill_server() -> None:
                # once the command runs (a fixed pause, on a loaded machine, killed the
                # server before the call began: it then started one of its own)
                await until(lambda: pane_format(pane, "#{pane_current_command}") == "sleep")
                await anyio.run_process(["tmux", "-L", socket_name, "kill-server"])

            async with anyio.create_task_group() as group:
                group.start_soon(kill_server)
                started = anyio.current_time()
                message = await run_error(
                    client, command="sleep 30", pane_id=pane.pane_id, timeout=20
                )
            # at once: well before the call's 20 s timeout could have ended it
            assert anyio.current_time() - started < 10
        await context.close()
    assert "tmux server" in message


async def test_two_calls_at_once_on_one_pane_never_type_into_each_other(
    transport_client: Client, transport_socket: str
) -> None:
    """Each call either runs alone (the second waits for the first) or is refused as busy:
    neither finds the shell idle while the other's command is being typed."""
    pane = new_pane(transport_socket)

    async def one(word: str, outcomes: dict[str, Any]) -> None:
        try:
            outcomes[word] = await run(
                transport_client, command=f"sleep 0.2; echo {word}", pane_id=pane.pane_id
            )
        except AssertionError as refused:
            outcomes[word] = str(refused)

    for _ in range(5):
        outcomes: dict[str, Any] = {}
        async with anyio.create_task_group() as group:
            group.start_soon(one, "first", outcomes)
            group.start_soon(one, "second", outcomes)
        for word, outcome in outcomes.items():
            if isinstance(outcome, dict):
                assert outcome["output"] == [word], outcomes
            else:
                assert "busy" in outcome or "running" in outcome, outcomes
        assert any(isinstance(outcome, dict) for outcome in outcomes.values()), outcomes


async def test_a_waiter_whose_client_dies_fails_the_call_with_that_not_a_false_report(
    memory_client: Client, tool_context: ServingState, main_tmux_socket: str
) -> None:
    """The waiters' control clients end while the command runs (as when an ssh connection
    drops under them: ``test_ssh``'s dropped connection): the waiter's end is the call's error,
    at once, not taken for the wrapper's report (which then read "reported ..., not an
    end"). On this machine only: tmux gives the clients' pids as their own namespace
    sees them."""
    pane = new_pane(main_tmux_socket)
    wait_for_shell(pane)
    await call(memory_client, "run_command", command="true", pane_id=pane.pane_id)
    shared = str(await control_client_pid(tool_context.services.tmux()))

    async def kill_the_control_clients() -> None:
        await anyio.sleep(0.5)
        pids = tmux(main_tmux_socket, "list-clients", "-t", "=_schemux", "-F", "#{client_pid}")
        ours = {str(child.pid) for child in children(os.getpid())}  # not another test's
        for pid in set(pids.split()) & ours - {shared}:  # the spares, one the waiter's
            os.kill(int(pid), signal.SIGKILL)

    async with anyio.create_task_group() as group:
        group.start_soon(kill_the_control_clients)
        with anyio.fail_after(10):
            error = await call_error(
                memory_client, "run_command", command="sleep 30", pane_id=pane.pane_id
            )
    assert "not an end" not in error
    assert "control client" in error or "connection" in error, error
