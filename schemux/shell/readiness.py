"""Whether a pane's shell has schemux's hooks (``schemux.hooks``), and waiting
for its first prompt.

The hooks say what the shell is in the pane option ``SHELL`` at its first prompt: its
name, its pid, whether its line editor takes a bracketed paste, zsh's end-of-line mark,
and where its armed file is (``schemux.shell.channel``; a call that saw those change
after its command sets them anew).
They are taken as the pane's only while that shell is still the pane's process (a shell
that ran ``exec dash`` keeps its pid, not its name). A pane schemux started with the
integration is marked ``PENDING`` (the shell's name) until then: a call that comes before
the shell's first prompt waits for it, within its timeout, rather than typing into a shell
whose startup files still run.
"""

from __future__ import annotations

import asyncio

from schemux.errors import SchemuxError
from schemux.hooks import PENDING, SHELL, HookedShell
from schemux.panes.targets import PaneInfo
from schemux.shell.idle import TMUX_FORK
from schemux.system.processes import process_name
from schemux.tmux.format import Runner, option, parse_row, row_format, tmux_row
from schemux.tmux.server import TmuxServer

POLL_SECONDS = 0.01  # between two readings while a shell's first prompt is awaited


@tmux_row
class HooksRow:
    shell: str = option(SHELL)
    pending: str = option(PENDING)


async def _read(
    server: TmuxServer, pane: PaneInfo, reader: Runner
) -> tuple[HookedShell | None, bool]:
    """The pane's hooked shell, if any; and whether its hooks are still to come (its
    first prompt)."""
    if not server.address.host.files_here or not server.address.host.pids_here:
        return None, False  # the integration is put in where its files are this machine's
    lines = await reader.run("display-message", "-p", "-t", pane.pane_id, row_format(HooksRow))
    row = parse_row(HooksRow, lines[0]) if lines else HooksRow("", "")
    name = process_name(pane.pid)
    shell = HookedShell.parse(row.shell)
    if shell is not None and shell.pid == pane.pid and shell.name == name:
        return shell, False
    # until it has exec'd the shell, the pane runs the env that starts it with the hooks,
    # and before that tmux's own fork of itself (a call right after the pane was made)
    starting = name in (row.pending, "env") or name.startswith(TMUX_FORK)
    return None, row.pending != "" and starting


async def pane_hooks(
    server: TmuxServer, pane: PaneInfo, within: float, reader: Runner
) -> HookedShell | None:
    """The hooked shell of ``pane``, waiting up to ``within`` seconds for the first prompt
    of one schemux started; None for a pane without hooks. Its readings are sent by
    ``reader`` (a call's ``PaneClaim``, whose first list takes the pane's claim); where
    the pane's hooks cannot be (its files or pids are another machine's), none is."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while True:
        shell, pending = await _read(server, pane, reader)
        if not pending:
            return shell
        if loop.time() >= deadline:
            raise SchemuxError(
                f"the shell in pane {pane.pane_id} has not shown its prompt after "
                f"{within:g} s (its startup files still run); nothing was typed",
                suggestion="call again with a longer timeout, or look at the pane "
                "(capture_pane) for what its startup waits for",
            )
        await asyncio.sleep(POLL_SECONDS)
