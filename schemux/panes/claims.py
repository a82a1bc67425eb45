"""Which caller holds a pane for a run_command call, told by the pane itself: every
schemux process on the tmux server, and every host name that reaches it, sees it.

A call claims its pane with the pane option ``BUSY_OPTION``, whose value names the
claim: its owner (``schemux.system.processes.Owner.tag``, as program panes' marks do) and a
token of its own. ``set-option -o`` sets it only where it is not set, so taking it is
tmux's test-and-set; and it goes in a command list the call sends anyway (before the
commands that must not run on a pane another caller holds), whose rest tmux skips when
it fails. Releasing removes it only while it still holds this claim's value.

A claim left by a schemux process that died is taken away by the next call that finds
it (and by ``schemux.shell.abandoned``'s reaper), so it never keeps a pane busy for good.
"""

from __future__ import annotations

import contextlib
import logging
import re
import secrets

from schemux.errors import (
    ConnectionLost,
    PaneBusy,
    SchemuxError,
    ServerUnavailable,
    TmuxCommandError,
)
from schemux.system.processes import Owner, machine_tag, this_process
from schemux.system.runtime_identity import owner_alive
from schemux.tmux.command import THEN
from schemux.tmux.server import TmuxServer

BUSY_OPTION = "@schemux-busy"
# an owner's tag (``Owner.tag``), then the claim's token: nothing else is ever set here by
# schemux, and only such a value is written back into a command (``unclaiming``)
_VALUE = re.compile(r"([1-9][0-9]*-[0-9]+-[0-9a-f]{16}) ([0-9a-f]{12})")
_PANE_ID = re.compile(r"%[0-9]+")
_TAKEN = f"already set: {BUSY_OPTION}"
logger = logging.getLogger("schemux")


def unclaiming(pane_id: str, value: str, when: str = "") -> tuple[str, ...]:
    """The tmux command that removes the pane's claim while it holds ``value``, and leaves
    any other alone; with ``when`` (a tmux format of schemux's own, true or false on the
    pane), only where that is true too. The pane id and the value are checked: the
    command's text holds nothing else of a caller's."""
    if _PANE_ID.fullmatch(pane_id) is None or _VALUE.fullmatch(value) is None:
        raise ValueError(f"not a pane id and a claim's value: {pane_id!r}, {value!r}")
    condition = f"#{{==:#{{{BUSY_OPTION}}},{value}}}"
    if when:
        condition = f"#{{&&:{condition},{when}}}"
    return (
        "if-shell", "-F", "-t", pane_id, condition,
        f"set-option -p -u -t {pane_id} {BUSY_OPTION}",
    )  # fmt: skip


def claim_owner(value: str) -> Owner | None:
    """The owner a claim's value names (None for a value no claim has)."""
    match = _VALUE.fullmatch(value)
    return None if match is None else Owner.from_identity(match[1])


async def remove_dead_claims(server: TmuxServer) -> list[str]:
    """Take away the claims on ``server``'s panes whose owner is gone (for the reaper,
    ``schemux.shell.abandoned``); the panes freed."""
    rows = await server.run(
        "list-panes", "-a", "-f", f"#{{{BUSY_OPTION}}}", "-F", f"#{{pane_id}} #{{{BUSY_OPTION}}}"
    )
    remote = not server.address.host.pids_here
    freed = []
    for row in rows:
        pane_id, _, value = row.partition(" ")
        match = _VALUE.fullmatch(value)
        if match is None or owner_alive(match[1], remote=remote):
            continue
        with contextlib.suppress(TmuxCommandError):  # the pane went meanwhile
            await server.run(*unclaiming(pane_id, value))
            freed.append(pane_id)
    return freed


