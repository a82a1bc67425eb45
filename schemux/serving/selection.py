"""Which tools a server serves: ``--tools`` / ``SCHEMUX_TOOLS``, by name or family.

Each tool's schema costs an agent's context on every request, so a deployment can serve
only what it uses. A family is a name for tools that do one kind of job; a tool belongs
to one, named in its overlay (``schemas/overlays/<tool>.toml``, generated into
``schemux.generated.tool_facts``). A name the user gives must be a bound tool, a family,
or ``all`` (every tool). Without a name, every family is served but those
``schemas/families.toml`` serves on request (``ON_REQUEST_FAMILIES``): what a model is
given of the default selection stays within its budget. A tool whose overlay says
``several_hosts`` (fanning out to hosts) is served only while more than one host is
configured.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TypeVar

from schemux.errors import ConfigError
from schemux.generated.tool_facts import FAMILIES, ON_REQUEST_FAMILIES, SEVERAL_HOSTS_TOOLS

Bound = TypeVar("Bound")
ALL = "all"  # every tool, those of the families served on request too


def family_of(tool: str) -> str | None:
    for family, members in FAMILIES.items():
        if tool in members:
            return family
    return None


def select(
    bound: Mapping[str, Bound], requested: Iterable[str], *, several_hosts: bool
) -> dict[str, Bound]:
    """The tools of ``bound`` that ``requested`` names (when it names none, those of every
    family not served on request; ``all``: every one), in ``bound``'s order; without
    ``several_hosts`` (one host configured), none of those that need several.

    Raises :class:`ConfigError` naming every unknown name and listing the valid ones, and
    a tool named that needs several hosts when there is one.
    """
    requested = list(requested)
    if not several_hosts:
        needing = [name for name in requested if name in SEVERAL_HOSTS_TOOLS]
        if needing:
            raise ConfigError(
                f"{', '.join(needing)} in --tools: served only with more than one host "
                "configured (--host, --hosts)"
            )
        bound = {name: value for name, value in bound.items() if name not in SEVERAL_HOSTS_TOOLS}
    if not requested:
        on_request = {tool for family in ON_REQUEST_FAMILIES for tool in FAMILIES[family]}
        return {name: value for name, value in bound.items() if name not in on_request}
    chosen: set[str] = set()
    unknown = []
    for name in requested:
        if name == ALL:
            chosen.update(bound)
        elif name in bound:
            chosen.add(name)
        elif name in FAMILIES:
            chosen.update(tool for tool in FAMILIES[name] if tool in bound)
        else:
            unknown.append(name)
    if unknown:
        families = [family for family in FAMILIES if any(t in bound for t in FAMILIES[family])]
        raise ConfigError(
            f"unknown tool or family {', '.join(repr(name) for name in unknown)} in --tools; "
            f"valid tools: {', '.join(bound)}; valid families: {', '.join(families)}; "
            f"or {ALL}"
        )
    return {name: value for name, value in bound.items() if name in chosen}
