"""Server configuration, from command-line options and the environment: the settings
and the value types they are made of. A leaf: every layer may read settings, and this
module reads none of theirs (``schemux.errors``, ``schemux.names`` and the hosts' settings,
``schemux.host_settings``, alone)."""

from __future__ import annotations

import dataclasses
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Literal, TypeVar, get_args

from schemux.errors import ConfigError
from schemux.host_settings import (
    DEFAULT_HOST_IDLE_SECONDS,
    DEFAULT_MAX_CONNECTING,
    ENV_DEFAULT_HOST,
    ENV_HOST_IDLE,
    ENV_HOSTS,
    ExecTarget,
    FleetSettings,
    HostTarget,
    NamedHost,
    SshTarget,
    destination_problem,
    parse_host_option,
    parse_hosts_file,
    prefix_problem,
)
from schemux.names import agent_name_problem, socket_name_problem
from schemux.policy.file import ENV_POLICY, load_policy
from schemux.policy.rules import Policy

DEFAULT_WAIT_CEILING_SECONDS = 120.0

ENV_SOCKET_NAME = "SCHEMUX_SOCKET_NAME"
ENV_SOCKET_PATH = "SCHEMUX_SOCKET_PATH"
ENV_WAIT_CEILING = "SCHEMUX_WAIT_CEILING"
ENV_MAX_PROGRAMS = "SCHEMUX_MAX_PROGRAMS"
ENV_RETAINED_PROGRAMS = "SCHEMUX_RETAINED_PROGRAMS"
ENV_OUTPUT_LIMIT = "SCHEMUX_OUTPUT_LIMIT"
ENV_EXACT_SCHEMAS = "SCHEMUX_EXACT_SCHEMAS"
ENV_SCHEMAS = "SCHEMUX_SCHEMAS"
ENV_TOOLS = "SCHEMUX_TOOLS"
ENV_PROGRAM_GATE = "SCHEMUX_PROGRAM_GATE"
ENV_AGENT_SESSION = "SCHEMUX_AGENT_SESSION"
ENV_AGENT_SIZE = "SCHEMUX_AGENT_SIZE"
ENV_SSH = "SCHEMUX_SSH"
ENV_SSH_CONFIG = "SCHEMUX_SSH_CONFIG"
ENV_EXEC = "SCHEMUX_EXEC"
ENV_HOST = "SCHEMUX_HOST"
ENV_MAX_CONNECTING = "SCHEMUX_MAX_CONNECTING"
ENV_AUDIT_LOG = "SCHEMUX_AUDIT_LOG"
ENV_NO_AUDIT = "SCHEMUX_NO_AUDIT"
ENV_AUDIT_REDACT = "SCHEMUX_AUDIT_REDACT"
ENV_AUDIT_MAX_BYTES = "SCHEMUX_AUDIT_MAX_BYTES"
ENV_NO_RECORD = "SCHEMUX_NO_RECORD"
ENV_RECORD_MAX_BYTES = "SCHEMUX_RECORD_MAX_BYTES"
ENV_RECORD_MAX_FILES = "SCHEMUX_RECORD_MAX_FILES"
ENV_MASK_SECRETS = "SCHEMUX_MASK_SECRETS"

Choice = TypeVar("Choice", bound=str)

# how tools/list serves the schemas (schemux.serving.binding)
SchemaMode = Literal["projected", "compact", "exact", "openai-strict"]
SCHEMA_MODES: tuple[SchemaMode, ...] = get_args(SchemaMode)

# how tmux_capture binds the tmux server's identity (schemux.panes.identity)
TrackingSetting = Literal["auto", "peer-pidfd", "pidfd-open"]
TRACKING_SETTINGS: tuple[TrackingSetting, ...] = ("auto", "peer-pidfd", "pidfd-open")
ENV_TRACKING_BACKEND = "SCHEMUX_TRACKING_BACKEND"

# the gate program panes run (schemux.hosts.programs.gate)
GateSetting = Literal["auto", "perl", "python"]
GATE_SETTINGS: tuple[GateSetting, ...] = ("auto", "perl", "python")

