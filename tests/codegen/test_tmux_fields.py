"""generated/tmux_fields.py: libtmux's record of tmux's format names, kept current by codegen."""

from __future__ import annotations

from pathlib import Path

import libtmux.neo
import pytest

from codegen import tmux_fields
from codegen.pipeline import make_plan, out_of_date
from schemux.generated import tmux_fields as generated

TABLE = Path("generated/tmux_fields.py")


def test_the_table_is_what_the_installed_libtmux_knows() -> None:
    known = tmux_fields.libtmux_fields()

    assert known.libtmux_version == generated.LIBTMUX_VERSION
    assert known.names == generated.FORMAT_NAMES
    assert known.since == generated.FIELD_VERSION
    assert "pane_id" in generated.FORMAT_NAMES
    assert generated.FIELD_VERSION["pane_flags"] == "3.7"


def test_a_libtmux_upgrade_that_changes_the_table_is_drift(
    repo_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An upgraded libtmux: a newer version that dates a field differently.
    monkeypatch.setattr(tmux_fields, "version", lambda name: "0.62.99")
    monkeypatch.setitem(libtmux.neo.FIELD_VERSION, "pane_dead_signal", "3.8")

    plan = make_plan(repo_root)

    assert out_of_date(repo_root, plan) == [TABLE]
    text = plan.files[TABLE]
    assert text is not None
    assert 'LIBTMUX_VERSION = "0.62.99"' in text
    assert '"pane_dead_signal": "3.8",' in text
    assert text.startswith('"""tmux\'s format names as libtmux 0.62.99 knows them')
