"""The command text run_command types (schemux.shell.commands), and when a pane's shell
counts as reading its input (schemux.shell.idle)."""

from __future__ import annotations

import asyncio

import pytest

from schemux.errors import PaneGone, SchemuxError, TmuxCommandError
from schemux.shell.commands import check_command
from schemux.shell.idle import shell_reads_input
from schemux.shell.wrapper import typed, woken


@pytest.mark.parametrize(
    ("command", "message"),
    [("", "must not be empty"), (" \n ", "must not be empty"), ("a\rb", "carriage return")],
)
def test_check_command(command: str, message: str) -> None:
    with pytest.raises(SchemuxError, match=message):
        check_command(command)


def test_a_command_of_several_lines_is_taken() -> None:
    """It was refused with suppress_history ("must be a single line")."""
    check_command("cat <<'END'\nx\nEND")


def test_a_vanished_shell_counts_as_running() -> None:
    # no /proc entry: nothing says the shell is still reading, so no C-c is sent
    assert shell_reads_input(2**22 + 1) is False


@pytest.mark.anyio
async def test_a_waiter_the_clean_up_cancelled_does_not_cancel_the_call(
    anyio_backend: str,
) -> None:
    """A clean-up that found the pane gone cancels the call's waiter, whose client then
    takes a moment to end (as a plain ``tmux wait-for``'s does): the call must go on to
    report the pane's end, not end as cancelled itself (a task then stayed "working")."""

    async def waiter() -> None:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            await asyncio.sleep(0.01)  # its client ending
            raise

    waiting = asyncio.ensure_future(waiter())
    await asyncio.sleep(0)
    waiting.cancel()
    await woken(waiting)
    assert waiting.cancelled()


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("stderr", "gone"),
    [
        ("can't find pane: %6", True),  # the pane of a shell that just ran exit
        ("can't find window: @3", True),
        ("no server running on /tmp/tmux-0/x", False),
        ("unknown command: copy-mod", False),
    ],
)
async def test_a_pane_gone_before_the_typing_is_the_calls_pane_gone(
    anyio_backend: str, stderr: str, gone: bool
) -> None:
    """tmux found no pane for the command list that types the command, so nothing was
    typed and nothing ran: the call's PaneGone, on which a call without a target goes
    on in a new agent shell (test_embedded's call right after `exit` failed with "tmux
    copy-mode failed: can't find pane" before). Any other failure stays what it was."""
    typing: asyncio.Future[list[str]] = asyncio.get_running_loop().create_future()
    typing.set_exception(TmuxCommandError("copy-mode", stderr))
    expected = PaneGone if gone else TmuxCommandError
    with pytest.raises(expected) as raised:
        await typed("%6", typing)
    if gone:
        assert str(raised.value).startswith("pane %6 closed before the command was typed")
    else:
        assert raised.value is typing.exception()
