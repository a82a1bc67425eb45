"""A pane's first call made before tmux's fork has become the pane's shell waits for it,
within the call's time, instead of refusing the pane (seen: ``'tmux: server'``, not a
shell at its prompt, for a call right after ``new-session``)."""

from __future__ import annotations

import time
from typing import Any

import pytest

from schemux.errors import SchemuxError, ShellNotStarted
from schemux.shell_commands import shell_once_started
from schemux.shell_panes import check_shell_command

pytestmark = pytest.mark.anyio


class Pane:
    pane_id = "%7"
    current_command = "tmux: server"


class StartingFacts:
    """Facts of a pane whose fork becomes fish at the ``after``-th reading."""

    def __init__(self, after: int) -> None:
        self.after, self.readings = after, 0

    async def check_shell_pane(self, pane: Any) -> str:
        self.readings += 1
        if self.readings < self.after:
            raise ShellNotStarted(f"pane {pane.pane_id} has not started its shell yet")
        return "fish"


def test_tmuxs_fork_is_a_shell_not_started_yet() -> None:
    with pytest.raises(ShellNotStarted):
        check_shell_command(Pane(), (5, 5), "tmux: server")  # type: ignore[arg-type]
    with pytest.raises(SchemuxError, match="running 'vim', not a shell"):
        check_shell_command(Pane(), (5, 5), "vim")  # type: ignore[arg-type]


async def test_the_call_waits_for_the_shell() -> None:
    facts = StartingFacts(after=4)
    shell = await shell_once_started(facts, Pane(), time.monotonic() + 5)  # type: ignore[arg-type]
    assert (shell, facts.readings) == ("fish", 4)


async def test_a_shell_that_never_starts_is_refused_at_the_deadline() -> None:
    facts = StartingFacts(after=10**9)
    started = time.monotonic()
    with pytest.raises(SchemuxError, match="has not started its shell yet after") as refused:
        await shell_once_started(facts, Pane(), started + 0.2)  # type: ignore[arg-type]
    assert not isinstance(refused.value, ShellNotStarted)
    assert 0.2 <= time.monotonic() - started < 2
