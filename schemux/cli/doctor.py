"""``schemux doctor``: what schemux needs, checked one thing at a time.

Each check is a function returning a :class:`Check`: whether that part works (``ok``),
works with a caveat (``warn``) or blocks serving (``fail``), what was found, and how to
fix it. ``diagnose`` runs them all for the options ``serve`` would be given; the CLI
only prints the lines. Nothing here changes anything: the tmux server is only asked
(``list-sessions``, ``has-session``), never started, and the probe directory, FIFO and
socket are removed before a check returns.

Runs before any event loop exists (a command of its own), so its subprocesses are
synchronous, each bounded by ``TMUX_SECONDS``.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from schemux.config import (
    ENV_AUDIT_LOG,
    ENV_PROGRAM_GATE,
    ENV_TRACKING_BACKEND,
    AuditSettings,
    GateSetting,
    SettingOptions,
    Settings,
    TrackingSetting,
)
from schemux.errors import (
    ConfigError,
    SchemuxError,
    TmuxUnavailable,
    TrackingUnavailable,
    preview,
    shorten,
)
from schemux.generated.tool_facts import SEVERAL_HOSTS_TOOLS
from schemux.host_settings import NamedHost
from schemux.hosts import Host
from schemux.hosts.kinds import host_for
from schemux.hosts.local import LOCAL, check_tmux, tmux_binary
from schemux.hosts.programs.gate import PERL_GATE, Gate, choose_gate, perl_gate
from schemux.hosts.protocol import run_briefly
from schemux.http.config import ENV_TOKEN, http_config_from, is_loopback
from schemux.names import OWNED_SESSION
from schemux.panes.identity import choose_backend, peer_pidfd_problem, pidfd_open_problem
from schemux.serving.selection import select
from schemux.system.private_files import ADVICE, check_private
from schemux.tmux.control.client import MINIMUM_PYTHON, header_for
from schemux.tmux.server import ServerAddress
from schemux.versions import MINIMUM_VERSION, MISMATCH_FIX, mismatch, server_refusal

Status = Literal["ok", "warn", "fail"]
TMUX_SECONDS = 10.0
_NOT_RUNNING = re.compile(
    r"no server running|No such file or directory|Connection refused|server exited unexpectedly"
)


@dataclass(frozen=True)
class Check:
    """One thing schemux needs: its status, what was found, and the fix when it is not
    ``ok``."""

    name: str
    status: Status
    found: str
    fix: str | None = None

    def line(self) -> str:
        text = f"{self.status.upper():<4}  {self.name}: {self.found}"
        return text if self.fix is None else f"{text}; fix: {self.fix}"


@dataclass(frozen=True)
class Options:
    """What ``serve`` would be given on its command line (the environment is separate):
    the options its settings are made from, and its HTTP listener's."""

    settings: SettingOptions = field(default_factory=SettingOptions)
    http: str | None = None
    token_file: str | None = None
    allowed_hosts: Sequence[str] = ()


def diagnose(env: Mapping[str, str], options: Options) -> list[Check]:
    """Every check, in the order a person would fix them."""
    problem = None
    try:
        settings = options.settings.settings(env)
    except ConfigError as error:
        problem = Check("settings", "fail", str(error), "correct or unset that setting")
        settings = None
    if settings is not None and settings.named_hosts:
        checks = check_fleet(settings)
    else:
        checks = _check_the_host(settings, problem)
    checks.append(check_runtime_directory())
    checks.append(check_tracking(settings.tracking_backend if settings else None))
    checks.append(check_program_gate(settings.program_gate if settings else "auto"))
    checks.append(check_http(env, options))
    if settings is not None:
        checks.append(check_tools(settings))
        checks.append(check_audit(settings.audit))
    return checks


