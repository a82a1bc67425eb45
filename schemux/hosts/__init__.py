"""Where the tmux server runs: hosts, as a plug-in.

``protocol.Host`` is what schemux needs of a host (its capabilities); each kind is one
module: ``local`` (this machine), ``ssh`` (OpenSSH, one multiplexed connection),
``exec_prefix`` (any command prefix: ``docker exec -i CTR``, ``kubectl exec -i POD --``);
what runs on a host that is not this machine is in ``remote_side``. A kind's
settings are data in ``schemux.config``; ``kinds.host_for`` makes the host that settings name.
Adding a kind is one module here, its settings in ``schemux.config``, and its row in ``kinds``.

This package's ``__init__`` imports only the protocol and the settings: the tmux access
imports it, and the kinds import the program hosts they make.
"""

from schemux.host_settings import ExecTarget, HostTarget, SshTarget
from schemux.hosts.protocol import Host

__all__ = ("ExecTarget", "Host", "HostTarget", "SshTarget")
