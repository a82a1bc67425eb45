"""run_command's output is exactly the command's, or the result says it is not.

Each case once made it return other lines (prompt rows, an earlier command's output, or
a cut at a token the command printed itself).

A test of ``transport_client`` runs twice: on this machine, and over ssh (``tests.ssh_server``).
"""

from __future__ import annotations

import pytest
from mcp import Client

from tests.support import call_error, new_pane, run, tmux, until
from tests.test_run_command import pane_with_history_limit

pytestmark = pytest.mark.anyio


@pytest.fixture
def transport_client(shared_transport_client: Client) -> Client:
    """The module's calls start no program: its tests share a context a transport."""
    return shared_transport_client


async def test_the_token_printed_by_the_command_does_not_cut_its_output(
    transport_client: Client, transport_socket: str
) -> None:
    pane = new_pane(transport_socket)
    result = await run(
        transport_client, pane.pane_id, "echo A; history 1; echo B", suppress_history=False
    )
    assert result["output"][0] == "A"
    assert result["output"][-1] == "B"
    assert result["output_truncated"] is False


async def test_echo_off_is_never_taken_for_output(
    transport_client: Client, transport_socket: str
) -> None:
    pane = new_pane(transport_socket)
    await run(transport_client, pane.pane_id, "stty -echo")
    message = await call_error(
        transport_client, "run_command", command="echo X", pane_id=pane.pane_id
    )
    assert "exited with status 0" in message
    assert "echo" in message
    # printing the token with echo off: only what follows it is output, and cut is said
    result = await run(
        transport_client, pane.pane_id, "echo A; history 1; echo B", suppress_history=False
    )
    assert result["output"] == ["B"]
    assert result["output_truncated"] is True
    tmux(transport_socket, "send-keys", "-t", pane.pane_id, "stty echo; echo echo-is-on", "Enter")
    await until(
        lambda: "echo-is-on" in tmux(transport_socket, "capture-pane", "-p", "-t", pane.pane_id)
    )
    assert (await run(transport_client, pane.pane_id, "echo back"))["output"] == ["back"]


async def test_near_a_full_history_no_earlier_output_is_returned(
    transport_client: Client, transport_socket: str
) -> None:
    pane = pane_with_history_limit(transport_socket, 100)
    for size in (60, 30, 7):
        await run(transport_client, pane.pane_id, f"seq 1 {size}")
        result = await run(transport_client, pane.pane_id, "echo only-this")
        assert result["output"] == ["only-this"]
        assert result["output_truncated"] is False


async def test_output_longer_than_history_limit_is_a_clean_tail(
    transport_client: Client, transport_socket: str
) -> None:
    pane = pane_with_history_limit(transport_socket, 50)
    result = await run(transport_client, pane.pane_id, "echo A; history 1; seq 1 300")
    output = result["output"]
    assert output == [str(n) for n in range(301 - len(output), 301)]
    assert result["output_truncated"] is True


async def test_clear(transport_client: Client, transport_socket: str) -> None:
    pane = new_pane(transport_socket)
    await run(transport_client, pane.pane_id, "seq 1 50")
    # clear also erases the history (E3): the head is gone, and the result says so
    result = await run(transport_client, pane.pane_id, "echo before; clear; echo after")
    assert result["output"] == ["after"]
    assert result["output_truncated"] is True
    # erasing the screen alone moves its rows into the history (tmux's scroll-on-clear)
    result = await run(transport_client, pane.pane_id, r"echo x; printf '\033[H\033[2J'; echo y")
    assert result["output"] == ["x", "y"]
    assert result["output_truncated"] is False


@pytest.mark.parametrize(
    "prompt",
    ["line one\\nline two \\$ ", "x" * 150 + " \\$ ", "é✓漢字 > ", "( "],
    ids=["two rows", "wrapping", "wide characters", "ends with a parenthesis"],
)
async def test_prompts(transport_client: Client, transport_socket: str, prompt: str) -> None:
    pane = new_pane(transport_socket)
    tmux(transport_socket, "send-keys", "-t", pane.pane_id, f"PS1=$'{prompt}'", "Enter")
    await until(lambda: "PS1" in tmux(transport_socket, "capture-pane", "-p", "-t", pane.pane_id))
    result = await run(transport_client, pane.pane_id, "echo one; echo two")
    assert result["output"] == ["one", "two"]
    assert result["output_truncated"] is False


async def test_ps2_prompts_and_a_multi_line_command(
    transport_client: Client, transport_socket: str
) -> None:
    pane = new_pane(transport_socket)
    tmux(transport_socket, "send-keys", "-t", pane.pane_id, "PS2='cont ;#{x}> '", "Enter")
    await until(lambda: "PS2" in tmux(transport_socket, "capture-pane", "-p", "-t", pane.pane_id))
    result = await run(
        transport_client,
        pane.pane_id,
        "echo one\nif true; then\n  echo two\nfi",
        suppress_history=False,
    )
    assert result["output"] == ["one", "two"]
    assert result["output_truncated"] is False


async def test_tabs_and_escapes_in_output(transport_client: Client, transport_socket: str) -> None:
    pane = new_pane(transport_socket)
    result = await run(
        transport_client, pane.pane_id, r"printf 'a\tb\n\033[31mred\033[0m\n\033]2;title\007t\n'"
    )
    assert [line.replace(" ", "") for line in result["output"]] == ["ab", "red", "t"]
    assert result["output"][0].startswith("a ")
    assert result["output_truncated"] is False


async def test_dash(transport_client: Client, transport_socket: str) -> None:
    pane = new_pane(transport_socket)
    tmux(transport_socket, "send-keys", "-t", pane.pane_id, "exec dash", "Enter")
    await until(
        lambda: (
            tmux(
                transport_socket, "display", "-p", "-t", pane.pane_id, "#{pane_current_command}"
            ).strip()
            == "dash"
        )
    )
    result = await run(transport_client, pane.pane_id, "echo A; echo B; exit 4")
    assert result["output"] == ["A", "B"]
    assert result["exit_status"] == 4


async def test_a_slow_prompt_is_waited_for_not_echoed_twice(
    transport_client: Client, transport_socket: str
) -> None:
    """Keys typed before the prompt are echoed by the terminal and again by the line
    editor: the calls wait for the editor, so each output is exact."""
    pane = new_pane(transport_socket)
    # a prompt command that works in the shell itself (no child), then one that runs one
    busy = "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; sleep 0.02"
    tmux(transport_socket, "send-keys", "-t", pane.pane_id, f"PROMPT_COMMAND='{busy}'", "Enter")

    def prompt_back() -> bool:  # the prompt after the one the setting was typed at
        rows = tmux(transport_socket, "capture-pane", "-p", "-t", pane.pane_id).split("\n")
        rows = [row for row in rows if row.strip()]
        return len(rows) >= 2 and "PROMPT" in rows[-2] and rows[-1].startswith("bash")

    await until(prompt_back, timeout=10)
    for index in range(5):
        result = await run(transport_client, pane.pane_id, f"echo call-{index}")
        assert result["output"] == [f"call-{index}"]
        assert result["output_truncated"] is False