def _check_the_host(settings: Settings | None, problem: Check | None) -> list[Check]:
    """The one host (``--ssh``, ``--exec`` or this machine): tmux there, perl for
    programs on another host, and the configured server."""
    host = host_for(settings.host_target if settings is not None else None)
    try:  # the run owns its host: an ssh master ends with the checks that used it
        tmux = check_tmux_program() if host.pids_here else check_host(host)
        checks = [tmux] if problem is None else [tmux, problem]
        if not host.pids_here:  # its programs run under the helper and gate in Perl
            checks.append(check_remote_perl(host))
            if tmux.status == "ok":
                checks.append(check_remote_python(host))
        if settings is not None:
            if tmux.status == "fail":
                checks.append(Check("server", "warn", "not checked: tmux cannot run"))
            else:
                checks.append(check_server(settings, host))
    finally:
        host.close()
    return checks


def check_fleet(settings: Settings) -> list[Check]:
    """Every host configured by name (``--host``, ``--hosts``), all at once (at most
    ``--max-connecting`` connecting together): one line each, in configuration order."""
    hosts = settings.fleet.hosts
    with ThreadPoolExecutor(settings.fleet.max_connecting) as pool:
        return list(pool.map(check_named_host, hosts))


def check_named_host(named: NamedHost) -> Check:
    """One host of the fleet: reached, its tmux, and perl where programs need it there
    (a host that is not this machine); the run owns the host it makes."""
    name = f"host {named.name}"
    host = host_for(named.target)
    try:
        tmux = check_tmux_program() if host.pids_here else check_host(host)
        if tmux.status != "ok":
            return Check(name, tmux.status, f"{host.describe()}: {tmux.found}", tmux.fix)
        if host.pids_here:
            return Check(name, "ok", f"{host.kind}: {tmux.found}")
        perl = check_remote_perl(host)
        python = check_remote_python(host)
        found = f"{host.kind}: {tmux.found}; {perl.found}; {python.found}"
        worst = next(
            (
                check
                for status in ("fail", "warn")
                for check in (perl, python)
                if check.status == status
            ),
            perl,
        )
        return Check(name, worst.status, found, worst.fix)
    finally:
        host.close()


def exit_status(checks: Sequence[Check]) -> int:
    """1 when something blocks serving, else 0 (warnings allowed)."""
    return 1 if any(check.status == "fail" for check in checks) else 0


def check_tmux_program() -> Check:
    """tmux on PATH, and new enough."""
    needed = ".".join(str(part) for part in MINIMUM_VERSION)
    install = f"install tmux {needed} or newer (Debian and Ubuntu: apt install tmux)"
    try:
        version = check_tmux()
        path = tmux_binary()
    except TmuxUnavailable as error:
        return Check("tmux", "fail", str(error), install)
    return Check("tmux", "ok", f"{version} at {path} (schemux needs {needed} or newer)")


def check_host(host: Host) -> Check:
    """The way to another host (made as serving makes it) and its tmux."""
    try:
        version = host.check_tmux()
    except SchemuxError as error:
        fix = error.suggestion or f"check the host and the --{host.kind} setting"
        return Check(host.kind, "fail", error.message, fix)
    return Check(host.kind, "ok", f"reached; {version}")


def check_remote_perl(host: Host) -> Check:
    """perl on another host, on the PATH its commands have: programs run there under the
    Perl gate and helper (``schemux.hosts.programs.remote``)."""
    fix = f"install perl (perl-base) on that host: programs over {host.kind} need it"
    try:
        perl = ["perl", "-e", 'printf "perl %vd at %s\n", $^V, $^X']
        done = run_briefly(host.exec_command(perl), TMUX_SECONDS)
    except subprocess.TimeoutExpired:
        return Check(
            "perl", "fail", f"perl on {host.describe()} did not answer within "
            f"{TMUX_SECONDS:g} s", fix,
        )  # fmt: skip
    except OSError as error:  # the way there cannot even start: its own line says why
        return Check("perl", "warn", f"not checked: {error}")
    if not host.reached(done.returncode):  # the host's line says why
        return Check("perl", "warn", f"not checked: no connection to {host.describe()}")
    said = done.stdout.strip()
    if done.returncode != 0 or not said.startswith("perl "):
        reason = shorten(" ".join(done.stderr.split()), 200) or f"exit status {done.returncode}"
        return Check("perl", "fail", f"perl cannot run on {host.describe()}: {reason}", fix)
    return Check("perl", "ok", f"{said} on {host.describe()} (programs run under it)")


