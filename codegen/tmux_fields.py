"""libtmux's knowledge of tmux's format names, as a table schemux reads at run time.

schemux.tmux.format refuses a typed row naming a field that the oldest tmux schemux serves
cannot print. Which names tmux has, and since which version, is libtmux's knowledge
(``libtmux.neo``), but importing libtmux costs schemux's cold start tens of milliseconds;
so codegen copies that knowledge into generated/tmux_fields.py, and ``--check`` fails when
an upgraded libtmux knows something else.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from importlib.metadata import version


@dataclass(frozen=True)
class TmuxFields:
    libtmux_version: str
    # The format names of libtmux.neo.Obj's dataclass fields.
    names: frozenset[str]
    # libtmux.neo.FIELD_VERSION: a format name -> the tmux version that added it.
    since: Mapping[str, str]


def libtmux_fields() -> TmuxFields:
    """What the installed libtmux knows."""
    from libtmux.neo import FIELD_VERSION, Obj

    return TmuxFields(
        libtmux_version=version("libtmux"),
        names=frozenset(item.name for item in dataclasses.fields(Obj)),
        since=dict(FIELD_VERSION),
    )
