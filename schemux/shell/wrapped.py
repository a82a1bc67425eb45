"""How a run_command command is typed inside the wrapper (``schemux.shell.wrapper``) into
a shell without schemux's hooks, and its output read back: where it starts is found from
the prompt read just before typing and the wrapper's echo (``schemux.shell.output``). A
shell with the hooks is typed into by ``schemux.shell.hooked``.
"""

from __future__ import annotations

import enum

from schemux.panes.targets import PaneInfo
from schemux.shell.capture import CURSOR_FORMAT, prompt_from, read_output
from schemux.shell.facts import shell_facts
from schemux.shell.output import Located, OutputEnd, Prompt
from schemux.shell.wrapper import Wrapper
from schemux.tmux.command import THEN
from schemux.tmux.server import TmuxServer


class WrapperOutcome(enum.Enum):
    """How the wait for a typed wrapper's report ended (``shell.commands``, where the
    wrapper reports to tmux; ``shell.reported``, where it reports to the host's helper)."""

    REPORTED = "reported"
    TIMED_OUT = "timed out"
    ABORTED = "aborted"  # the shell dropped the rest of the typed line: a C-c


def same_prompt(now: str, before: str) -> bool:
    """Whether the cursor's row shows the prompt it showed before typing: the same text,
    or (a prompt that shows the last status, as fish's does) the same first word of two
    characters or more, which no continuation prompt ("> ", an indent) begins with."""
    if now == before:
        return True
    first_now, first_before = now.split()[:1], before.split()[:1]
    return bool(first_before) and first_now == first_before and len(first_before[0]) >= 2


class WrapperTypist:
    """The command inside the typed wrapper: ``prompt_reading`` then ``keys`` read the
    prompt, arm it and type, ``typed`` takes what they printed (the prompt), ``dropped``
    tells an interrupt that took the report with the rest of the line, ``read`` reads
    the output rows."""

    def __init__(self, wrapper: Wrapper) -> None:
        self.wrapper = wrapper
        self.prompt = Prompt(0, 0)

    def prompt_reading(self) -> tuple[str, ...]:
        """The tmux commands that read the prompt (cursor and screen): the start of the
        tmux call that types, whose lines ``typed`` takes."""
        pane = self.wrapper.pane_id
        return (
            "display-message", "-p", "-t", pane, CURSOR_FORMAT,
            THEN, "capture-pane", "-p", "-t", pane,
        )  # fmt: skip

    def keys(self, command: str) -> tuple[str, ...]:
        """The rest of that call (after a ``THEN``): arm the wrapper and type it."""
        return (THEN, *self.wrapper.arm_and_type(command))

    def typed(self, answer: list[str]) -> None:
        self.prompt = prompt_from(answer)

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
