"""One pane, one caller, whatever names reach it (issue 32): a run_command call claims
its pane in tmux (``schemux.panes.claims``), so a second call into the same pane is refused
as busy whether it comes by another host name for the same tmux server, from another
ServingState or from another schemux process; a claim whose owner died keeps no pane busy;
a call's claim is gone however the call ends. Real tmux, real shells, real MCP clients."""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client

from schemux.hooks import PENDING, integrated_command
from schemux.host_settings import FleetSettings, NamedHost, SshTarget
from schemux.panes.claims import BUSY_OPTION, unclaiming
from schemux.serving.state import ServingState
from schemux.shell.abandoned import reap_abandoned
from schemux.system.processes import Owner, machine_tag, read_start_ticks, this_process
from tests.contexts import Contexts, client_of
from tests.support import (
    Pane,
    new_pane,
    pane_format,
    screen,
    shell_holds_terminal,
    tmux,
    until,
    wait_until,
)

pytestmark = pytest.mark.anyio

Caller = tuple[Client, dict[str, Any]]

# values a person (or a program in a pane) may have put in the claim's option: none is a
# claim schemux can read, so each keeps the pane busy until it is unset, and none runs
HOSTILE_CLAIMS = [
    "'; kill-server; '", "#{pane_id}", "#(touch /tmp/schemux-claim-pwned)", "$(id)",
    "A 1 2", "1-2-0123456789abcdef 0123456789ab;kill-server", '"', "} ,#{", "%1",
    "1-2-0123456789abcdef 0123456789ab x", "x" * 5000, "x\ny",
]  # fmt: skip


def claim(pane: Pane) -> str:
    return pane_format(pane, f"#{{{BUSY_OPTION}}}")


def set_claim(pane: Pane, value: str) -> None:
    tmux(pane.socket_name, "set-option", "-p", "-t", pane.pane_id, BUSY_OPTION, value)


def hooked_bash_pane(socket_name: str, home: Path) -> Pane:
    """A pane running bash with schemux's hooks, at its first prompt."""
    bash, tmux_binary = shutil.which("bash"), shutil.which("tmux")
    assert bash is not None
    assert tmux_binary is not None
    home.mkdir()
    argv = integrated_command(bash, tmux_binary, {**os.environ, "HOME": str(home)}, login=False)
    assert argv is not None
    name = f"h{uuid.uuid4().hex[:8]}"
    made = tmux(
        socket_name, "new-session", "-d", "-s", name, "-x", "100", "-y", "30",
        "-e", f"HOME={home}", "-e", "LANG=C.UTF-8", "-e", "HISTFILE=/dev/null",
        "-P", "-F", "#{pane_id} #{window_id} #{session_id}", "--", *argv,
    )  # fmt: skip
    pane_id, window_id, session_id = made.split()
    pane = Pane(socket_name, pane_id, window_id, session_id, name)
    tmux(socket_name, "set-option", "-p", "-t", pane_id, PENDING, "bash")
    wait_until(lambda: pane_format(pane, "#{@schemux_shell}").startswith("bash"), 15)
    return pane


@pytest.fixture(params=["typed wrapper", "hooked shell"])
def pane(request: pytest.FixtureRequest, main_tmux_socket: str, tmp_path: Path) -> Pane:
    """A bash pane without schemux's hooks (the typed wrapper), or with them."""
    if request.param == "typed wrapper":
        return new_pane(main_tmux_socket)
    return hooked_bash_pane(main_tmux_socket, tmp_path / "home")


@pytest.fixture(params=["two host names", "two contexts", "two processes"])
async def two_callers(
    request: pytest.FixtureRequest,
    make_context: Contexts,
    main_tmux_socket: str,
    stdio_client: Client,
) -> AsyncIterator[tuple[Caller, Caller]]:
    """Two callers of one tmux server: one schemux with two names for it (``--host
    a=local --host b=local``), two ServingStates, or this process and a ``schemux serve``."""
    if request.param == "two host names":
        hosts = FleetSettings((NamedHost("a"), NamedHost("b")))
        context = make_context(socket_name=main_tmux_socket, fleet=hosts)
        async with client_of(context) as client:
            yield (client, {"host": "a"}), (client, {"host": "b"})
    elif request.param == "two contexts":
        first = make_context(socket_name=main_tmux_socket)
        second = make_context(socket_name=main_tmux_socket)
        async with client_of(first) as one, client_of(second) as two:
            yield (one, {}), (two, {})
    else:  # the stdio one serves main_tmux_socket too
        async with client_of(make_context(socket_name=main_tmux_socket)) as client:
            yield (client, {}), (stdio_client, {})


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