DEFAULT_AGENT_SESSION = "agent"
DEFAULT_AGENT_SIZE = (160, 48)

# of one audit log file; with schemux.audit.log.BACKUPS old ones, 50 MiB at most
DEFAULT_MAX_BYTES = 10 * 1024 * 1024
# the recordings beside it (schemux.audit.recordings): together, and how many
DEFAULT_RECORD_MAX_BYTES = 256 * 1024 * 1024
DEFAULT_RECORD_MAX_FILES = 1000


@dataclass(frozen=True)
class AgentSession:
    """The name and size of the agent's session (``SCHEMUX_AGENT_SESSION``,
    ``SCHEMUX_AGENT_SIZE``)."""

    name: str = DEFAULT_AGENT_SESSION
    width: int = DEFAULT_AGENT_SIZE[0]
    height: int = DEFAULT_AGENT_SIZE[1]


def parse_size(text: str) -> tuple[int, int] | None:
    """``"160x48"`` -> (160, 48); None unless both are whole numbers tmux takes (1 to
    10000)."""
    width, separator, height = text.strip().partition("x")
    if not separator or not all(part.isascii() and part.isdigit() for part in (width, height)):
        return None
    size = int(width), int(height)
    return size if all(1 <= part <= 10000 for part in size) else None


@dataclass(frozen=True)
class AuditSettings:
    """Where the audit goes (``path``; None: no audit), whether the text of the
    arguments the tools' overlays redact (``generated.argument_facts``) is replaced by
    its hash, the size at which the file rotates, and whether secrets in the arguments
    are masked (``--mask-secrets``).
    ``Settings()`` audits nothing; ``settings_from`` gives the default path
    (:func:`default_path`) unless told otherwise."""

    path: Path | None = None
    redact: bool = False
    max_bytes: int = DEFAULT_MAX_BYTES
    mask: bool = False


@dataclass(frozen=True)
class RecordingSettings:
    """Where recordings go (``directory``: the audit log's; None: none are made), and
    their bounds: bytes together and files (one recording is cut at an eighth of the
    bytes)."""

    directory: Path | None = None
    max_bytes: int = DEFAULT_RECORD_MAX_BYTES
    max_files: int = DEFAULT_RECORD_MAX_FILES


def default_path(env: Mapping[str, str]) -> Path:
    """``$XDG_STATE_HOME/schemux/audit.jsonl``, or ``~/.local/state/...``; a relative
    ``XDG_STATE_HOME`` is ignored, as the XDG specification says."""
    state = env.get("XDG_STATE_HOME", "")
    if not os.path.isabs(state):
        state = os.path.join(env.get("HOME") or os.path.expanduser("~"), ".local", "state")
    return Path(state) / "schemux" / "audit.jsonl"


@dataclass(frozen=True)
class ProgramLimits:
    """What protects the machine: programs running at once, ended programs whose output
    stays readable, bytes of text kept per program, and lifetimes."""

    max_running: int = 16
    retained_ended: int = 32
    output_limit: int = 64 * 1024 * 1024
    default_lifetime: float = 600.0
    max_lifetime: float = 24 * 3600.0


