"""How a run_command command is typed into a pane and its output read back: a plug-in
per kind of pane.

A shell with schemux's hooks is not typed into through a typist:
``schemux.shell_hooked``.

* ``WrapperTypist``: any other POSIX shell: the command is typed inside the wrapper
  (``schemux.shell_wrapper``), and where its output starts is found from the prompt read
  just before typing and the wrapper's echo (``schemux.shell_output``).
"""

from __future__ import annotations

from typing import Protocol

from schemux.shell_capture import CURSOR_FORMAT, prompt_from, read_output
from schemux.shell_facts import shell_facts
from schemux.shell_output import Located, OutputEnd, Prompt
from schemux.shell_wrapper import Wrapper
from schemux.targets import PaneInfo
from schemux.tmux import TmuxServer
from schemux.tmux_command import THEN


class Typist(Protocol):
    wrapper: Wrapper

    def keys(self, command: str) -> tuple[str, ...]:
        """The tmux commands that arm the wrapper and type ``command``."""
        ...

    def typed(self, answer: list[str]) -> None:
        """What those commands printed."""
        ...

    @property
    def started(self) -> bool:
        """Whether the command is known to have started (after ``disarm``)."""
        ...

    async def dropped(self, server: TmuxServer, pane: PaneInfo) -> bool:
        """Whether the shell is back at its prompt without the report: an interrupt made
        it drop the rest of the typed line, report included."""
        ...

    async def read(
        self, server: TmuxServer, end: OutputEnd, then: tuple[str, ...], status: int | None
    ) -> Located:
        """The output rows up to ``end``, whether they are all of it, and how many rows of
        its head are known lost; ``then`` runs in the same tmux call as the capture;
        ``status`` is the exit status (None while the command runs)."""
        ...


def same_prompt(now: str, before: str) -> bool:
    """Whether the cursor's row shows the prompt it showed before typing: the same text,
    or (a prompt that shows the last status, as fish's does) the same first word of two
    characters or more, which no continuation prompt ("> ", an indent) begins with."""
    if now == before:
        return True
    first_now, first_before = now.split()[:1], before.split()[:1]
    return bool(first_before) and first_now == first_before and len(first_before[0]) >= 2


class WrapperTypist:
    """The command inside the typed wrapper."""

    def __init__(self, wrapper: Wrapper) -> None:
        self.wrapper = wrapper
        self.prompt = Prompt(0, 0)

    def keys(self, command: str) -> tuple[str, ...]:
        # the prompt (cursor and screen) is read in the same tmux call that types
        pane = self.wrapper.pane_id
        return (
            "display-message", "-p", "-t", pane, CURSOR_FORMAT,
            THEN, "capture-pane", "-p", "-t", pane,
            THEN, *self.wrapper.arm_and_type(command),
        )  # fmt: skip

    def typed(self, answer: list[str]) -> None:
        self.prompt = prompt_from(answer)

    @property
    def started(self) -> bool:
        return False  # unknown: the shell's state tells

    async def dropped(self, server: TmuxServer, pane: PaneInfo) -> bool:
        """The shell reads input, below the typed wrapper, on a row that shows the prompt
        it showed before typing (not a continuation prompt: input still being read)."""
        # a reading of its own each time (a remote one keeps its first answer)
        if not self.prompt.text.strip() or not await shell_facts(server).shell_reads_input(
            pane.pid
        ):
            return False
        lines = await server.run(
            "display-message", "-p", "-t", pane.pane_id, CURSOR_FORMAT,
            THEN, "capture-pane", "-p", "-t", pane.pane_id,
        )  # fmt: skip
        now = prompt_from(lines)
        below = now.history + now.row > self.prompt.history + self.prompt.row
        return below and same_prompt(now.text, self.prompt.text)

    async def read(
        self, server: TmuxServer, end: OutputEnd, then: tuple[str, ...], status: int | None
    ) -> Located:
        return await read_output(server, self.wrapper, self.prompt, end, then, status)
