"""Shells left to a dead schemux: finding them by their private pane options, freeing them.

Each run_command arms a private pane option ``@schemux_<token>`` whose value ends with
its owner's mark, ``A <pid> <start ticks>`` (the schemux process and its start time in
clock ticks since boot, field 22 of /proc/PID/stat, so a recycled pid is not taken for
the owner). The wrapper's report keeps that mark: ``E <status> ... A <pid> <ticks>``.

A schemux killed with SIGKILL leaves its options, and with them the shells it typed
into: a command still running whose caller is gone (armed), or a wrapper holding its
shell for the capture that never comes (reported; the wrapper's own timer frees it after
``HOLD_SECONDS`` in any case). ``release_abandoned_wrappers`` ends both for owners that are
dead, and leaves every option of a live schemux alone, also a second one on the same
tmux server.
"""

from __future__ import annotations

import asyncio
import functools
import os
import re
from dataclasses import dataclass
from pathlib import Path

from schemux.errors import TmuxCommandError
from schemux.tmux import TmuxServer

OPTION_PREFIX = "@schemux_"
_OPTION = re.compile(r"@schemux_[0-9a-f]{16}")


@dataclass(frozen=True)
class Owner:
    """A schemux process, as its pid and its start time."""

    pid: int
    start_ticks: int

    @property
    def mark(self) -> str:
        return f"A {self.pid} {self.start_ticks}"

    @classmethod
    def from_value(cls, value: str) -> Owner | None:
        """The owner recorded at the end of an option's value (None when there is none)."""
        fields = value.split()
        if len(fields) < 3 or fields[-3] != "A":
            return None
        try:
            return cls(int(fields[-2]), int(fields[-1]))
        except ValueError:
            return None

    def alive(self) -> bool:
        return start_ticks(self.pid) == self.start_ticks


def start_ticks(pid: int) -> int | None:
    """Field 22 of /proc/PID/stat (start time in clock ticks since boot); None if gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    return int(stat.rsplit(b")", 1)[1].split()[19])


def this_process() -> Owner:
    """This schemux process's mark (read once per process: a fork gets its own)."""
    return _owner(os.getpid())


@functools.cache
def _owner(pid: int) -> Owner:
    ticks = start_ticks(pid)
    assert ticks is not None  # /proc/self always exists on Linux
    return Owner(pid, ticks)


@dataclass(frozen=True)
class AbandonedWrapper:
    pane_id: str
    option: str
    value: str

    @property
    def reported(self) -> bool:
        """The command ended and the wrapper holds its shell for a capture."""
        return self.value.startswith("E ")

    @property
    def token(self) -> str:
        return self.option.removeprefix(OPTION_PREFIX)

    @property
    def resume_channel(self) -> str:
        return f"schemux_resume_{self.token}"

    @property
    def hold_option(self) -> str:
        return f"@schemux_hold_{self.token}"


def parse_pane_options(pane_id: str, lines: list[str]) -> list[AbandonedWrapper]:
    """The run_command options among ``show-options -p`` lines whose owner is dead."""
    found = []
    for line in lines:
        name, _, value = line.partition(" ")
        if not _OPTION.fullmatch(name):
            continue
        value = value.strip().strip('"')
        owner = Owner.from_value(value)
        if owner is not None and not owner.alive():
            found.append(AbandonedWrapper(pane_id, name, value))
    return found


async def release_abandoned_wrappers(server: TmuxServer) -> list[AbandonedWrapper]:
    """Free every shell that a dead schemux left in a wrapper on ``server``, and remove its
    option. A wrapper holding its shell after the command is released; a command whose
    caller died is interrupted as a person's C-c would (its shell returns to its prompt).
    Returns what was released."""
    panes = await server.run("list-panes", "-a", "-F", "#{pane_id}")
    abandoned: list[AbandonedWrapper] = []
    options = await asyncio.gather(*(_pane_options(server, pane_id) for pane_id in panes))
    for pane_id, lines in zip(panes, options, strict=True):
        abandoned += parse_pane_options(pane_id, lines)
    for wrapper in abandoned:
        await _release(server, wrapper)
    return abandoned


async def _pane_options(server: TmuxServer, pane_id: str) -> list[str]:
    try:
        return await server.run("show-options", "-p", "-t", pane_id)
    except TmuxCommandError as error:
        if not error.target_gone:
            raise
        return []  # the pane went meanwhile


async def _release(server: TmuxServer, wrapper: AbandonedWrapper) -> None:
    """Only while the option is still there (the wrapper's own timer may have freed the
    shell meanwhile), in one tmux command: remove it, after which the wrapper does
    nothing, then release the shell or interrupt the command."""
    pane, option = wrapper.pane_id, wrapper.option
    if wrapper.reported:
        then = f"set-option -s -u {wrapper.hold_option};wait-for -S {wrapper.resume_channel}"
    else:
        then = f"send-keys -t {pane} C-c"
    try:
        await server.run(
            "if-shell",
            "-F",
            "-t",
            pane,
            f"#{{{option}}}",
            f"set-option -p -u -t {pane} {option};{then}",
        )
    except TmuxCommandError as error:
        if not error.target_gone:
            raise