@dataclass(frozen=True)
class Settings:
    """Where tmux is and how long any call may wait.

    ``socket_name`` and ``socket_path`` name the tmux server (``-L``/``-S``); with
    neither, tmux's own default server is used. ``wait_ceiling`` clamps every wait a
    tool makes, whatever timeout the call asks for. ``schemas`` is how tools/list serves
    the schemas (``SchemaMode``); ``tools`` names the tools or families to serve (empty:
    all), checked against the tools at start (``schemux.serving.selection``). ``program_gate``
    is the gate program panes run (``schemux.hosts.programs.gate``): "auto" (Perl where it can
    run, else Python), "perl" or "python" (whether a forced Perl gate can run here is
    checked as schemux starts, ``schemux.cli.main``). ``tracking_backend`` chooses how
    ``tmux_capture`` binds the tmux server's identity (``schemux.panes.identity``).
    ``agent`` is the session schemux makes, with the login shell the default target runs
    in, when the configured server is not running. ``ssh`` puts every tmux server (the
    configured one, and any a call names) on that host, reached with OpenSSH;
    ``exec_prefix`` on the host a command prefix reaches (``schemux.hosts``; one of the
    two at most). ``audit`` says where each tool call is recorded
    (``schemux.audit.log``; by default nowhere here, in the state directory from
    ``settings_from``); ``recording`` where programs and the agent's calls are recorded
    (beside the audit log, unless turned off). ``policy`` is the policy file's
    (``--policy``; None: none, every call goes on as asked); ``mask_secrets`` masks
    secrets in what the agent reads and the audit log (``--mask-secrets``, or the
    policy's ``mask_secrets``).
    """

    socket_name: str | None = None
    socket_path: str | None = None
    wait_ceiling: float = DEFAULT_WAIT_CEILING_SECONDS
    program_limits: ProgramLimits = field(default_factory=ProgramLimits)
    schemas: SchemaMode = "projected"
    tools: tuple[str, ...] = ()
    program_gate: GateSetting = "auto"
    tracking_backend: TrackingSetting = "auto"
    agent: AgentSession = field(default_factory=AgentSession)
    ssh: SshTarget | None = None
    exec_prefix: ExecTarget | None = None
    audit: AuditSettings = field(default_factory=AuditSettings)
    recording: RecordingSettings = field(default_factory=RecordingSettings)
    fleet: FleetSettings = field(default_factory=FleetSettings)
    policy: Policy | None = None
    mask_secrets: bool = False

    def __post_init__(self) -> None:
        if self.fleet.hosts and (self.ssh is not None or self.exec_prefix is not None):
            raise ConfigError(
                "give the host by --ssh/--exec or the hosts by name (--host, --hosts), not both"
            )
        problem = None if self.ssh is None else destination_problem(self.ssh.destination)
        if problem is not None:
            raise ConfigError(f"the ssh destination (--ssh, {ENV_SSH}) is not one: {problem}")
        problem = None if self.exec_prefix is None else prefix_problem(self.exec_prefix.prefix)
        if problem is not None:
            raise ConfigError(f"the command prefix (--exec, {ENV_EXEC}) is not one: {problem}")
        if self.ssh is not None and self.exec_prefix is not None:
            raise ConfigError(f"give one host: --ssh ({ENV_SSH}) or --exec ({ENV_EXEC}), not both")
        if self.socket_name is not None and self.socket_path is not None:
            raise ConfigError("give the tmux server by socket name or by socket path, not both")
        problem = None if self.socket_name is None else socket_name_problem(self.socket_name)
        if problem is not None:
            raise ConfigError(f"the socket name (-L, {ENV_SOCKET_NAME}) is not one: {problem}")
        problem = agent_name_problem(self.agent.name)
        if problem is not None:
            raise ConfigError(
                f"the agent session's name ({ENV_AGENT_SESSION}) is not one: {problem}"
            )
        if not (math.isfinite(self.wait_ceiling) and self.wait_ceiling > 0):
            raise ConfigError(
                f"the wait ceiling must be a positive number of seconds, not {self.wait_ceiling!r}"
            )
        if self.program_gate not in GATE_SETTINGS:
            raise ConfigError(
                f"{ENV_PROGRAM_GATE}={self.program_gate!r}: expected {' or '.join(GATE_SETTINGS)}"
            )
        if self.schemas not in SCHEMA_MODES:
            raise ConfigError(
                f"the schema mode (--schemas, {ENV_SCHEMAS}) {self.schemas!r}: expected "
                f"{', '.join(SCHEMA_MODES)}"
            )
        if self.tracking_backend not in TRACKING_SETTINGS:
            raise ConfigError(
                f"{ENV_TRACKING_BACKEND}={self.tracking_backend!r}: expected "
                f"{', '.join(TRACKING_SETTINGS)}"
            )

    @property
    def host_target(self) -> HostTarget | None:
        """The host of ``--ssh``/``--exec``: None for this machine (or a fleet)."""
        return self.ssh if self.ssh is not None else self.exec_prefix

    @property
    def named_hosts(self) -> bool:
        """Whether the hosts are configured by name (``--host``, ``--hosts``)."""
        return bool(self.fleet.hosts)

    @property
    def several_hosts(self) -> bool:
        """Whether more than one host is configured: calls choose among them."""
        return len(self.fleet.hosts) > 1

    def clamp_wait(self, seconds: float) -> float:
        return min(seconds, self.wait_ceiling)


