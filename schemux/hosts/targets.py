"""The settings of each host kind, as data (``schemux.config`` holds one of them): which
host, checked before anything runs. The kinds themselves are ``schemux.hosts.<kind>``."""

from __future__ import annotations

import shlex
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


@dataclass(frozen=True)
class ExecTarget:
    """``--exec PREFIX``: the argv that runs a command on the target with this process's
    stdin and stdout (``docker exec -i CTR``, ``kubectl exec -i POD --``), split as a POSIX
    shell splits it."""

    prefix: tuple[str, ...]

    @classmethod
    def parse(cls, text: str) -> ExecTarget:
        """The prefix of ``--exec``'s text; ValueError saying why it is not one."""
        words = tuple(shlex.split(text))
        problem = prefix_problem(words)
        if problem is not None:
            raise ValueError(problem)
        return cls(words)


def prefix_problem(prefix: tuple[str, ...]) -> str | None:
    """Why ``prefix`` cannot be run as a command prefix, or None."""
    if not prefix or prefix[0] == "":
        return "it names no command"
    if prefix[0].startswith("-"):
        return "it starts with '-', not a command"
    if any("\0" in word for word in prefix):
        return "it contains a NUL character"
    return None


HostTarget = SshTarget | ExecTarget
