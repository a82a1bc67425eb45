"""Shells left to a dead schemux: finding them by their private options, freeing them.

Each run_command arms a private pane option ``@schemux_<token>`` and a server option
``@schemux_h_<token>`` whose value ends with its owner's mark, ``A <pid> <start ticks>``
(``schemux.system.processes.Owner``: a recycled pid is not taken for the owner). The pane
option holds the report's format until the wrapper reports ``E <status> ...`` into it.

A schemux killed with SIGKILL leaves both, and with them the shells it typed into: a
command still running whose caller is gone (armed), or a wrapper holding its shell for a
capture that never comes (reported; the wrapper's own timer frees it a few seconds after
schemux's control client is gone in any case). ``release_abandoned_wrappers`` ends both
for owners that are dead, and leaves every option of a live schemux alone, also a second
one on the same tmux server.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass

from schemux.errors import TmuxCommandError
from schemux.system.processes import Owner
from schemux.tmux.command import THEN
from schemux.tmux.format import format_literal
from schemux.tmux.server import TmuxServer

TOKEN_BYTES = 6  # a call's private token: 12 hex digits
# how long after its report a wrapper holds its shell before it looks whether schemux is
# still there (the capture takes ms; a schemux that is there but paused is waited for)
HOLD_SECONDS = 5
# what the wrapper reports, a format set as the armed option's value (expanded by #{E:})
REPORT_FORMAT = "#{history_size} #{cursor_y} #{cursor_x} #{history_limit}"
_HOLD = re.compile(r"@schemux_h_([0-9a-f]{12})")
_OPTION = re.compile(r"@schemux_([0-9a-f]{12})")


@dataclass(frozen=True)
class WrapperNames:
    """The private names of one run_command call, all made from its token (short: the
    wrapper typed into the shell holds them, and every character typed costs time)."""

    token: str

    @property
    def option(self) -> str:
        """The pane option: ``armed``, then the wrapper's report."""
        return f"@schemux_{self.token}"

    @property
    def hold(self) -> str:
        """The server option set until the shell is released: the wrapper's timer script
        (``hold_format``), which ends with the owner's mark."""
        return f"@schemux_h_{self.token}"

    def hold_format(self, owner: Owner, tmux: str) -> str:
        """The hold flag's value, a format that the control client setting it expands
        (``set-option -F``): the wrapper's timer, a ``sh`` script that ``tmux`` (the tmux
        binary and socket, quoted for a shell, as the wrapper's report runs them) reaches
        the server with. The report starts it ``HOLD_SECONDS`` later with ``run-shell -b
        -d``, whose timer and job belong to the tmux server, no client: a timer made of
        tmux commands would run them on a client's queue (the attached client tmux finds
        best, often one of schemux's own control clients), and die with that client.

        Run while the flag is still there (its test and either action are one tmux
        command), the script looks whether the control client that set the flag still
        runs (its pid, on the tmux server's machine, where the job runs): if it does,
        schemux is alive but has not captured yet (stopped, slow), and the timer is set
        again; if not, schemux is gone, and the script frees the shell. A result is never
        lost to a pause, and a dead schemux's shell is free within seconds. The script
        prints nothing and ends with status 0 (tmux would show either to a client); its
        last word, a no-op, holds the owner's mark."""
        again = f'run -bd{HOLD_SECONDS} "#{{{self.hold}}}"'
        release = f"set -su {self.hold} ; wait -S {self.resume}"
        test = f"then c='{again}';else c='{release}';fi;"
        act = f"{tmux} if -F '#{{{self.hold}}}' \"$c\" >/dev/null 2>&1;: '{owner.mark}'"
        # every '#' of the script is its own ('##' to the expansion), but the client's pid
        return f"if kill -0 #{{client_pid}} 2>/dev/null;{format_literal(test)}{format_literal(act)}"

    @property
    def done(self) -> str:
        """The channel the wrapper signals after its report."""
        return f"schemux_d_{self.token}"

    @property
    def resume(self) -> str:
        """The channel that releases the shell the wrapper holds."""
        return f"schemux_r_{self.token}"


