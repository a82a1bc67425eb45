"""What ``schemux serve --http`` was told: where to listen, who may call, how many sessions.

Every tool runs commands as the user, so the HTTP endpoint is locked: a bind address that
is not loopback is refused unless a bearer token is set, and the Host and Origin checks
that stop DNS rebinding stay on for every bind (``http.security``).
"""

from __future__ import annotations

import ipaddress
import math
import os
import socket
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from schemux.errors import ConfigError

ENV_TOKEN = "SCHEMUX_HTTP_TOKEN"
ENV_ALLOWED_HOSTS = "SCHEMUX_ALLOWED_HOSTS"
ENV_MAX_SESSIONS = "SCHEMUX_HTTP_MAX_SESSIONS"
ENV_SESSION_IDLE_TIMEOUT = "SCHEMUX_HTTP_SESSION_IDLE_TIMEOUT"
ENV_HEAD_TIMEOUT = "SCHEMUX_HTTP_HEAD_TIMEOUT"
ENV_BODY_TIMEOUT = "SCHEMUX_HTTP_BODY_TIMEOUT"
ENV_MAX_NEW_CONNECTIONS = "SCHEMUX_HTTP_MAX_NEW_CONNECTIONS"

# A local tool server has a handful of clients; the SDK's default (10,000) would let one
# misbehaving client hold thousands of sessions. An idle session (no request in flight,
# no open stream) ends after the timeout; its client starts a new one (MCP: on 404).
DEFAULT_MAX_SESSIONS = 64
DEFAULT_SESSION_IDLE_TIMEOUT = 1800.0
# before anything is authenticated (http_guard): a request head is whole within this
# long, its body within that long after it, and so many connections may be without one
DEFAULT_HEAD_SECONDS = 10.0
DEFAULT_BODY_SECONDS = 30.0
DEFAULT_MAX_NEW_CONNECTIONS = 32
MIN_TOKEN_LENGTH = 16
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")
_WILDCARDS = ("0.0.0.0", "::")


@dataclass(frozen=True)
class HttpConfig:
    host: str
    port: int
    token: str | None
    # Host header values accepted besides the loopback names and the bind address:
    # "name" (any port, or none) or "name:port"
    allowed_hosts: tuple[str, ...] = ()
    max_sessions: int = DEFAULT_MAX_SESSIONS
    session_idle_timeout: float = DEFAULT_SESSION_IDLE_TIMEOUT
    head_seconds: float = DEFAULT_HEAD_SECONDS
    body_seconds: float = DEFAULT_BODY_SECONDS
    max_new_connections: int = DEFAULT_MAX_NEW_CONNECTIONS

    @property
    def url(self) -> str:
        return f"http://{_bracketed(self.host)}:{self.port}/mcp"

    def listen(self) -> socket.socket:
        """The listening socket, bound before serving starts, so that a port in use
        stops the start with one line, and the banner comes once connections queue."""
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        listener = socket.socket(family, socket.SOCK_STREAM)
        try:
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.bind((self.host, self.port))
            listener.listen(128)
        except OSError as error:
            listener.close()
            raise ConfigError(f"cannot listen on {self.url}: {error.strerror or error}") from None
        return listener

    def serving(self) -> str:
        """Where and how it serves, for the start line ``serve --http`` prints on stderr
        once it listens."""
        if self.token is not None:
            return f"serving MCP at {self.url} (bearer token required)"
        return (
            f"serving MCP at {self.url} (no token required: any local user can "
            f"call its tools; set {ENV_TOKEN} or --token-file to require one)"
        )

    def host_patterns(self) -> list[str]:
        """Host header values the DNS-rebinding check accepts, as the SDK matches them
        ("host:port" exactly, "host:*" for any port)."""
        patterns = [f"{host}:*" for host in LOOPBACK_HOSTS]
        if self.host not in _WILDCARDS:
            patterns.append(f"{_bracketed(self.host)}:{self.port}")
        for allowed in self.allowed_hosts:
            name, port = _split_host(allowed)
            patterns += [f"{name}:{port}"] if port else [name, f"{name}:*"]
        return list(dict.fromkeys(patterns))

    def origin_patterns(self) -> list[str]:
        """Origin header values accepted: the same hosts, over http or https."""
        return [
            f"{scheme}://{host}" for host in self.host_patterns() for scheme in ("http", "https")
        ]