async def test_two_callers_of_one_server_never_share_a_pane(
    two_callers: tuple[Caller, Caller], pane: Pane
) -> None:
    """Both call at once; each command waits on a channel of its own. Exactly one runs:
    the other is refused as busy at once (while the first still waits), nothing of it
    typed, and the one that ran returns exactly its own output. Before the claim, both
    typed into the shell (host b got host a's output, or wrapper text)."""
    channels = {index: f"ch-{uuid.uuid4().hex[:8]}" for index in (0, 1)}
    results: dict[int, types.CallToolResult] = {}

    async def one(index: int) -> None:
        client, extra = two_callers[index]
        command = f"tmux wait-for {channels[index]}; echo from-{index}"
        arguments = {"command": command, "pane_id": pane.pane_id, "timeout": 30, **extra}
        results[index] = await client.call_tool("run_command", arguments)

    async with anyio.create_task_group() as group:
        group.start_soon(one, 0)
        group.start_soon(one, 1)
        await until(lambda: len(results) == 1, timeout=15)
        (refused,) = results
        ran = 1 - refused
        error = text_of(results[refused])
        assert results[refused].is_error, error
        assert "is busy: another run_command call is running in it" in error, error
        assert f"from-{refused}" not in screen(pane, history=True)
        assert claim(pane)  # the one that runs holds it
        tmux(pane.socket_name, "wait-for", "-S", channels[ran])
    assert not results[ran].is_error, text_of(results[ran])
    assert results[ran].structured_content is not None
    assert results[ran].structured_content["output"] == [f"from-{ran}"]
    assert results[ran].structured_content["exit_status"] == 0
    assert claim(pane) == ""


async def test_calls_racing_by_two_callers_never_cross(
    two_callers: tuple[Caller, Caller], pane: Pane
) -> None:
    """Quick commands at once, round after round: each call returns exactly its own
    output and status, or is refused (busy, or the other's command holds the shell).
    Before the claim, host b got host a's output with status 0, or wrapper text."""

    async def one(index: int, round_: int, results: dict[int, types.CallToolResult]) -> None:
        client, extra = two_callers[index]
        command = f"echo r{round_}-{index}; false || true"
        arguments = {"command": command, "pane_id": pane.pane_id, "timeout": 10, **extra}
        results[index] = await client.call_tool("run_command", arguments)

    for round_ in range(8):
        results: dict[int, types.CallToolResult] = {}
        async with anyio.create_task_group() as group:
            group.start_soon(one, 0, round_, results)
            group.start_soon(one, 1, round_, results)
        for index, result in results.items():
            if result.is_error:
                error = text_of(result)
                assert "is busy" in error or "not a shell at its prompt" in error, error
            else:
                assert result.structured_content is not None
                assert result.structured_content["output"] == [f"r{round_}-{index}"], results
                assert result.structured_content["exit_status"] == 0, results
        assert claim(pane) == ""


async def test_two_ssh_names_for_one_host_never_share_a_pane(
    make_context: Contexts, ssh_target: SshTarget, remote_tmux_socket: str
) -> None:
    """Over ssh no hooks are read, so the claim is taken with the typing: a call by one
    name while the other's runs is refused (busy, or its shell not at its prompt, as the
    checks before the typing find it), and quick calls at once never cross. (Not a
    before-and-after test: the race crossed 2 rounds in 6 before, not every time.)"""
    hosts = FleetSettings((NamedHost("a", ssh_target), NamedHost("b", ssh_target)))
    context = make_context(socket_name=remote_tmux_socket, wait_ceiling=60, fleet=hosts)
    pane = new_pane(remote_tmux_socket)
    channel = f"ch-{uuid.uuid4().hex[:8]}"
    results: dict[str, types.CallToolResult] = {}

    async def one(client: Client, host: str, command: str) -> None:
        arguments = {"command": command, "pane_id": pane.pane_id, "host": host}
        results[host] = await client.call_tool("run_command", arguments)

    async with client_of(context) as client:
        async with anyio.create_task_group() as group:
            group.start_soon(one, client, "a", f"tmux wait-for {channel}; echo held")
            await until(lambda: claim(pane) != "", timeout=20)
            await one(client, "b", "echo no")
            tmux(pane.socket_name, "wait-for", "-S", channel)
        assert refused_as_taken(results["b"])
        assert output_of(results["a"]) == ["held"]
        for round_ in range(6):
            results.clear()
            async with anyio.create_task_group() as group:
                group.start_soon(one, client, "a", f"echo r{round_}-a")
                group.start_soon(one, client, "b", f"echo r{round_}-b")
            for host, result in results.items():
                ran = output_of(result) == [f"r{round_}-{host}"]
                assert ran or refused_as_taken(result), results
    assert claim(pane) == ""