@dataclass(frozen=True)
class SettingOptions:
    """The command-line options the settings are made from (``serve``, ``call``,
    ``doctor``): each one left unset defers to the environment (``settings_from``)."""

    socket_name: str | None = None
    socket_path: str | None = None
    wait_ceiling: float | None = None
    schemas: str | None = None
    tools: str | None = None
    ssh: str | None = None
    ssh_config: str | None = None
    exec_prefix: str | None = None
    audit_log: str | None = None
    no_audit: bool = False
    audit_redact: bool = False
    no_record: bool = False
    hosts: tuple[str, ...] = ()
    hosts_file: str | None = None
    default_host: str | None = None
    max_connecting: int | None = None
    policy: str | None = None
    mask_secrets: bool = False

    def settings(self, env: Mapping[str, str]) -> Settings:
        """The settings these options and ``env`` make."""
        return settings_from(env, **{name: getattr(self, name) for name in _OPTION_NAMES})


def settings_from(
    env: Mapping[str, str],
    *,
    socket_name: str | None = None,
    socket_path: str | None = None,
    wait_ceiling: float | None = None,
    schemas: str | None = None,
    tools: str | None = None,
    ssh: str | None = None,
    ssh_config: str | None = None,
    exec_prefix: str | None = None,
    audit_log: str | None = None,
    no_audit: bool = False,
    audit_redact: bool = False,
    no_record: bool = False,
    hosts: tuple[str, ...] = (),
    hosts_file: str | None = None,
    default_host: str | None = None,
    max_connecting: int | None = None,
    policy: str | None = None,
    mask_secrets: bool = False,
) -> Settings:
    """Options win over the environment; an option given for one of the two socket
    settings also overrides the environment's value for the other."""
    if socket_name is None and socket_path is None:
        socket_name = env.get(ENV_SOCKET_NAME) or None
        socket_path = env.get(ENV_SOCKET_PATH) or None
    if wait_ceiling is None:
        raw = env.get(ENV_WAIT_CEILING)
        if raw:
            try:
                wait_ceiling = float(raw)
            except ValueError:
                raise ConfigError(
                    f"{ENV_WAIT_CEILING}={raw!r} is not a number of seconds"
                ) from None
    defaults = ProgramLimits()
    limits = ProgramLimits(
        max_running=_count(env, ENV_MAX_PROGRAMS, defaults.max_running),
        retained_ended=_count(env, ENV_RETAINED_PROGRAMS, defaults.retained_ended),
        output_limit=_count(env, ENV_OUTPUT_LIMIT, defaults.output_limit),
    )
    audit = audit_settings(env, audit_log=audit_log, no_audit=no_audit, redact=audit_redact)
    policy_path = policy if policy is not None else env.get(ENV_POLICY) or None
    loaded = None if policy_path is None else load_policy(policy_path)
    mask = (
        mask_secrets or _flag(env, ENV_MASK_SECRETS) or (loaded is not None and loaded.mask_secrets)
    )
    return Settings(
        policy=loaded,
        mask_secrets=mask,
        socket_name=socket_name,
        socket_path=socket_path,
        wait_ceiling=DEFAULT_WAIT_CEILING_SECONDS if wait_ceiling is None else wait_ceiling,
        program_limits=limits,
        schemas=_schema_mode(env, schemas),
        tools=_names(tools if tools is not None else env.get(ENV_TOOLS, "")),
        program_gate=_choice(env, ENV_PROGRAM_GATE, GATE_SETTINGS),
        tracking_backend=_choice(env, ENV_TRACKING_BACKEND, TRACKING_SETTINGS),
        agent=_agent(env),
        ssh=_ssh(
            env,
            ssh,
            ssh_config,
            by_name=bool(hosts or hosts_file or env.get(ENV_HOST) or env.get(ENV_HOSTS)),
        ),
        exec_prefix=_exec_prefix(env, exec_prefix),
        audit=dataclasses.replace(audit, mask=mask),
        recording=recording_settings(env, audit, no_record=no_record),
        fleet=fleet_settings(
            env,
            hosts=hosts,
            hosts_file=hosts_file,
            default_host=default_host,
            max_connecting=max_connecting,
            ssh_config=ssh_config,
        ),
    )


