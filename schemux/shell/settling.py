"""Which panes have a run_command call of ours in flight or settling, and waiting until
a pane is free of them.

A pane is "in flight" while a call runs in it, its cleanup included: a second call finds
it busy. Within this server object that is known here; for every other caller (another
schemux process, or this one by another host name for the same tmux server) the call's
claim on the pane tells it (``schemux.panes.claims``), taken in the call's first command
list and released when the call (its cleanup included) is done. It is "settling" while
its shell is on its way back to its prompt after a call: the cleanup of a cancelled call
and the command it interrupted, or the tmux client of a released wrapper. A next call
waits (boundedly) for that rather than finding the pane busy or typing into a terminal
that is not the shell's yet.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Coroutine
from typing import Any

from schemux.errors import PaneBusy
from schemux.panes.claims import PaneClaim
from schemux.panes.targets import PaneInfo
from schemux.shell.facts import ShellFacts, shell_facts
from schemux.tmux.server import TmuxServer

# how long a call waits for a pane that an earlier wrapper is leaving
SETTLE_SECONDS = 2.0
# how long a call waits for a pane whose command a cancelled call of ours interrupted:
# the interrupted command's exit and the shell's prompt after it. Long enough for a
# loaded machine: fish was seen to need more than 2 s, and a trap's 3 s clean-up more
# than 5 under six test workers; the wait ends at the prompt, so only a command that
# ignores the interrupt costs the whole of it
INTERRUPTED_SETTLE_SECONDS = 10.0
# how long past its timeout a call waits for a shell still taking in the typed line
TYPING_GRACE_SECONDS = 2.0
# between two looks at a cancelled call's shell still taking in its typed line
TAKING_IN_POLL_SECONDS = 0.005
# how long a call waits for another call of ours on its pane to end (the client may have
# cancelled it, its notification still on the way) before it finds the pane busy
IN_FLIGHT_GRACE_SECONDS = 2.0  # a loaded machine was seen to need more than 0.5


class PaneSettling:
    """Which panes of one tmux server have a call of ours in flight or settling: kept by
    the server's ``TmuxServer`` (``server.shared(PaneSettling)``), so it lives as long as
    the server does and is never another context's."""

    def __init__(self) -> None:
        # panes (by id) with a call of ours in flight: set when it has ended, its cleanup
        # and the release of its claim included
        self._in_flight: dict[str, asyncio.Event] = {}
        # the claim of the call in flight on each pane, until a cleanup takes it over
        self._claims: dict[str, PaneClaim] = {}
        # panes whose shell a call of ours is bringing back to its prompt: the cleanup
        # of a cancelled one (which interrupts the command), until when the command may
        # still be leaving, and how long a next call waits for the prompt
        self._settling: dict[str, tuple[asyncio.Future[None], float, float]] = {}
        # the values of claims whose release failed: a next call takes them away
        self._unreleased: set[str] = set()
        # set (and replaced) at each change a waiting call looks for: a call's end, or
        # the start or end of a cancelled call's cleanup
        self._changed = asyncio.Event()

    async def until_ours_ended(self, pane: PaneInfo, within: float) -> None:
        """Wait for a call of ours on the pane to end: one in flight (perhaps cancelled,
        the cancellation not arrived yet), or the cleanup of a cancelled one. A call that
        neither ends nor begins its cleanup within ``IN_FLIGHT_GRACE_SECONDS`` is running
        on (the pane is busy); one that is cleaning up is waited for as long as its
        cleanup lasts, up to ``within`` seconds (the new call's timeout), since on a
        loaded machine an interrupted command and its shell's prompt can take longer
        than any fixed patience."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + within
        grace_end = loop.time() + IN_FLIGHT_GRACE_SECONDS
        running = self._in_flight.get(pane.pane_id)
        while True:
            changed = self._changed  # taken before the look: a change after it wakes us
            entry = self._settling.get(pane.pane_id)
            cleaning = entry is not None and not entry[0].done()
            if (running is None or running.is_set()) and not cleaning:
                return
            end = deadline if cleaning else min(deadline, grace_end)
            if (left := end - loop.time()) <= 0:
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(changed.wait(), left)

    @contextlib.asynccontextmanager
    async def occupying(self, server: TmuxServer, pane: PaneInfo) -> AsyncIterator[PaneClaim]:
        """The pane is in flight for the block, refused as busy when another call of ours
        has it; the block takes the pane's claim with its first command list
        (``PaneClaim.run``), which refuses a pane another caller holds. The claim is
        released as the block ends (unless its last command list did), or by the cleanup
        that ``settle`` runs; the pane is in flight until it is."""
        pane_id = pane.pane_id
        if pane_id in self._in_flight:
            raise PaneBusy(
                f"pane {pane_id} is busy: another run_command call is running in it",
                suggestion="wait for that call to return, or target another pane",
            )
        self._in_flight[pane_id] = finished = asyncio.Event()
        claim = self._claims[pane_id] = PaneClaim(server, pane_id, frozenset(self._unreleased))
        try:
            yield claim
        finally:
            ours = self._claims.get(pane_id) is claim  # else a cleanup took it over
            if ours:
                del self._claims[pane_id]
            if ours and claim.held:
                # awaited: once the call returns, its pane is free for every caller
                releasing = asyncio.ensure_future(self._release(claim))
                releasing.add_done_callback(lambda _: self._ended(pane_id, finished))
                await asyncio.shield(releasing)
            else:
                self._ended(pane_id, finished)

    def _ended(self, pane_id: str, finished: asyncio.Event) -> None:
        finished.set()
        if self._in_flight.get(pane_id) is finished:
            del self._in_flight[pane_id]
        self._tell_change()

    def _tell_change(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    async def _release(self, claim: PaneClaim) -> None:
        if not await claim.release():
            self._unreleased.add(claim.value)

    async def _cleaned_up(self, cleanup: Coroutine[Any, Any, None], claim: PaneClaim) -> None:
        try:
            await cleanup
        finally:
            await self._release(claim)

    def settle(self, pane_id: str, cleanup: Coroutine[Any, Any, None]) -> asyncio.Future[None]:
        """Run ``cleanup`` as a task that the next call on the pane waits for, and then
        release the pane's claim. Registered before the first await: a next call that
        overtakes the cancellation sees it."""
        claim = self._claims.pop(pane_id, None)
        task = asyncio.ensure_future(cleanup if claim is None else self._cleaned_up(cleanup, claim))
        self.mark_settling(pane_id, task, INTERRUPTED_SETTLE_SECONDS)
        return task

    def mark_settling(
        self,
        pane_id: str,
        task: asyncio.Future[None] | None = None,
        patience: float = SETTLE_SECONDS,
    ) -> None:
        """The pane's shell is on its way back to its prompt (after a released wrapper, or
        ``task``): the next call within SETTLE_SECONDS waits for it, ``patience`` seconds
        at most, e.g. for a slow prompt command, rather than finding the pane busy."""
        now = time.monotonic()
        settled = [
            old for old, (done, until, _) in self._settling.items() if done.done() and until < now
        ]
        for old in settled:
            del self._settling[old]
        if task is None:
            task = asyncio.get_running_loop().create_future()
            task.set_result(None)
        self._settling[pane_id] = (task, now + SETTLE_SECONDS, patience)
        self._tell_change()
        task.add_done_callback(lambda _: self._tell_change())

    async def until_settled(
        self, pane: PaneInfo, facts: ShellFacts, *, edits: bool = False
    ) -> None:
        """Wait (boundedly) for what an earlier call left leaving the pane's terminal (its
        cleanup awaited by ``until_ours_ended``): the command a cancelled call interrupted,
        or the tmux client of a released wrapper. ``edits``: the shell is known to edit
        its line (its hooks told so), so it is waited for as one that does."""
        entry = self._settling.pop(pane.pane_id, None)
        if entry is not None and not (entry[0].done() and entry[1] < time.monotonic()):
            # from now, not from when the cleanup began: the interrupted command (a trap,
            # say) may still be on its way out when the cleanup's own work is done
            await _until_at_prompt(facts, pane.pid, entry[2], edits)
        elif await facts.earlier_wrapper_leaving(pane.pid):
            await facts.until_shell_has_terminal(pane.pid, SETTLE_SECONDS)
        if await facts.shell_reads_input(pane.pid):
            await facts.until_line_editor_reads(pane.pid, SETTLE_SECONDS, edits=edits)


async def _until_at_prompt(facts: ShellFacts, shell_pid: int, within: float, edits: bool) -> None:
    """Return once the shell holds its terminal and its line editor reads (or after
    ``within`` seconds). An interrupted command's shell takes the terminal back between
    the jobs that follow it (the wrapper's report, then the prompt), so holding the
    terminal once is not yet being at the prompt."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while (left := deadline - loop.time()) > 0:
        await facts.until_shell_has_terminal(shell_pid, left)
        left = max(deadline - loop.time(), 0.0)
        await facts.until_line_editor_reads(shell_pid, left, edits=edits)
        if await facts.shell_reads_input(shell_pid):
            return
        await asyncio.sleep(0.001)  # where the facts cannot tell (the shell gone): no busy loop


async def until_line_taken_in(server: TmuxServer, pane: PaneInfo) -> None:
    """Return once the shell no longer reads the typed line, so that a C-c reaches its
    command, not the shell in the middle of the line: or after ``TYPING_GRACE_SECONDS``
    (a line left unfinished: the shell reads on, idle, where a C-c is safe).

    A C-c acts the moment the terminal gets it, not after the keys before it: it sends
    SIGINT and discards the input not read yet. A shell still taking the line in (its
    line editor busy with a key, not waiting for one) can miss it as the end of the line:
    bash's readline takes the signal, then waits for a key with the line and no prompt
    on the screen (between two lines of the wrapper, at its continuation prompt). Once
    the shell has read the line, the line's command (or the report, or a hook, holding
    the shell) holds the terminal."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + TYPING_GRACE_SECONDS
    while loop.time() < deadline:
        # a reading of its own each time (a remote one keeps its first answer)
        if not await shell_facts(server).shell_reads_input(pane.pid):
            return
        await asyncio.sleep(TAKING_IN_POLL_SECONDS)