class PaneClaim:
    """One call's claim on its pane (made by ``shell.settling.PaneSettling.occupying``).

    ``run`` sends a command list with the take folded in, until one was sent; ``releasing``
    gives the commands that release it, to fold into the call's last command list;
    ``release`` releases it by a command of its own when that did not happen."""

    def __init__(self, server: TmuxServer, pane_id: str, stale: frozenset[str]) -> None:
        self.server = server
        self.pane_id = pane_id
        self.value = f"{this_process().tag} {secrets.token_hex(6)}"
        self.sent = False  # a command list holding the take was sent (and not refused)
        self.released = False
        # values of this server object's earlier claims whose release failed (a control
        # client lost in between): found on the pane, they are taken away as a dead
        # owner's are
        self._stale = stale

    def _taking(self) -> tuple[str, ...]:
        if self.sent:
            return ()
        return (THEN, "set-option", "-p", "-o", "-t", self.pane_id, BUSY_OPTION, self.value)

    async def run(self, *commands: str, then: tuple[str, ...] = ()) -> list[str]:
        """``commands``, the take (until a list holding it was sent), then ``then`` (each
        part after the first beginning with ``THEN``), in one tmux command list: what
        follows the take does not run on a pane another caller holds. A claim left by an
        owner that is gone is taken away, and the list sent again, once."""
        lines = await self._send(commands, then)
        if lines is None:
            holder = await self._holder()
            if await self._taken_from_the_gone(holder):
                lines = await self._send(commands, then)
                if lines is None:  # another caller took it in between
                    holder = await self._holder()
            if lines is None:
                raise self._busy(holder)
        return lines

    async def _send(self, commands: tuple[str, ...], then: tuple[str, ...]) -> list[str] | None:
        """The list's lines; None when the pane holds another claim (nothing after the
        take ran)."""
        taking = self._taking()
        self.sent = True  # once sent, the take may have been done: ``release`` undoes it
        try:
            return await self.server.run(*commands, *taking, *then)
        except TmuxCommandError as error:
            if not taking or error.stderr != _TAKEN:
                raise
        self.sent = False  # refused: the pane holds another's claim, not this one
        return None

    async def _holder(self) -> str:
        """The value of the claim that refused this one's (empty: released meanwhile)."""
        lines = await self.server.run(
            "display-message", "-p", "-t", self.pane_id, f"#{{{BUSY_OPTION}}}"
        )
        return "\n".join(lines)

    async def _taken_from_the_gone(self, value: str) -> bool:
        """Take the claim away when its owner is gone, or it is one of this server
        object's own that could not be released; whether it was."""
        match = _VALUE.fullmatch(value)
        if match is None:
            return False
        remote = not self.server.address.host.pids_here
        if value not in self._stale and owner_alive(match[1], remote=remote):
            return False
        await self.server.run(*unclaiming(self.pane_id, value))
        logger.info("pane %s: took away the claim of a run_command call whose schemux is gone",
                    self.pane_id)  # fmt: skip
        return True

    def _busy(self, value: str) -> PaneBusy:
        owner = claim_owner(value)
        if not value:
            holder = "(it has just ended)"
        elif owner is None:
            holder = f"(its option {BUSY_OPTION} holds no schemux process's claim)"
        elif owner == this_process():
            holder = (
                "(of this schemux process: by another host name for the same tmux server, "
                "or a cancelled call still cleaning up)"
            )
        elif owner.machine == machine_tag():
            holder = f"(of schemux process {owner.pid})"
        else:
            holder = "(of a schemux process of another machine or container)"
        suggestion = "wait for that call to return, or target another pane"
        if value and owner is None:
            suggestion = (
                f"if no call runs there, unset it: tmux set-option -p -u -t {self.pane_id} "
                f"{BUSY_OPTION}"
            )
        return PaneBusy(
            f"pane {self.pane_id} is busy: another run_command call is running in it {holder}",
            suggestion=suggestion,
        )

    @property
    def held(self) -> bool:
        """Whether the pane may hold the claim: a list holding the take was sent (and not
        refused), and nothing released it since."""
        return self.sent and not self.released

    def releasing(self, when: str = "") -> tuple[str, ...]:
        """The tmux commands (after a ``THEN``) that release the claim, to end the call's
        last command list, where the tmux format ``when`` is true if one is given;
        ``released`` is for the caller to set once they ran (and released it)."""
        return (THEN, *unclaiming(self.pane_id, self.value, when)) if self.sent else ()

    async def release(self) -> bool:
        """Release the claim unless that was done, by a command list of its own; whether
        the pane is known to hold it no more. A command lost with its control client is
        sent once more (the next command starts a new client)."""
        if not self.held:
            return True
        try:
            try:
                await self._unclaim()
            except ConnectionLost:
                await self._unclaim()
        except SchemuxError as error:
            logger.warning("pane %s: its run_command claim was not released: %s",
                           self.pane_id, error)  # fmt: skip
            return False
        self.released = True
        return True

    async def _unclaim(self) -> None:
        try:
            await self.server.run(*unclaiming(self.pane_id, self.value))
        except ServerUnavailable:
            pass  # no server, no claim
        except TmuxCommandError as error:
            if not error.target_gone:  # else the pane went, and its claim with it
                raise