def http_config_from(
    env: Mapping[str, str],
    address: str,
    *,
    token_file: str | None = None,
    allowed_hosts: Sequence[str] = (),
) -> HttpConfig:
    """The HTTP settings from ``--http [HOST:]PORT``, the options and the environment
    (options win); refuses what would leave the tools open to the network."""
    host, port = parse_http_address(address)
    token = read_token_file(token_file) if token_file else env.get(ENV_TOKEN) or None
    if token is not None:
        check_token(token, f"--token-file {token_file}" if token_file else ENV_TOKEN)
    if not allowed_hosts:
        allowed_hosts = [h.strip() for h in env.get(ENV_ALLOWED_HOSTS, "").split(",") if h.strip()]
    for allowed in allowed_hosts:
        check_allowed_host(allowed)
    if token is None and not is_loopback(host):
        raise ConfigError(
            f"refusing to serve HTTP on {host} without a token: anyone who can reach the "
            f"port could run commands as you; set {ENV_TOKEN} or --token-file FILE, or "
            "listen on 127.0.0.1"
        )
    return HttpConfig(
        host=host,
        port=port,
        token=token,
        allowed_hosts=tuple(_normalized_host(allowed) for allowed in allowed_hosts),
        max_sessions=_positive_int(env, ENV_MAX_SESSIONS, DEFAULT_MAX_SESSIONS),
        session_idle_timeout=_positive_seconds(
            env, ENV_SESSION_IDLE_TIMEOUT, DEFAULT_SESSION_IDLE_TIMEOUT
        ),
        head_seconds=_positive_seconds(env, ENV_HEAD_TIMEOUT, DEFAULT_HEAD_SECONDS),
        body_seconds=_positive_seconds(env, ENV_BODY_TIMEOUT, DEFAULT_BODY_SECONDS),
        max_new_connections=_positive_int(
            env, ENV_MAX_NEW_CONNECTIONS, DEFAULT_MAX_NEW_CONNECTIONS
        ),
    )


def parse_http_address(value: str) -> tuple[str, int]:
    host, _, port = value.rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise ConfigError(f"--http {value!r}: expected [HOST:]PORT with a port from 1 to 65535")
    return host, int(port)


def read_token_file(path: str) -> str:
    """The token in ``path``: its first line, without the line break. A file that group
    or others have any access to is refused, as ssh refuses such a key."""
    try:
        mode = os.stat(path).st_mode
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"--token-file {path}: cannot read it ({error})") from None
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise ConfigError(
            f"--token-file {path}: group or others have access to it (mode "
            f"{stat.S_IMODE(mode):o}); chmod 600 {path}"
        )
    lines = text.splitlines()
    return lines[0] if lines else ""


def check_token(token: str, source: str) -> None:
    if not all("!" <= char <= "~" for char in token):
        raise ConfigError(
            f"{source}: the token must be printable ASCII without spaces, as an "
            "Authorization header carries it"
        )
    if len(token) < MIN_TOKEN_LENGTH:
        raise ConfigError(
            f"{source}: the token is too short to guess safely; use at least "
            f"{MIN_TOKEN_LENGTH} characters, e.g. from "
            "python3 -c 'import secrets; print(secrets.token_urlsafe(32))'"
        )


def check_allowed_host(value: str) -> None:
    name, port = _split_host(_normalized_host(value))
    plain = name[1:-1] if name.startswith("[") and name.endswith("]") else name
    if (
        not plain
        or any(char in plain for char in "/*@,?#[]")
        or any(char.isspace() for char in plain)
        or (port and not (port.isdigit() and 0 < int(port) < 65536))
    ):
        raise ConfigError(
            f"--allow-host {value[:80]!r}: expected a host name or address, optionally "
            "with :PORT (e.g. myhost.example or myhost.example:8765)"
        )


def is_loopback(host: str) -> bool:
    """Whether every address ``host`` names is a loopback address."""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    try:
        found = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except OSError as error:
        raise ConfigError(f"--http: cannot resolve {host!r}: {error}") from None
    return bool(found) and all(
        ipaddress.ip_address(str(address[0]).split("%")[0]).is_loopback for *_, address in found
    )


def _normalized_host(value: str) -> str:
    """A bare IPv6 address in brackets, as a Host header carries it; others as given."""
    try:
        if isinstance(ipaddress.ip_address(value), ipaddress.IPv6Address):
            return f"[{value}]"
    except ValueError:
        pass
    return value


def _split_host(value: str) -> tuple[str, str]:
    """("name", "port") from "name:port" or "[v6]:port"; the port is "" when absent."""
    if value.startswith("[") and "]" in value:
        name, _, rest = value.partition("]")
        return f"{name}]", rest.removeprefix(":")
    name, _, port = value.partition(":")
    return name, port


def _bracketed(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _positive_int(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name)
    if not raw:
        return default
    if not raw.isdigit() or int(raw) < 1:
        raise ConfigError(f"{name}={raw[:40]!r} is not a positive whole number")
    return int(raw)


def _positive_seconds(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name)
    if not raw:
        return default
    try:
        seconds = float(raw)
    except ValueError:
        seconds = math.nan
    if not (math.isfinite(seconds) and seconds > 0):
        raise ConfigError(f"{name}={raw[:40]!r} is not a positive number of seconds")
    return seconds
