"""Which tools a server serves: ``--tools`` / ``SCHEMUX_TOOLS``, by name or family.

Each tool's schema costs an agent's context on every request, so a deployment can serve
only what it uses. A family is a name for tools that do one kind of job; a tool belongs
to at most one. The table may name tools not bound yet (a family is complete before its
last tool lands); a name the user gives must be a bound tool or a family.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TypeVar

from schemux.errors import ConfigError

FAMILIES: dict[str, tuple[str, ...]] = {
    "commands": ("run_command", "run_shell_command"),
    "programs": ("start_program", "read_program", "stop_program", "run_program"),
    "capture": ("capture_pane", "tmux_capture", "tmux_snapshot", "capture_since", "snapshot_pane"),
    "keys": ("send_keys", "send_keys_batch", "wait_for_text", "wait_for_channel", "signal_channel"),
}

Bound = TypeVar("Bound")


def family_of(tool: str) -> str | None:
    for family, members in FAMILIES.items():
        if tool in members:
            return family
    return None


def select(bound: Mapping[str, Bound], requested: Iterable[str]) -> dict[str, Bound]:
    """The tools of ``bound`` that ``requested`` names (all when it names none), in
    ``bound``'s order.

    Raises :class:`ConfigError` naming every unknown name and listing the valid ones.
    """
    requested = list(requested)
    if not requested:
        return dict(bound)
    chosen: set[str] = set()
    unknown = []
    for name in requested:
        if name in bound:
            chosen.add(name)
        elif name in FAMILIES:
            chosen.update(tool for tool in FAMILIES[name] if tool in bound)
        else:
            unknown.append(name)
    if unknown:
        families = [family for family in FAMILIES if any(t in bound for t in FAMILIES[family])]
        raise ConfigError(
            f"unknown tool or family {', '.join(repr(name) for name in unknown)} in --tools; "
            f"valid tools: {', '.join(bound)}; valid families: {', '.join(families)}"
        )
    return {name: value for name, value in bound.items() if name in chosen}
