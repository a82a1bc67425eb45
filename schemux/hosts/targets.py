"""The settings of each host kind, as data (``schemux.config`` holds one of them): which
host, checked before anything runs. The kinds themselves are ``schemux.hosts.<kind>``."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SshTarget:
    """``--ssh DEST`` and ``--ssh-config FILE``: the host, as ssh takes it (an alias of
    the ssh config, ``host``, ``user@host``, ``ssh://user@host:port``)."""

    destination: str
    config: str | None = None


def destination_problem(destination: str) -> str | None:
    """Why ``destination`` cannot be given to ssh as a host, or None."""
    if destination == "":
        return "it is empty"
    if destination.startswith("-"):
        return "it starts with '-', which ssh would read as an option"
    if any(char.isspace() or ord(char) < 0x20 or char == "\x7f" for char in destination):
        return "it contains whitespace or a control character"
    return None


HostTarget = SshTarget
