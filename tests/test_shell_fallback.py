"""run_command in shells without schemux's hooks (the typed wrapper): bash, zsh with an
empty rc, dash and fish, each in a narrow pane. The wrapper's echo is never taken for
output, whatever the line editor draws; a C-c a person types ends the call with 130."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from schemux.panes.targets import PaneInfo, resolve_requested_pane
from tests.support import (
    Pane,
    call,
    call_error,
    interrupted_by_a_person,
    pane_format,
    require_tool,
    run,
    screen,
    tmux,
    wait_until,
)
from tests.test_run_command import cancel_while_typing, takes_the_next_call
from tests.test_wait_for_text import armed_wait

pytestmark = pytest.mark.anyio

COMMANDS = {
    "bash": "bash --norc --noprofile",
    "zsh": "zsh -f",
    "dash": "dash",
    "fish": "fish --no-config",
}


@pytest.fixture
def own_pane(main_tmux_socket: str, tmp_path: Path) -> Iterator[Any]:
    """A pane running ``shell`` as a user starts it, without hooks, ``width`` wide."""
    made: list[str] = []

    def make(shell: str, width: int = 60) -> Pane:
        require_tool(shell)
        name = f"f{len(made)}{shell}{id(made)}"
        env = ["-e", f"HOME={tmp_path}", "-e", "LANG=C.UTF-8", "-e", "PS1=$ "]
        pane_id, window_id, session_id = tmux(
            main_tmux_socket, "new-session", "-d", "-s", name, "-x", str(width), "-y", "20",
            *env, "-P", "-F", "#{pane_id} #{window_id} #{session_id}", COMMANDS[shell],
        ).split()  # fmt: skip
        made.append(name)
        pane = Pane(main_tmux_socket, pane_id, window_id, session_id, name)
        wait_until(lambda: pane_format(pane, "#{pane_current_command}") == shell)
        wait_until(lambda: tmux(main_tmux_socket, "capture-pane", "-p", "-t", pane_id).strip())
        return pane

    yield make
    for name in made:
        tmux(main_tmux_socket, "kill-session", "-t", f"={name}", check=False)


@pytest.mark.parametrize("shell", ["bash", "zsh", "dash", "fish"])
async def test_output_exact_in_a_narrow_pane(client: Client, own_pane: Any, shell: str) -> None:
    pane = own_pane(shell, width=40)
    for _ in range(2):  # the first call, and one after it
        result = await run(client, pane, "echo first-ok; false")
        assert result["output"] == ["first-ok"]
        assert result["exit_status"] == 1
        assert not result["output_truncated"]


@pytest.mark.parametrize("shell", ["bash", "zsh", "dash", "fish"])
async def test_an_interrupt_ends_the_call_with_130(
    client: Client, own_pane: Any, shell: str
) -> None:
    pane = own_pane(shell)

    def started() -> bool:
        rows = tmux(pane.socket_name, "capture-pane", "-p", "-t", pane.pane_id).splitlines()
        return "before" in rows

    async def interrupt() -> None:
        with anyio.fail_after(10):
            while not started():  # noqa: ASYNC110
                await anyio.sleep(0.02)
        await anyio.sleep(0.2)  # the sleep has begun
        await call(client, "send_keys", pane_id=pane.pane_id, keys="C-c", enter=False)

    async with anyio.create_task_group() as group:
        group.start_soon(interrupt)
        with anyio.fail_after(8):
            result = await run(client, pane, "echo before; sleep 30; echo never", timeout=20)
    assert result["exit_status"] == 130
    assert result["output"] == ["before"]


async def test_the_other_shell_tools_work_in_fish(client: Client, own_pane: Any) -> None:
    """send_keys, wait_for_text and run_shell_command in a fish pane (issue 16, item 3)."""
    pane = own_pane("fish")
    waiting = await armed_wait(client, pane, patterns=["^typed-in-fish$"], regex=True, timeout=10)
    await call(client, "send_keys", pane_id=pane.pane_id, keys="echo typed-(echo in-fish)")
    assert (await waiting)["found"] is True
    result = await call(
        client, "run_shell_command", command="set -l xs a b c; count $xs; false",
        paneId=pane.pane_id,
    )  # fmt: skip
    assert result["output"] == "3"
    assert result["exitStatus"] == 1
    assert result["outputComplete"] is True


async def test_fish_syntax_follows_the_shell_not_tmuxs_current_command(
    client: Client, own_pane: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Right after a call, tmux's pane_current_command names the earlier wrapper's
    released client (``tmux``) for a moment, while fish is the shell that reads the keys:
    the wrapper is written in fish's syntax all the same (issue 16, bug K: the POSIX
    wrapper typed into fish was refused, and the call timed out)."""
    pane = own_pane("fish", width=80)

    async def as_tmux_names_it_then(*arguments: Any, **options: Any) -> PaneInfo:
        pane = await resolve_requested_pane(*arguments, **options)
        return dataclasses.replace(pane, current_command="tmux")

    handler = "schemux.handlers.run_command.resolve_requested_pane"
    monkeypatch.setattr(handler, as_tmux_names_it_then)
    result = await run(client, pane, "echo in-fish; false", timeout=5)
    assert (result["output"], result["exit_status"]) == (["in-fish"], 1)