_PYTHON_PROBE = (
    "import sys; print('python %d.%d.%d at %s' % (*sys.version_info[:3], sys.executable)); "
    f"sys.exit(sys.version_info < {MINIMUM_PYTHON})"
)


def check_remote_python(host: Host) -> Check:
    """python3 on another host, where its tmux crashes under ``tmux -C`` (3.3 to 3.6):
    schemux's control clients there are its attacher, which needs it
    (``schemux.tmux.control.client``); without it they are ``tmux -C``."""
    tmux = host.check_tmux().split(" on ")[0]
    if header_for(tmux) is None:
        return Check("python3", "ok", f"not needed: {tmux} runs tmux -C safely")
    fix = (
        f"install python3 ({'.'.join(map(str, MINIMUM_PYTHON))} or newer) on that host: its "
        f"{tmux} can crash under tmux -C, which schemux runs there without it"
    )
    python = host.python
    if python is None:
        return Check("python3", "warn", f"none on {host.describe()}", fix)
    try:
        probe = [python, "-I", "-S", "-c", _PYTHON_PROBE]
        done = run_briefly(host.exec_command(probe), TMUX_SECONDS)
    except (subprocess.TimeoutExpired, OSError) as error:
        return Check("python3", "warn", f"not checked: {error}", fix)
    said = done.stdout.strip()
    if done.returncode != 0 or not said.startswith("python "):
        found = f"{said}, too old" if said.startswith("python ") else "no python3"
        return Check(
            "python3", "warn", f"{found} on {host.describe()}: control clients are tmux -C", fix
        )
    return Check("python3", "ok", f"{said} on {host.describe()} (control clients run under it)")


def check_server(settings: Settings, host: Host = LOCAL) -> Check:
    """The configured server (on ``host``): running, answering, and whether schemux's own
    session (``_schemux``) is there yet. Not running is a warning: schemux starts it."""
    address = ServerAddress(settings.socket_name, settings.socket_path, host)
    where = address.describe()
    try:
        listed = _tmux(address, "list-sessions", "-F", "#{pid} #{version}")
    except subprocess.TimeoutExpired:
        return Check(
            "server",
            "fail",
            f"the tmux server on {where} did not answer within {TMUX_SECONDS:g} s",
            "find out why it hangs (tmux -L/-S ... info), or kill it (tmux ... kill-server)",
        )
    if listed.returncode != 0:
        reason = listed.stderr.strip() or f"tmux exited with status {listed.returncode}"
        if _NOT_RUNNING.search(reason):
            return Check(
                "server",
                "warn",
                f"no tmux server is running on {where}; schemux starts it when it serves",
            )
        return Check(
            "server",
            "fail",
            f"the tmux server on {where} cannot be reached: {preview(reason)}",
            "check the socket's owner and permissions, or configure another server "
            "(-L NAME, SCHEMUX_SOCKET_NAME)",
        )
    lines = listed.stdout.splitlines()
    if not lines:
        return Check("server", "ok", f"a tmux server runs on {where}, with no session")
    pid, _, version = lines[0].partition(" ")
    client = _tmux(address, "-V").stdout.strip()
    refusal = server_refusal(version, client, where)
    if refusal is not None:
        return Check("server", "fail", refusal.message, refusal.suggestion)
    sessions = f"{len(lines)} session{'s' if len(lines) > 1 else ''}"
    owned = _tmux(address, "has-session", "-t", f"={OWNED_SESSION}").returncode == 0
    session = (
        f"schemux's own session {OWNED_SESSION!r} is there"
        if owned
        else f"schemux's own session {OWNED_SESSION!r} is not there yet (made on first use)"
    )
    answers = f"tmux {version} answers on {where} (pid {pid}, {sessions}); {session}"
    different = mismatch(version, client, where)
    if different is not None:
        return Check("server", "warn", f"{answers}; but {different}", MISMATCH_FIX)
    return Check("server", "ok", answers)


