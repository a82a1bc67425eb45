"""The hosts a configuration names: ssh destinations and command prefixes checked, hosts by
name with their groups (``--host``, a hosts file), and how the fleet of them behaves. A
leaf like ``schemux.config``, which holds these among the settings."""

from __future__ import annotations

import math
import re
import shlex
import tomllib
from dataclasses import dataclass

from schemux.errors import ConfigError, preview

ENV_DEFAULT_HOST = "SCHEMUX_DEFAULT_HOST"
ENV_HOST_IDLE = "SCHEMUX_HOST_IDLE"
ENV_HOSTS = "SCHEMUX_HOSTS"


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

# a configured host's name: what a call's ``host`` says, the audit log records and a
# resource URI's authority is (lower case, so it reads the same in a URI)
HOST_NAME = re.compile(r"[a-z0-9][a-z0-9_.-]{0,62}")
HOST_NAME_RULE = "1 to 63 of a-z 0-9 _ . -, starting with a letter or digit"
DEFAULT_MAX_CONNECTING = 8
DEFAULT_HOST_IDLE_SECONDS = 600.0
HOST_KINDS = ("local", "ssh", "exec")


def host_name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a configured host, or None."""
    if HOST_NAME.fullmatch(name) is None:
        return f"{preview(name)} is not a host name ({HOST_NAME_RULE})"
    return None


@dataclass(frozen=True)
class NamedHost:
    """One host of the fleet (``--host NAME=DEST``, a ``[hosts.NAME]`` table of
    ``--hosts FILE``): its name, where it is (None: this machine) and its groups."""

    name: str
    target: HostTarget | None = None
    groups: tuple[str, ...] = ()


@dataclass(frozen=True)
class FleetSettings:
    """The hosts configured by name (none: the one host of ``--ssh``/``--exec``, or this
    machine), the one a call without ``host`` goes to (None: the first), how many hosts
    may be connecting at once, and how long an unused host stays connected."""

    hosts: tuple[NamedHost, ...] = ()
    default: str | None = None
    max_connecting: int = DEFAULT_MAX_CONNECTING
    idle_seconds: float = DEFAULT_HOST_IDLE_SECONDS

    def __post_init__(self) -> None:
        seen: set[str] = set()
        for host in self.hosts:
            problem = host_name_problem(host.name)
            if problem is not None:
                raise ConfigError(f"a host's name (--host, --hosts): {problem}")
            if host.name in seen:
                raise ConfigError(f"the host name {host.name!r} is configured twice")
            seen.add(host.name)
            for group in host.groups:
                problem = host_name_problem(group)
                if problem is not None:
                    raise ConfigError(f"a group of host {host.name!r}: {problem}")
                if any(group == other.name for other in self.hosts):
                    raise ConfigError(
                        f"the group {group!r} of host {host.name!r} has a host's name"
                    )
            problem = _target_problem(host.target)
            if problem is not None:
                raise ConfigError(f"host {host.name!r}: {problem}")
        if self.default is not None and self.default not in seen:
            raise ConfigError(
                f"the default host ({ENV_DEFAULT_HOST}, --default-host) {preview(self.default)} "
                "is not a configured host"
            )
        if self.max_connecting < 1:
            raise ConfigError(f"at most {self.max_connecting} hosts connecting: give 1 or more")
        if not (math.isfinite(self.idle_seconds) and self.idle_seconds > 0):
            raise ConfigError(
                f"the idle time of a host ({ENV_HOST_IDLE}) must be a positive number of "
                f"seconds, not {self.idle_seconds!r}"
            )

    def same_targets(self) -> tuple[tuple[str, ...], ...]:
        """The names configured for one target, where more than one is (their hosts reach
        the same tmux servers, as every host's server is the configured socket there):
        each such group once, in configuration order."""
        groups: dict[HostTarget | None, list[str]] = {}
        for host in self.hosts:
            groups.setdefault(host.target, []).append(host.name)
        return tuple(tuple(names) for names in groups.values() if len(names) > 1)


def _target_problem(target: HostTarget | None) -> str | None:
    match target:
        case SshTarget():
            problem = destination_problem(target.destination)
            return None if problem is None else f"the ssh destination is not one: {problem}"
        case ExecTarget():
            problem = prefix_problem(target.prefix)
            return None if problem is None else f"the command prefix is not one: {problem}"
        case None:
            return None


def parse_host_option(text: str, ssh_config: str | None = None) -> NamedHost:
    """``NAME=DEST`` (an ssh destination, as ``--ssh`` takes it), ``NAME=local`` or
    ``NAME=exec:PREFIX`` (split as a POSIX shell splits it); ConfigError naming what is
    wrong."""
    name, separator, where = text.partition("=")
    if not separator:
        raise ConfigError(f"--host {preview(text)}: give NAME=DEST, NAME=local or NAME=exec:PREFIX")
    problem = host_name_problem(name)
    if problem is not None:
        raise ConfigError(f"--host {preview(text)}: {problem}")
    if where == "local":
        return NamedHost(name)
    if where.startswith("exec:"):
        try:
            prefix = tuple(shlex.split(where.removeprefix("exec:")))
        except ValueError as error:
            raise ConfigError(f"--host {name}: the command prefix is not one: {error}") from None
        return NamedHost(name, ExecTarget(prefix))
    return NamedHost(name, SshTarget(where, ssh_config))


_FILE_KEYS = frozenset({"kind", "destination", "prefix", "ssh_config", "groups"})


def parse_hosts_file(path: str) -> tuple[tuple[NamedHost, ...], str | None]:
    """The hosts of a TOML file (``--hosts FILE``) and its default host::

        default = "web1"            # optional: the first host otherwise
        [hosts.web1]
        kind = "ssh"                # "ssh" (the default), "exec" or "local"
        destination = "alice@web1.example.com"
        ssh_config = "/home/alice/.ssh/fleet_config"   # optional (ssh -F)
        groups = ["web"]
        [hosts.db]
        kind = "exec"
        prefix = ["docker", "exec", "-i", "db"]

    ConfigError names the file and the field that is wrong."""
    try:
        with open(path, "rb") as file:
            data = tomllib.load(file)
    except OSError as error:
        raise ConfigError(
            f"the hosts file (--hosts, {ENV_HOSTS}) cannot be read: {error}"
        ) from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"the hosts file {path} is not TOML: {error}") from None
    except RecursionError:  # tomllib reads nested arrays and inline tables recursively
        raise ConfigError(
            f"the hosts file {path} is not TOML: it nests arrays or tables too deep"
        ) from None
    unknown = sorted(set(data) - {"default", "hosts"})
    if unknown:
        raise ConfigError(
            f"the hosts file {path}: unknown key {unknown[0]!r} (expected default, hosts)"
        )
    default = data.get("default")
    if default is not None and not isinstance(default, str):
        raise ConfigError(f"the hosts file {path}: default must be a host's name")
    tables = data.get("hosts", {})
    if not isinstance(tables, dict) or not tables:
        raise ConfigError(f"the hosts file {path} configures no host: add [hosts.NAME] tables")
    return tuple(_file_host(path, name, table) for name, table in tables.items()), default


def _file_host(path: str, name: str, table: object) -> NamedHost:
    where = f"the hosts file {path}, hosts.{preview(name)}"
    problem = host_name_problem(name)
    if problem is not None:
        raise ConfigError(f"{where}: {problem}")
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: must be a table")
    unknown = sorted(set(table) - _FILE_KEYS)
    if unknown:
        raise ConfigError(
            f"{where}: unknown key {preview(unknown[0])} (expected {', '.join(sorted(_FILE_KEYS))})"
        )
    kind = table.get("kind", "ssh")
    groups = table.get("groups", [])
    if not isinstance(groups, list) or not all(isinstance(group, str) for group in groups):
        raise ConfigError(f"{where}.groups: must be a list of group names")

    def field_(key: str, kinds: tuple[str, ...]) -> object:
        if key in table and kind not in kinds:
            raise ConfigError(f"{where}.{key}: a {kind} host takes none")
        return table.get(key)

    destination = field_("destination", ("ssh",))
    prefix = field_("prefix", ("exec",))
    config = field_("ssh_config", ("ssh",))
    target: HostTarget | None
    if kind == "local":
        target = None
    elif kind == "ssh":
        if not isinstance(destination, str):
            raise ConfigError(f"{where}.destination: an ssh host needs its destination (a string)")
        if config is not None and not isinstance(config, str):
            raise ConfigError(f"{where}.ssh_config: must be a file's path")
        target = SshTarget(destination, config)
    elif kind == "exec":
        if not isinstance(prefix, list) or not all(isinstance(word, str) for word in prefix):
            raise ConfigError(f"{where}.prefix: an exec host needs its prefix (a list of words)")
        target = ExecTarget(tuple(prefix))
    else:
        raise ConfigError(f"{where}.kind: {preview(str(kind))}: expected {', '.join(HOST_KINDS)}")
    problem = _target_problem(target)
    if problem is not None:
        raise ConfigError(f"{where}: {problem}")
    return NamedHost(name, target, tuple(groups))