def refused_as_taken(result: types.CallToolResult) -> bool:
    """Refused for a pane another call has: by its claim, or by its command (which
    holds the shell) as the checks before the typing found it."""
    error = text_of(result)
    return result.is_error and ("is busy" in error or "not a shell at its prompt" in error)


def output_of(result: types.CallToolResult) -> list[str] | None:
    if result.is_error or result.structured_content is None:
        return None
    assert result.structured_content["exit_status"] == 0
    return list(result.structured_content["output"])


async def test_the_busy_error_names_another_schemux_process(
    stdio_client: Client, memory_client: Client, main_tmux_socket: str
) -> None:
    """Held by a ``schemux serve`` process, the pane is busy "of schemux process PID"."""
    pane = new_pane(main_tmux_socket)
    channel = f"ch-{uuid.uuid4().hex[:8]}"
    async with anyio.create_task_group() as group:
        arguments = {"command": f"tmux wait-for {channel}", "pane_id": pane.pane_id}
        group.start_soon(stdio_client.call_tool, "run_command", arguments)
        await until(lambda: claim(pane) != "")
        owner = Owner.from_identity(claim(pane).split(" ")[0])
        result = await memory_client.call_tool(
            "run_command", {"command": "echo no", "pane_id": pane.pane_id}
        )
        tmux(pane.socket_name, "wait-for", "-S", channel)
    assert owner is not None
    assert owner.pid != os.getpid()
    assert result.is_error
    assert (
        f"is busy: another run_command call is running in it (of schemux process "
        f"{owner.pid})" in text_of(result)
    )


def dead_owner_claim() -> str:
    """A claim of a process of this machine that has exited."""
    process = subprocess.Popen(["sleep", "60"])
    ticks = read_start_ticks(process.pid)
    process.kill()
    process.wait()
    return f"{Owner(process.pid, ticks, machine_tag()).tag} {secrets.token_hex(6)}"


def live_owner_claim(pid: int) -> str:
    return f"{Owner(pid, read_start_ticks(pid), machine_tag()).tag} {secrets.token_hex(6)}"


async def test_a_claim_left_by_a_dead_schemux_keeps_no_pane_busy(
    memory_client: Client, pane: Pane
) -> None:
    """A schemux killed mid-call leaves its claim: the next call takes it away and runs."""
    set_claim(pane, dead_owner_claim())
    result = await memory_client.call_tool(
        "run_command", {"command": "echo free", "pane_id": pane.pane_id}
    )
    assert not result.is_error, text_of(result)
    assert result.structured_content is not None
    assert result.structured_content["output"] == ["free"]
    assert claim(pane) == ""


@pytest.fixture
def live_process() -> Iterator[int]:
    """A process that runs through the test (standing in for another schemux)."""
    process = subprocess.Popen(["sleep", "60"])
    try:
        yield process.pid
    finally:
        process.kill()
        process.wait()


async def test_a_live_owners_claim_refuses_the_call_and_nothing_is_typed(
    memory_client: Client, main_tmux_socket: str, live_process: int
) -> None:
    """A claim of a process that runs is left alone: the call is refused at once and
    types nothing."""
    pane = new_pane(main_tmux_socket)
    value = live_owner_claim(live_process)
    set_claim(pane, value)
    before = screen(pane, history=True)
    result = await memory_client.call_tool(
        "run_command", {"command": "echo typed", "pane_id": pane.pane_id}
    )
    assert result.is_error
    assert (
        f"is busy: another run_command call is running in it (of schemux process "
        f"{live_process})" in text_of(result)
    )
    assert "wait for that call to return" in text_of(result)
    assert screen(pane, history=True) == before
    assert claim(pane) == value


@pytest.mark.parametrize("value", HOSTILE_CLAIMS, ids=range(len(HOSTILE_CLAIMS)))
async def test_a_claim_schemux_cannot_read_keeps_the_pane_busy_and_runs_nothing(
    memory_client: Client, main_tmux_socket: str, value: str
) -> None:
    """Whatever a person put in the option, it is never written into a command: the call
    is refused saying how to unset it, the value stays as it was, tmux lives on."""
    pane = new_pane(main_tmux_socket)
    set_claim(pane, value)
    shown = claim(pane)
    before = screen(pane, history=True)
    result = await memory_client.call_tool(
        "run_command", {"command": "echo typed", "pane_id": pane.pane_id}
    )
    error = text_of(result)
    assert result.is_error, error
    assert "holds no schemux process's claim" in error, error
    assert f"tmux set-option -p -u -t {pane.pane_id} {BUSY_OPTION}" in error
    assert screen(pane, history=True) == before
    assert claim(pane) == shown
    assert not os.path.exists("/tmp/schemux-claim-pwned")


