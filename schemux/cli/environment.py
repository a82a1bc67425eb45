"""Every environment variable schemux reads, with its default and meaning: one table, so
``--help`` and the README cannot drift from the code (a test checks that each
``SCHEMUX_`` name the runtime mentions is here)."""

from __future__ import annotations

from dataclasses import dataclass

from schemux import config, host_settings, logs
from schemux.audit import log as audit
from schemux.config import DEFAULT_AGENT_SESSION, DEFAULT_AGENT_SIZE, SCHEMA_MODES, ProgramLimits
from schemux.http import config as http_config


@dataclass(frozen=True)
class Variable:
    name: str
    default: str
    meaning: str


def _mib(size: int) -> str:
    return f"{size // (1024 * 1024)} MiB" if size % (1024 * 1024) == 0 else f"{size} bytes"


_LIMITS = ProgramLimits()

VARIABLES: tuple[Variable, ...] = (
    Variable(config.ENV_SOCKET_NAME, "unset", "tmux server by socket name (-L)"),
    Variable(config.ENV_SOCKET_PATH, "unset", "tmux server by socket path (-S)"),
    Variable(config.ENV_SSH, "unset", "the tmux server is on this ssh host (--ssh)"),
    Variable(config.ENV_SSH_CONFIG, "unset", "ssh's config file for it, ssh -F (--ssh-config)"),
    Variable(
        config.ENV_EXEC,
        "unset",
        "the tmux server is where this command prefix runs commands (--exec)",
    ),
    Variable(
        config.ENV_HOST,
        "unset",
        "hosts by name, NAME=DEST, NAME=local or NAME=exec:PREFIX, one a line or ';'-separated "
        "(--host)",
    ),
    Variable(host_settings.ENV_HOSTS, "unset", "a TOML file of hosts by name (--hosts)"),
    Variable(
        host_settings.ENV_DEFAULT_HOST,
        "the first",
        "the host of a call naming none (--default-host)",
    ),
    Variable(
        config.ENV_MAX_CONNECTING,
        f"{host_settings.DEFAULT_MAX_CONNECTING}",
        "at most this many hosts connecting at once (--max-connecting)",
    ),
    Variable(
        host_settings.ENV_HOST_IDLE,
        f"{host_settings.DEFAULT_HOST_IDLE_SECONDS:g}",
        "seconds a host goes unused before its connection is closed (reopened on use)",
    ),
    Variable(
        config.ENV_WAIT_CEILING,
        f"{config.DEFAULT_WAIT_CEILING_SECONDS:g}",
        "longest wait of any call, in seconds (--wait-ceiling)",
    ),
    Variable(config.ENV_MAX_PROGRAMS, str(_LIMITS.max_running), "programs running at once"),
    Variable(
        config.ENV_RETAINED_PROGRAMS,
        str(_LIMITS.retained_ended),
        "ended programs whose output stays readable",
    ),
    Variable(config.ENV_OUTPUT_LIMIT, _mib(_LIMITS.output_limit), "bytes of text kept per program"),
    Variable(
        config.ENV_TOOLS,
        "every family not on request",
        "tools or families served, comma-separated, or all (--tools)",
    ),
    Variable(
        config.ENV_SCHEMAS,
        "projected",
        f"how tools/list serves schemas: {', '.join(SCHEMA_MODES)} (--schemas)",
    ),
    Variable(config.ENV_EXACT_SCHEMAS, "0", "1 is the same as SCHEMUX_SCHEMAS=exact"),
    Variable(
        config.ENV_AGENT_SESSION,
        DEFAULT_AGENT_SESSION,
        "the session made for the agent when schemux starts the configured server",
    ),
    Variable(
        config.ENV_AGENT_SIZE,
        f"{DEFAULT_AGENT_SIZE[0]}x{DEFAULT_AGENT_SIZE[1]}",
        "the agent session's window size, COLSxROWS, until a person attaches",
    ),
    Variable(
        config.ENV_PROGRAM_GATE,
        "auto",
        "the gate program panes run: auto (Perl where it can run, else Python), perl, python",
    ),
    Variable(
        config.ENV_TRACKING_BACKEND,
        "auto",
        "how tmux_capture binds the server: auto, peer-pidfd (Linux 6.5+), pidfd-open",
    ),
    Variable(http_config.ENV_TOKEN, "unset", "HTTP: bearer token, 16+ characters (--token-file)"),
    Variable(
        http_config.ENV_ALLOWED_HOSTS,
        "unset",
        "HTTP: more Host/Origin names, comma-separated (--allow-host)",
    ),
    Variable(
        http_config.ENV_MAX_SESSIONS,
        str(http_config.DEFAULT_MAX_SESSIONS),
        "HTTP: MCP sessions open at once",
    ),
    Variable(
        http_config.ENV_SESSION_IDLE_TIMEOUT,
        f"{http_config.DEFAULT_SESSION_IDLE_TIMEOUT:g}",
        "HTTP: seconds before an idle session ends",
    ),
    Variable(
        config.ENV_AUDIT_LOG,
        "state",
        "the audit log's file (--audit-log; default $XDG_STATE_HOME/schemux/audit.jsonl)",
    ),
    Variable(config.ENV_NO_AUDIT, "0", "1 records no tool call (--no-audit)"),
    Variable(
        config.ENV_AUDIT_REDACT,
        "0",
        "1 records command, keys, input and argv by length and SHA-256 (--audit-redact)",
    ),
    Variable(
        config.ENV_AUDIT_MAX_BYTES,
        _mib(config.DEFAULT_MAX_BYTES),
        f"the audit log rotates at this size; {audit.BACKUPS} old files are kept",
    ),
    Variable(config.ENV_NO_RECORD, "0", "1 records no program and no agent's call (--no-record)"),
    Variable(
        config.ENV_RECORD_MAX_BYTES,
        _mib(config.DEFAULT_RECORD_MAX_BYTES),
        "the recordings beside the audit log together; the oldest go first",
    ),
    Variable(
        config.ENV_RECORD_MAX_FILES,
        str(config.DEFAULT_RECORD_MAX_FILES),
        "the recordings kept beside the audit log; the oldest go first",
    ),
    Variable(logs.ENV_LOG_LEVEL, logs.DEFAULT_LEVEL, f"server log level: {', '.join(logs.LEVELS)}"),
    Variable(logs.ENV_LOG_FILE, "stderr", "the server's log is appended to this file"),
    Variable(
        http_config.ENV_HEAD_TIMEOUT,
        f"{http_config.DEFAULT_HEAD_SECONDS:g}",
        "HTTP: seconds a request's headers may take, then the connection is closed",
    ),
    Variable(
        http_config.ENV_BODY_TIMEOUT,
        f"{http_config.DEFAULT_BODY_SECONDS:g}",
        "HTTP: seconds a request's body may take after its headers",
    ),
    Variable(
        http_config.ENV_MAX_NEW_CONNECTIONS,
        str(http_config.DEFAULT_MAX_NEW_CONNECTIONS),
        "HTTP: connections without a whole request yet; beyond, the oldest is closed",
    ),
)


def help_text() -> str:
    """The ``environment:`` section of ``--help``."""
    width = max(len(variable.name) for variable in VARIABLES)
    default_width = max(len(variable.default) for variable in VARIABLES)
    lines = ["environment (options win over it; no socket setting: tmux's default server):"]
    for variable in VARIABLES:
        lines.append(
            f"  {variable.name:<{width}}  {variable.default:<{default_width}}  {variable.meaning}"
        )
    return "\n".join(lines)