_OPTION_NAMES = tuple(option.name for option in fields(SettingOptions))


def fleet_settings(
    env: Mapping[str, str],
    *,
    hosts: tuple[str, ...] = (),
    hosts_file: str | None = None,
    default_host: str | None = None,
    max_connecting: int | None = None,
    ssh_config: str | None = None,
) -> FleetSettings:
    """The named hosts: the hosts file's (``--hosts``, ``SCHEMUX_HOSTS``), then each
    ``--host`` (or, with none, ``SCHEMUX_HOST``'s, one a line or separated by ``;``)."""
    named: list[NamedHost] = []
    default = default_host if default_host is not None else env.get(ENV_DEFAULT_HOST) or None
    path = hosts_file if hosts_file is not None else env.get(ENV_HOSTS) or None
    if path is not None:
        from_file, file_default = parse_hosts_file(path)
        named.extend(from_file)
        default = default if default is not None else file_default
    options = hosts or tuple(
        part.strip() for part in re.split(r"[;\n]", env.get(ENV_HOST, "")) if part.strip()
    )
    config = ssh_config if ssh_config is not None else env.get(ENV_SSH_CONFIG) or None
    named.extend(parse_host_option(option, config) for option in options)
    if max_connecting is None:
        max_connecting = _count(env, ENV_MAX_CONNECTING, DEFAULT_MAX_CONNECTING)
    idle = env.get(ENV_HOST_IDLE)
    try:
        idle_seconds = DEFAULT_HOST_IDLE_SECONDS if not idle else float(idle)
    except ValueError:
        raise ConfigError(f"{ENV_HOST_IDLE}={idle!r} is not a number of seconds") from None
    return FleetSettings(tuple(named), default, max_connecting, idle_seconds)


def audit_settings(
    env: Mapping[str, str],
    *,
    audit_log: str | None = None,
    no_audit: bool = False,
    redact: bool = False,
) -> AuditSettings:
    """On by default, at ``audit.log.default_path``; ``--no-audit`` wins over a file named."""
    if no_audit or _flag(env, ENV_NO_AUDIT):
        return AuditSettings()
    max_bytes = _count(env, ENV_AUDIT_MAX_BYTES, DEFAULT_MAX_BYTES)
    redact = redact or _flag(env, ENV_AUDIT_REDACT)
    return AuditSettings(audit_path(env, audit_log), redact, max_bytes)


def recording_settings(
    env: Mapping[str, str], audit: AuditSettings, *, no_record: bool = False
) -> RecordingSettings:
    """Beside the audit log when there is one; none with ``--no-record`` (or
    ``SCHEMUX_NO_RECORD=1``) or ``--no-audit``, nor beside a log that is a device
    (``--audit-log /dev/null`` keeps nothing: its directory is /dev)."""
    if audit.path is None or no_record or _flag(env, ENV_NO_RECORD):
        return RecordingSettings()
    if audit.path.is_char_device():
        return RecordingSettings()
    return RecordingSettings(
        audit.path.parent,
        _count(env, ENV_RECORD_MAX_BYTES, DEFAULT_RECORD_MAX_BYTES),
        _count(env, ENV_RECORD_MAX_FILES, DEFAULT_RECORD_MAX_FILES),
    )


