"""The host that the settings name: this machine, or a new host of the kind whose
settings are given (owned by the caller, who closes it)."""

from __future__ import annotations

from schemux.host_settings import ExecTarget, HostTarget, SshTarget
from schemux.hosts.exec_prefix import ExecHost
from schemux.hosts.local import LOCAL
from schemux.hosts.protocol import Host
from schemux.hosts.ssh import SshHost


def host_for(target: HostTarget | None) -> Host:
    """This machine, or a new host of ``target``'s kind, which the caller owns (and
    closes: a connection runs until then)."""
    match target:
        case SshTarget():
            return SshHost(target)
        case ExecTarget():
            return ExecHost(target)
        case None:
            return LOCAL