async def test_the_reaper_takes_away_dead_owners_claims_only(
    tool_context: ServingState, main_tmux_socket: str
) -> None:
    """``reap_abandoned`` (a schemux's first use of a server) removes the claims whose
    owner is gone, and leaves a live owner's and a value that is no claim."""
    dead, live, other = (new_pane(main_tmux_socket) for _ in range(3))
    set_claim(dead, dead_owner_claim())
    set_claim(live, live_value := live_owner_claim(os.getpid()))
    set_claim(other, "not a claim")
    await reap_abandoned(tool_context.services.tmux())
    assert claim(dead) == ""
    assert claim(live) == live_value
    assert claim(other) == "not a claim"


SHOW_CLAIM = f"tmux show-options -p -v -t $TMUX_PANE {BUSY_OPTION}"


async def test_a_call_holds_its_claim_while_it_runs_and_releases_it_on_success(
    memory_client: Client, pane: Pane
) -> None:
    result = await memory_client.call_tool(
        "run_command", {"command": SHOW_CLAIM, "pane_id": pane.pane_id}
    )
    assert not result.is_error, text_of(result)
    assert result.structured_content is not None
    (value,) = result.structured_content["output"]
    assert Owner.from_identity(value.split(" ")[0]) == this_process()
    assert claim(pane) == ""


async def test_a_call_that_fails_releases_its_claim(
    memory_client: Client, main_tmux_socket: str
) -> None:
    """An unclosed quote: the shell never starts the command, and the call fails at its
    timeout (C-c sent). The claim was held meanwhile, and is gone with the call."""
    pane = new_pane(main_tmux_socket)
    held: list[str] = []

    async def watch() -> None:
        await until(lambda: claim(pane) != "")
        held.append(claim(pane))

    async with anyio.create_task_group() as group:
        group.start_soon(watch)
        result = await memory_client.call_tool(
            "run_command", {"command": "echo 'unclosed", "pane_id": pane.pane_id, "timeout": 1}
        )
    assert result.is_error
    assert "did not start the command" in text_of(result)
    assert held
    assert Owner.from_identity(held[0].split(" ")[0]) == this_process()
    assert claim(pane) == ""


async def test_a_call_that_times_out_releases_its_claim_as_it_returns(
    memory_client: Client, pane: Pane
) -> None:
    """Its command still runs (as before: a timeout leaves it running), and the pane is
    not claimed: a next call finds a shell that is not at its prompt, not a busy pane."""
    result = await memory_client.call_tool(
        "run_command",
        {"command": f"{SHOW_CLAIM}; sleep 30", "pane_id": pane.pane_id, "timeout": 1},
    )
    assert not result.is_error, text_of(result)
    assert result.structured_content is not None
    assert result.structured_content["timed_out"] is True
    assert result.structured_content["output"][0].startswith(this_process().tag)
    assert claim(pane) == ""
    again = await memory_client.call_tool(
        "run_command", {"command": "echo next", "pane_id": pane.pane_id}
    )
    assert again.is_error
    assert "is busy" not in text_of(again)
    tmux(pane.socket_name, "send-keys", "-t", pane.pane_id, "C-c")


async def test_a_cancelled_call_releases_its_claim_after_its_cleanup(
    memory_client: Client, pane: Pane
) -> None:
    async with anyio.create_task_group() as group:
        arguments = {"command": "sleep 30", "pane_id": pane.pane_id}
        group.start_soon(memory_client.call_tool, "run_command", arguments)
        await until(lambda: claim(pane) != "" and not shell_holds_terminal(pane))
        group.cancel_scope.cancel()
    await until(lambda: claim(pane) == "")
    result = await memory_client.call_tool(
        "run_command", {"command": "echo after", "pane_id": pane.pane_id}
    )
    assert not result.is_error, text_of(result)
    assert result.structured_content is not None
    assert result.structured_content["output"] == ["after"]


CLAIM = "1-2-0123456789abcdef 0123456789ab"  # a claim's shape (its owner's tag, a token)


@pytest.mark.parametrize(
    ("pane_id", "value"),
    [
        ("%1;kill-server", CLAIM),
        ("%1 ", CLAIM),
        ("1", CLAIM),
        ("%1", f"{CLAIM};kill-server"),
        ("%1", f"{CLAIM}}}"),
        ("%1", f"{CLAIM}\n"),
        ("%1", "#{pane_id} 0123456789ab"),
        ("%1", ""),
    ],
)
def test_a_claim_is_released_only_by_a_command_of_checked_words(pane_id: str, value: str) -> None:
    with pytest.raises(ValueError, match="not a pane id and a claim's value"):
        unclaiming(pane_id, value)
    assert unclaiming("%1", CLAIM)[-1] == f"set-option -p -u -t %1 {BUSY_OPTION}"
