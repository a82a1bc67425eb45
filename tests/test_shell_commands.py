"""The command text run_command types (schemux.shell_commands), and when a pane's shell
counts as reading its input (schemux.shell_panes)."""

from __future__ import annotations

import pytest

from schemux.errors import SchemuxError
from schemux.shell_commands import check_command
from schemux.shell_panes import shell_reads_input


@pytest.mark.parametrize(
    ("command", "suppress", "message"),
    [
        ("", True, "must not be empty"),
        (" \n ", False, "must not be empty"),
        ("a\nb", True, "single line"),
        ("a\rb", False, "carriage return"),
    ],
)
def test_check_command(command: str, suppress: bool, message: str) -> None:
    with pytest.raises(SchemuxError, match=message):
        check_command(command, suppress)


def test_a_vanished_shell_counts_as_running() -> None:
    # no /proc entry: nothing says the shell is still reading, so no C-c is sent
    assert shell_reads_input(2**22 + 1) is False