@dataclass(frozen=True)
class AbandonedWrapper:
    """A dead owner's call: its token, and its pane and pane option value if still there."""

    token: str
    pane_id: str | None = None
    value: str = ""

    @property
    def reported(self) -> bool:
        """The command ended and the wrapper holds its shell for a capture."""
        return self.value.startswith("E ")


def _option_lines(lines: list[str]) -> dict[str, str]:
    """``show-options -p`` lines as name -> value (ours: a format or a report; only the
    report's value, digits and spaces, is read)."""
    options = {}
    for line in lines:
        name, _, value = line.partition(" ")
        options[name] = value.strip().strip('"')
    return options


def hold_tokens(server_options: list[str]) -> list[str]:
    """The tokens of the hold flags among ``show-options -s`` lines."""
    names = (line.partition(" ")[0] for line in server_options)
    return [match.group(1) for name in names if (match := _HOLD.fullmatch(name))]


async def dead_owners_tokens(server: TmuxServer) -> list[str]:
    """The tokens of the hold flags on ``server`` whose owner is dead."""
    tokens = hold_tokens(await server.run("show-options", "-s"))
    if not tokens:
        return []
    values = await asyncio.gather(*(_hold_value(server, token) for token in tokens))
    dead = []
    for token, value in zip(tokens, values, strict=True):
        owner = Owner.from_value(value) if value is not None else None
        if owner is not None and not owner.may_run(remote=not server.address.host.pids_here):
            dead.append(token)
    return dead


async def _hold_value(server: TmuxServer, token: str) -> str | None:
    """The value of the hold flag ``token``, or None when it is gone since it was listed
    (its wrapper's hold ended meanwhile: the hold script unsets it)."""
    try:
        lines = await server.run("show-options", "-s", "-v", f"@schemux_h_{token}")
    except TmuxCommandError as error:
        if "invalid option" in str(error):
            return None
        raise
    return "\n".join(lines)


async def release_abandoned_wrappers(server: TmuxServer) -> list[AbandonedWrapper]:
    """Free every shell that a dead schemux left in a wrapper on ``server``, and remove its
    options. A wrapper holding its shell after the command is released; a command whose
    caller died is interrupted as a person's C-c would (its shell returns to its prompt).
    Returns what was found."""
    tokens = await dead_owners_tokens(server)
    if not tokens:
        return []
    found = {token: AbandonedWrapper(token) for token in tokens}
    panes = await server.run("list-panes", "-a", "-F", "#{pane_id}")
    options = await asyncio.gather(*(_pane_options(server, pane_id) for pane_id in panes))
    for pane_id, lines in zip(panes, options, strict=True):
        for name, value in _option_lines(lines).items():
            match = _OPTION.fullmatch(name)
            if match and match.group(1) in found:
                found[match.group(1)] = AbandonedWrapper(match.group(1), pane_id, value)
    for wrapper in found.values():
        await _release(server, wrapper)
    return list(found.values())


async def _pane_options(server: TmuxServer, pane_id: str) -> list[str]:
    try:
        return await server.run("show-options", "-p", "-t", pane_id)
    except TmuxCommandError as error:
        if not error.target_gone:
            raise
        return []  # the pane went meanwhile


async def _release(server: TmuxServer, wrapper: AbandonedWrapper) -> None:
    """Only while the pane option is still there (the wrapper's own timer may have freed
    the shell meanwhile), in one tmux command: remove the options, after which the
    wrapper does nothing, then release the shell or interrupt the command. The names are
    ours (a pane id from tmux, a token of hex digits), so the command string holds no
    value from elsewhere."""
    names = WrapperNames(wrapper.token)
    hold, pane, option = names.hold, wrapper.pane_id, names.option
    if pane is None:  # its pane went: only the hold flag is left
        await server.run("set-option", "-s", "-u", hold)
        return
    then = f"wait-for -S {names.resume}" if wrapper.reported else f"send-keys -t {pane} C-c"
    commands = f"set-option -p -u -t {pane} {option};set-option -s -u {hold};{then}"
    try:
        await server.run(
            "if-shell", "-F", "-t", pane, f"#{{{option}}}", commands,
            THEN, "set-option", "-s", "-u", hold,
        )  # fmt: skip
    except TmuxCommandError as error:
        if not error.target_gone:
            raise
        await server.run("set-option", "-s", "-u", hold)
