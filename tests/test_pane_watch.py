"""A watched pane's state line as tmux prints it (schemux.domain.pane_watch), and which
sessions count as besides schemux's own."""

from __future__ import annotations

import pytest

from schemux.domain.pane_watch import parse_state
from schemux.tmux.format import SEPARATOR, encode
from schemux.tmux.owned_session import in_other_sessions


def state_line(*values: str) -> str:
    """A line as tmux prints the watch's state fields, each encoded."""
    return SEPARATOR.join(encode(value) for value in values)


def test_a_state_line_and_session_names_with_tabs_and_commas() -> None:
    state = parse_state(state_line("120", "5", "30", "4242", "0", "1", "user\tname,_schemux"))
    assert (state.history_size, state.cursor_y, state.height, state.pid) == (120, 5, 30, "4242")
    assert (state.dead, state.alternate_on, state.in_other_sessions) == (False, True, True)
    assert (
        parse_state(state_line("0", "0", "24", "1", "1", "0", "_schemux")).in_other_sessions
        is False
    )


@pytest.mark.parametrize(
    ("names", "other"),
    [
        ("_schemux", False),
        ("_schemux,_schemux", False),
        ("user,_schemux", True),
        ("a,b", True),
        (",", True),
    ],
)
def test_sessions_besides_schemux(names: str, other: bool) -> None:
    assert in_other_sessions(names) is other