def _tmux(address: ServerAddress, *args: str) -> subprocess.CompletedProcess[str]:
    binary = address.host.tmux_binary()
    return run_briefly(address.host.command([binary, *address.flags(), *args]), TMUX_SECONDS)


def check_runtime_directory() -> Check:
    """Where programs' output goes: a private directory (0700) in the temporary
    directory, with FIFOs in it."""
    parent = tempfile.gettempdir()
    fix = "set TMPDIR to a directory you can write, on a filesystem that has FIFOs"
    try:
        directory = Path(tempfile.mkdtemp(prefix="schemux-doctor-"))
    except OSError as error:
        return Check("runtime directory", "fail", f"cannot make one in {parent}: {error}", fix)
    try:
        mode = stat.S_IMODE(directory.stat().st_mode)
        if mode != 0o700:
            return Check(
                "runtime directory",
                "fail",
                f"a directory made in {parent} with mode 0700 has mode {mode:04o}",
                fix,
            )
        os.mkfifo(directory / "probe", 0o600)
    except OSError as error:
        return Check("runtime directory", "fail", f"{parent}: {error}", fix)
    finally:
        with contextlib.suppress(OSError):
            shutil.rmtree(directory)
    return Check("runtime directory", "ok", f"{parent}: private directories and FIFOs work")


def check_tracking(setting: TrackingSetting | None) -> Check:
    """pidfd support, and which backend ``track: true`` binds the server's identity with
    (``None``: the settings are invalid, so only what the kernel has is said)."""
    pidfd_open = pidfd_open_problem()
    peer_pidfd = peer_pidfd_problem()
    has = (
        f"pidfd_open: {'yes' if pidfd_open is None else pidfd_open}; "
        f"SO_PEERPIDFD: {'yes' if peer_pidfd is None else peer_pidfd}"
    )
    if setting is None:
        return Check("tracking", "warn", f"{has}; backend not chosen (the settings are invalid)")
    try:
        backend = choose_backend(setting)
    except TrackingUnavailable as error:
        fix = (
            f"unset {ENV_TRACKING_BACKEND} (auto takes pidfd-open)"
            if pidfd_open is None
            else "run schemux on Linux 5.3 or newer"
        )
        return Check(
            "tracking", "warn", f"{has}; tmux_capture track: true is refused: {error}", fix
        )
    how = "forced" if setting != "auto" else "auto"
    return Check("tracking", "ok", f"{has}; tracking backend: {backend} ({how})")


def check_program_gate(setting: GateSetting) -> Check:
    """The gate a program's pane runs (``schemux.hosts.programs.gate``): Perl where it can run,
    else this Python, isolated; the chosen one is made to compile its script."""
    perl = perl_gate()
    perl_note = "" if isinstance(perl, Gate) else f" (no Perl gate: {perl})"
    try:
        gate = choose_gate(setting)
    except ValueError as error:
        return Check("program gate", "fail", str(error), f"unset {ENV_PROGRAM_GATE}")
    if gate.kind == "perl":
        command = [*gate.prefix[:4], "-c", str(PERL_GATE)]
        fix = "install perl-base, or set SCHEMUX_PROGRAM_GATE=python"
    else:
        command = [sys.executable, "-I", "-S", "-c", "import ctypes, errno, os, signal, time"]
        fix = "install the Python standard library (Debian: libpython3-stdlib)"
    try:
        done = run_briefly(command, TMUX_SECONDS)
    except (OSError, subprocess.TimeoutExpired) as error:
        problem = str(error)
    else:
        lines = done.stderr.strip().splitlines() or [f"exit status {done.returncode}"]
        problem = lines[-1] if done.returncode else ""
    described = f"{gate.kind.capitalize()} gate ({' '.join(gate.prefix[:1])}){perl_note}"
    if problem:
        return Check(
            "program gate",
            "warn",
            f"{described} cannot run: {preview(problem)}",
            f"{fix}; run_program and start_program fail until then",
        )
    return Check("program gate", "ok", f"{described} runs")