def audit_path(env: Mapping[str, str], audit_log: str | None = None) -> Path:
    """The audit log's file: the one named (absolute), or ``audit.log.default_path``."""
    named = audit_log if audit_log is not None else env.get(ENV_AUDIT_LOG) or None
    if named is None:
        return default_path(env)
    if named == "" or named.endswith("/") or "\0" in named:
        raise ConfigError(f"the audit log (--audit-log, {ENV_AUDIT_LOG}) must name a file")
    return Path(os.path.abspath(named))


def _ssh(
    env: Mapping[str, str], ssh: str | None, ssh_config: str | None, *, by_name: bool
) -> SshTarget | None:
    """``--ssh``'s host; ``--ssh-config`` alone is for the hosts named (``by_name``)."""
    destination = ssh if ssh is not None else env.get(ENV_SSH) or None
    config = ssh_config if ssh_config is not None else env.get(ENV_SSH_CONFIG) or None
    if destination is None:
        if config is not None and not by_name:
            raise ConfigError(
                f"an ssh config (--ssh-config, {ENV_SSH_CONFIG}) needs --ssh or a --host"
            )
        return None
    return SshTarget(destination, config)


def _exec_prefix(env: Mapping[str, str], option: str | None) -> ExecTarget | None:
    text = option if option is not None else env.get(ENV_EXEC) or None
    if text is None:
        return None
    try:
        return ExecTarget.parse(text)
    except ValueError as error:
        raise ConfigError(f"the command prefix (--exec, {ENV_EXEC}) is not one: {error}") from None


def _agent(env: Mapping[str, str]) -> AgentSession:
    raw_size = env.get(ENV_AGENT_SIZE)
    size = DEFAULT_AGENT_SIZE if not raw_size else parse_size(raw_size)
    if size is None:
        raise ConfigError(
            f"{ENV_AGENT_SIZE}={raw_size!r} is not a size: give COLUMNSxROWS, such as 160x48"
        )
    return AgentSession(env.get(ENV_AGENT_SESSION) or DEFAULT_AGENT_SESSION, *size)


def _flag(env: Mapping[str, str], name: str) -> bool:
    raw = env.get(name, "").strip().lower()
    if raw in ("", "0", "false", "no"):
        return False
    if raw in ("1", "true", "yes"):
        return True
    raise ConfigError(f"{name}={env[name]!r}: expected 1 or 0")


def _schema_mode(env: Mapping[str, str], option: str | None) -> SchemaMode:
    """The option's mode, else SCHEMUX_SCHEMAS's; SCHEMUX_EXACT_SCHEMAS=1 (the older
    spelling) is ``exact`` when neither is given."""
    if option is None and not env.get(ENV_SCHEMAS, "").strip() and _flag(env, ENV_EXACT_SCHEMAS):
        return "exact"
    if option is None:
        return _choice(env, ENV_SCHEMAS, SCHEMA_MODES)
    for mode in SCHEMA_MODES:
        if option == mode:
            return mode
    raise ConfigError(f"--schemas {option!r}: expected {' or '.join(SCHEMA_MODES)}")


def _choice(env: Mapping[str, str], name: str, choices: tuple[Choice, ...]) -> Choice:
    """One of ``choices`` as the variable ``name`` spells it (the first when unset)."""
    raw = env.get(name, "").strip().lower() or choices[0]
    for choice in choices:
        if raw == choice:
            return choice
    raise ConfigError(f"{name}={env[name]!r}: expected {' or '.join(choices)}")


def _names(raw: str) -> tuple[str, ...]:
    """``"commands, tmux_capture"`` -> ``("commands", "tmux_capture")``."""
    return tuple(name for name in (part.strip() for part in raw.split(",")) if name)


def _count(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name)
    if not raw:
        return default
    if not raw.isdigit() or int(raw) < 1:
        raise ConfigError(f"{name}={raw!r} is not a positive whole number")
    return int(raw)
