"""Adopting a pane schemux did not start: its idle bash, zsh or fish given schemux's hooks
(``schemux.hooks``) by one typed line, so that run_command there is served by the hooks
(``schemux.shell.hooked``) as in the agent's pane, instead of the typed wrapper.

The line (``hooks.adoption_line``) is typed as a person would type it, once, and stays
on the screen: a pane is never adopted unseen. It is refused for a pane whose own
program is not an idle bash, zsh or fish at its prompt (a program, a nested shell, a
shell of another kind), and where the hooks' files and pids are not this machine's.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

from schemux.errors import SchemuxError, Unfit
from schemux.hooks import SHELL, HookedShell, adoption_line
from schemux.panes.targets import PaneInfo
from schemux.shell.capture import until_prompt_shown
from schemux.shell.facts import shell_facts
from schemux.shell.readiness import pane_hooks
from schemux.shell.settling import PaneSettling
from schemux.system.processes import process_name
from schemux.tmux.command import THEN
from schemux.tmux.server import TmuxServer

REPORT_POLL_SECONDS = 0.01  # between two readings while the adopted shell's report is awaited

Adoptable = Literal["bash", "zsh", "fish"]
# the shells the hooks are written for (``hooks.INTEGRATED_SHELLS``), by name
_ADOPTABLE: Mapping[str, Adoptable] = MappingProxyType(
    {"bash": "bash", "zsh": "zsh", "fish": "fish"}
)


@dataclass(frozen=True)
class Adoption:
    """A pane's shell with the hooks: ``line`` the line typed to give them, None when it
    had them already."""

    shell: Adoptable
    line: str | None


async def adopt(server: TmuxServer, pane: PaneInfo, within: float) -> Adoption:
    """Give the idle shell of ``pane`` the hooks, waiting up to ``within`` seconds for
    its prompt and then for the hooks' report; a pane that has them is left as it is."""
    host = server.address.host
    if not host.files_here or not host.pids_here:
        raise Unfit(
            f"pane {pane.pane_id} is on a tmux server whose files and processes are not "
            "this machine's; its shell cannot be adopted (run_command serves it with its "
            "wrapper)",
            suggestion="use run_command there as it is",
        )
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    settling = server.shared(PaneSettling)
    await settling.until_ours_ended(pane, within)
    async with settling.occupying(server, pane) as claim:
        # the claim is taken with the first reading, before anything is typed
        hooked = await pane_hooks(server, pane, within, claim)
        if hooked is not None:
            return Adoption(_ADOPTABLE[hooked.name], None)
        facts = shell_facts(server)
        await settling.until_settled(pane, facts)
        name = await facts.check_shell_pane(pane)  # refuses a pane that runs a job
        shell = _ADOPTABLE.get(name)
        if shell is None or process_name(pane.pid) != name:
            raise Unfit(
                f"pane {pane.pane_id} runs {name!r} at its prompt; only bash, zsh and fish "
                "take schemux's hooks, so nothing was typed",
                suggestion="run_command serves this pane with its wrapper as it is",
            )
        try:
            line = adoption_line(shell, server.binary, os.environ)
        except OSError as error:
            raise SchemuxError(
                f"the hooks' files could not be written ({error}); nothing was typed"
            ) from None
        await until_prompt_shown(server, pane, max(deadline - loop.time(), 0.0))
        pane_id = pane.pane_id
        # a leading space keeps the line out of a history that ignores such lines
        await claim.run(
            "send-keys", "-t", pane_id, "-l", "--", f" {line}",
            THEN, "send-keys", "-t", pane_id, "Enter",
        )  # fmt: skip
        await _until_reported(server, pane, shell, deadline, line)
    return Adoption(shell, line)


async def _until_reported(
    server: TmuxServer, pane: PaneInfo, name: str, deadline: float, line: str
) -> None:
    """Return once the shell's hooks said what it is in ``SHELL`` (at the prompt after
    the typed line); raise at ``deadline``."""
    loop = asyncio.get_running_loop()
    while True:
        lines = await server.run("display-message", "-p", "-t", pane.pane_id, f"#{{{SHELL}}}")
        shell = HookedShell.parse(lines[0]) if lines else None
        if shell is not None and shell.pid == pane.pid and shell.name == name:
            return
        if loop.time() >= deadline:
            raise SchemuxError(
                f"the shell in pane {pane.pane_id} was typed `{line}` but did not report "
                "its hooks within the call's timeout (is it still running the line?)",
                suggestion="look at the pane (capture_pane); call adopt_pane again once "
                "it is at its prompt",
            )
        await asyncio.sleep(REPORT_POLL_SECONDS)