async def test_a_slow_line_editor_is_given_time_to_take_the_line(
    client: Client, own_pane: Any
) -> None:
    """A line editor whose plugins take long over the typed line (here a busy loop at
    the end of each line) is given a grace past a short timeout: the call reports the
    command timed out, with its output so far, rather than blame the command's quoting."""
    pane = own_pane("zsh")
    slow = "zle-line-finish() { local i; for ((i=0;i<30000;i++)); do :; done }"
    slow += "; zle -N zle-line-finish"
    await run(client, pane, "true")
    tmux(pane.socket_name, "send-keys", "-t", pane.pane_id, slow, "Enter")
    await anyio.sleep(1.5)
    result = await run(client, pane, "echo started; sleep 3; echo late", timeout=0.2)
    assert result["timed_out"] is True
    assert result["output"] == ["started"]


@pytest.mark.parametrize("shell", ["bash", "zsh", "dash", "fish"])
async def test_hostile_text_arrives_as_typed(client: Client, own_pane: Any, shell: str) -> None:
    text = "#{pane_id} ; \\; $(echo no) `echo no` %% ## -t ;#"
    pane = own_pane(shell, width=80)
    result = await run(client, pane, f"echo '{text}'", timeout=10)
    assert result["output"] == [text]


async def test_an_interrupt_with_a_prompt_of_two_rows(client: Client, own_pane: Any) -> None:
    """The prompt the shell draws after dropping the interrupted line is not output,
    whatever its height."""
    pane = own_pane("bash")
    tmux(pane.socket_name, "send-keys", "-t", pane.pane_id, "PS1='first row\\n$ '", "Enter")
    wait_until(lambda: "first row" in screen(pane))
    await anyio.sleep(0.3)

    result = await interrupted_by_a_person(client, pane)
    assert result["exit_status"] == 130
    assert result["output"] == ["before"]


@pytest.mark.parametrize("shell", ["bash", "zsh", "dash"])
async def test_a_posix_shell_keeps_no_state_from_a_call(
    client: Client, own_pane: Any, shell: str, tmp_path: Path
) -> None:
    """The command runs in a subshell: cd, export and exit stay inside it."""
    pane = own_pane(shell, width=80)
    before = (await run(client, pane, "pwd"))["output"]
    await run(client, pane, f"cd {tmp_path}; export SCHEMUX_KEPT=kept")
    result = await run(client, pane, 'pwd; echo "${SCHEMUX_KEPT-unset}"')
    assert result["output"] == [*before, "unset"]
    result = await run(client, pane, "exit 3")
    assert result["exit_status"] == 3
    result = await run(client, pane, "echo still-here")
    assert result["output"] == ["still-here"]


async def test_a_call_cancelled_while_fish_takes_its_keys_in_leaves_its_line_empty(
    client: Client, own_pane: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """fish reads the typed keys a few at a time; a C-c in the middle of them left what it
    had read on its command line (" printf", the rest discarded with the C-c), and the
    next call's keys after it. fish turns the terminal's flow control off, so it cannot be
    held mid-line as bash is (``cancel_while_typing``); an interrupt sent as soon as the
    keys are answered found it mid-line in every run before the fix."""
    pane = own_pane("fish", width=80)
    await cancel_while_typing(client, pane, monkeypatch, held=False)
    await takes_the_next_call(client, pane, monkeypatch)


async def test_fish_keeps_its_state_and_exit_ends_it(
    client: Client, own_pane: Any, tmp_path: Path
) -> None:
    """fish has no subshell: the command runs in a block of the pane's own shell."""
    pane = own_pane("fish", width=80)
    await run(client, pane, f"cd {tmp_path}; set -gx SCHEMUX_KEPT kept")
    result = await run(client, pane, 'pwd; echo "$SCHEMUX_KEPT"')
    assert result["output"] == [str(tmp_path), "kept"]
    error = await call_error(client, "run_command", command="exit 3", pane_id=pane.pane_id)
    assert f"pane {pane.pane_id} was closed while the command ran" in error