def check_http(env: Mapping[str, str], options: Options) -> Check:
    """The HTTP settings, when ``--http`` is given: valid, where it binds, token or none."""
    if options.http is None:
        if options.token_file or options.allowed_hosts:
            return Check(
                "http",
                "fail",
                "--token-file and --allow-host apply to --http only",
                "add --http [HOST:]PORT, or drop them",
            )
        return Check("http", "ok", "not asked for (no --http): MCP over stdio")
    try:
        http = http_config_from(
            env, options.http, token_file=options.token_file, allowed_hosts=options.allowed_hosts
        )
        http.listen().close()
    except ConfigError as error:
        return Check("http", "fail", str(error), "correct the --http settings")
    where = "loopback only" if is_loopback(http.host) else "reachable from other machines"
    if http.token is None:
        return Check(
            "http",
            "warn",
            f"{http.url} ({where}) with no token: any local user can call its tools",
            f"set {ENV_TOKEN} or --token-file FILE",
        )
    return Check("http", "ok", f"{http.url} ({where}), bearer token required")


def check_audit(audit: AuditSettings) -> Check:
    """Where tool calls are recorded, and whether that file can be written (asked with
    access(2): nothing is made). One that cannot is a warning: calls would go on
    unrecorded."""
    if audit.path is None:
        return Check("audit log", "ok", "off (--no-audit): no tool call is recorded")
    redacted = "; command, keys, input and argv by hash only" if audit.redact else ""
    problem = check_private(audit.path)
    if problem is not None:
        fix = f"{ADVICE} (--audit-log, {ENV_AUDIT_LOG})"
        return Check("audit log", "fail", f"{audit.path}: {problem}", fix)
    existing = audit.path
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if existing == audit.path:
        writable = os.access(existing, os.W_OK)
    else:  # made with the directories missing below the nearest existing one
        writable = existing.is_dir() and os.access(existing, os.W_OK | os.X_OK)
    if not writable:
        return Check(
            "audit log",
            "warn",
            f"{audit.path} cannot be written ({existing} is not writable): tool calls would "
            "go unrecorded",
            "pass --audit-log FILE somewhere you can write, or --no-audit",
        )
    return Check("audit log", "ok", f"{audit.path}{redacted}")


def check_tools(settings: Settings) -> Check:
    """The served tool set (``--tools``) and whether its schemas are projections."""
    from schemux.generated.bindings import BINDINGS

    try:
        served = select(BINDINGS, settings.tools, several_hosts=settings.several_hosts)
    except ConfigError as error:
        return Check("tools", "fail", str(error), "name tools or families that exist")
    schemas = {
        "projected": "projected schemas (what model providers accept)",
        "compact": "compact schemas (--schemas compact: no outputSchema)",
        "exact": "exact schemas (--schemas exact)",
        "openai-strict": "OpenAI strict schemas (--schemas openai-strict)",
    }[settings.schemas]
    chosen = "the default" if not settings.tools else f"--tools {','.join(settings.tools)}"
    left: dict[str, list[str]] = {}  # why -> the tools left out for it
    for name in BINDINGS:
        if name not in served:
            left.setdefault(_why_not_served(name, settings), []).append(name)
    groups = [f"{', '.join(names)} ({why})" for why, names in left.items()]
    not_served = f"; not served: {'; '.join(groups)}" if groups else ""
    return Check(
        "tools",
        "ok",
        f"{len(served)} of {len(BINDINGS)} served ({chosen}): {', '.join(served)}{not_served}; "
        f"{schemas}",
    )


def _why_not_served(tool: str, settings: Settings) -> str:
    """Why the selection of ``settings`` leaves ``tool`` out, as a person would fix it."""
    if tool in SEVERAL_HOSTS_TOOLS and not settings.several_hosts:
        return "served only with more than one host: --host, --hosts"
    if settings.tools:
        return "not named by --tools"
    return "not in the default selection: name it, its family or all in --tools"
