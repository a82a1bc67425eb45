"""A call's pane target (schemux.panes.targets): which of its ids wins, and ids of the wrong
shape refused."""

from __future__ import annotations

import pytest

from schemux.errors import SchemuxError
from schemux.panes.targets import PaneTarget


def test_target_precedence_and_shapes() -> None:
    assert PaneTarget(pane_id="%1", session_name="s").tmux_target() == "%1"
    assert PaneTarget(window_id="@2", session_id="$1").tmux_target() == "@2"
    # a session name is matched exactly, never read by tmux's target syntax
    assert PaneTarget(session_name="work").tmux_target() is None
    assert PaneTarget().tmux_target() is None
    for target in (PaneTarget(pane_id="1"), PaneTarget(window_id="%1"), PaneTarget(session_id="1")):
        with pytest.raises(SchemuxError, match="is not a tmux"):
            target.validate()
