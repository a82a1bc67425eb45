"""``schemux doctor``: the command against real private tmux servers, and each check on
its own."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from schemux.cli.doctor import (
    Check,
    Options,
    check_audit,
    check_http,
    check_program_gate,
    check_runtime_directory,
    check_server,
    check_tmux_program,
    check_tools,
    check_tracking,
    diagnose,
    exit_status,
)
from schemux.config import AuditSettings, GateSetting, SettingOptions, Settings
from schemux.hosts.programs.gate import choose_gate
from schemux.names import socket_directory
from schemux.panes import identity
from tests.http_serving import free_port
from tests.support import private_tmux_server, tmux

TOKEN = "a-token-of-enough-length"
HOSTILE_NAMES = [";", "\\;", "#{pid}", "#(touch owned)", "##", "-L", "a b\tc", "'\"", "x" * 60]


def doctor(*args: str, **env: str) -> tuple[int, list[str]]:
    """Exit status and lines of ``schemux doctor`` run as a user would."""
    done = subprocess.run(
        [sys.executable, "-m", "schemux", "doctor", *args],
        env={**os.environ, **env},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,  # a fleet's hosts are checked at once, each within its own bound
        check=False,
    )
    assert done.stderr == "", done.stderr
    return done.returncode, done.stdout.splitlines()


def line_of(lines: list[str], name: str) -> str:
    [line] = [line for line in lines if line.split(maxsplit=1)[1].startswith(f"{name}:")]
    return line


def unused_socket_name() -> str:
    return f"schemux-test-doctor-none-{os.getpid()}-{uuid.uuid4().hex[:6]}"


@pytest.fixture
def old_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    """The kernel of Debian 12 (Linux 6.1): pidfds, but none for a socket's peer."""
    monkeypatch.setattr(identity, "SO_PEERPIDFD", 0x7FFF)


@pytest.fixture
def server_with_owned_session() -> Iterator[str]:
    with private_tmux_server("doctor") as socket_name:
        tmux(socket_name, "new-session", "-d", "-s", "_schemux")
        yield socket_name


def test_a_healthy_server(server_with_owned_session: str) -> None:
    version = subprocess.run(["tmux", "-V"], capture_output=True, text=True).stdout.strip()
    status, lines = doctor("-L", server_with_owned_session)
    assert status == 0, lines
    assert line_of(lines, "tmux").startswith(f"OK    tmux: {version} at ")
    server = line_of(lines, "server")
    assert server.startswith("OK ")
    assert server_with_owned_session in server
    assert "2 sessions" in server
    assert "'_schemux' is there" in server
    backend = "peer-pidfd" if identity.peer_pidfd_problem() is None else "pidfd-open"
    assert f"tracking backend: {backend} (auto)" in line_of(lines, "tracking")
    assert all(line.startswith(("OK ", "WARN ")) for line in lines[1:]), lines


def test_no_tmux_on_path(tmp_path: Path) -> None:
    status, lines = doctor("-L", unused_socket_name(), PATH=str(tmp_path))
    assert status == 1
    tmux_line = line_of(lines, "tmux")
    assert tmux_line.startswith("FAIL  tmux: tmux was not found on PATH")
    assert "fix: install tmux 3.3 or newer" in tmux_line
    assert line_of(lines, "server").startswith("WARN  server: not checked")


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"SCHEMUX_WAIT_CEILING": "soon"}, "SCHEMUX_WAIT_CEILING"),
        ({"SCHEMUX_TRACKING_BACKEND": "#{pid};"}, "SCHEMUX_TRACKING_BACKEND"),
        ({"SCHEMUX_MAX_PROGRAMS": "-1"}, "SCHEMUX_MAX_PROGRAMS"),
    ],
)
def test_a_bad_setting(env: dict[str, str], named: str) -> None:
    status, lines = doctor("-L", unused_socket_name(), **env)
    assert status == 1
    settings = line_of(lines, "settings")
    assert settings.startswith("FAIL  settings: ")
    assert named in settings
    assert "fix: " in settings
    assert "backend not chosen" in line_of(lines, "tracking")


def test_unknown_tools_block_serving() -> None:
    status, lines = doctor("-L", unused_socket_name(), "--tools", "commands,nonesuch")
    assert status == 1
    tools = line_of(lines, "tools")
    assert tools.startswith("FAIL  tools: ")
    assert "'nonesuch'" in tools
    assert "valid tools: " in tools


@pytest.mark.tmux
def test_a_server_not_running_is_a_warning_and_is_not_started() -> None:
    socket_name = unused_socket_name()
    status, lines = doctor("-L", socket_name)
    assert status == 0, lines
    server = line_of(lines, "server")
    assert server.startswith("WARN  server: no tmux server is running on socket name")
    assert "schemux starts it" in server
    assert not os.path.exists(os.path.join(socket_directory(), socket_name))


@pytest.mark.tmux
def test_a_forced_tracking_fallback() -> None:
    status, lines = doctor("-L", unused_socket_name(), SCHEMUX_TRACKING_BACKEND="pidfd-open")
    assert status == 0, lines
    assert "tracking backend: pidfd-open (forced)" in line_of(lines, "tracking")


def test_options_as_serve_takes_them(server_with_owned_session: str) -> None:
    status, lines = doctor(
        "-L", server_with_owned_session, "--tools", "capture", "--exact-schemas",
        "--http", "127.0.0.1:0", SCHEMUX_HTTP_TOKEN=TOKEN,
    )  # fmt: skip
    assert status == 1  # port 0 is no port to serve on
    assert line_of(lines, "http").startswith("FAIL  http: --http '127.0.0.1:0'")
    tools = line_of(lines, "tools")
    assert "5 of " in tools
    served, not_served = tools.split("; not served: ")
    assert "tmux_capture" in served
    assert "run_command" not in served
    assert re.search(r"\brun_command\b[^(]* \(not named by --tools\)", not_served)
    assert tools.endswith("exact schemas (--schemas exact)")


@pytest.mark.tmux
@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_hostile_socket_names_reach_tmux_as_names(name: str) -> None:
    """A socket name is one argument of -L: nothing in it runs, nothing is started."""
    check = check_server(Settings(socket_name=name))
    assert check.status == "warn", check
    assert "no tmux server is running" in check.found
    assert not os.path.exists(os.path.join(socket_directory(), name))
    assert not os.path.exists("owned")


def test_check_tmux_program_too_old(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "tmux"
    fake.write_text("#!/bin/sh\necho 'tmux 3.2a'\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    check = check_tmux_program()
    assert (check.status, check.found) == (
        "fail",
        "tmux 3.2a is too old: schemux needs tmux 3.3 or newer",
    )
    assert check.fix is not None
    assert "apt install tmux" in check.fix


@pytest.mark.usefixtures("old_kernel")
def test_check_tracking_without_peer_pidfds() -> None:
    auto = check_tracking("auto")
    assert auto.status == "ok"
    assert "SO_PEERPIDFD: SO_PEERPIDFD: " in auto.found  # the reason the kernel gave
    assert auto.found.endswith("tracking backend: pidfd-open (auto)")
    forced = check_tracking("peer-pidfd")
    assert forced.status == "warn"
    assert "refused" in forced.found
    assert forced.fix == "unset SCHEMUX_TRACKING_BACKEND (auto takes pidfd-open)"


def test_check_http() -> None:
    def http(address: str | None, token_file: str | None = None) -> Check:
        return check_http({}, Options(http=address, token_file=token_file))

    assert http(None).status == "ok"
    assert http(None, token_file="/dev/null").status == "fail"
    open_port = http("127.0.0.1:0")
    assert open_port.status == "fail"
    nowhere = http("0.0.0.0:1")
    assert nowhere.status == "fail"
    assert "without a token" in nowhere.found
    with tempfile.NamedTemporaryFile("w") as token_file:
        token_file.write(TOKEN + "\n")
        token_file.flush()
        port = free_port()
        secured = http(f"127.0.0.1:{port}", token_file=token_file.name)
        assert (secured.status, secured.fix) == ("ok", None)
        assert "loopback only" in secured.found
        assert "bearer token required" in secured.found
    open_loopback = http(f"localhost:{free_port()}")
    assert open_loopback.status == "warn"
    assert open_loopback.fix == "set SCHEMUX_HTTP_TOKEN or --token-file FILE"


def test_a_port_in_use_blocks_serving() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        check = check_http({}, Options(http=f"127.0.0.1:{port}"))
    assert check.status == "fail"
    assert "cannot listen" in check.found


def test_check_tools() -> None:
    every = check_tools(Settings())
    assert every.status == "ok"
    assert "(the default)" in every.found
    assert "projected schemas" in every.found
    # each tool left out is named, with why (it said "16 of 17 served", naming none)
    assert "; not served: " in every.found
    assert "run_command_on_hosts (served only with more than one host: " in every.found
    assert "list_panes, " in every.found
    assert "(not in the default selection: name it, its family or all in --tools)" in every.found
    capture = check_tools(Settings(tools=("capture", "run_command"), schemas="exact"))
    assert capture.status == "ok"
    assert capture.found.startswith("6 of ")
    assert "(--tools capture,run_command): capture_pane, capture_since, run_command, " in (
        capture.found
    )
    assert capture.found.endswith("exact schemas (--schemas exact)")
    assert re.search(
        r"; not served: [^(]*\bsend_keys\b[^(]* \(not named by --tools\)", capture.found
    )
    strict = check_tools(Settings(schemas="openai-strict"))
    assert strict.found.endswith("OpenAI strict schemas (--schemas openai-strict)")
    compact = check_tools(Settings(schemas="compact"))
    assert compact.found.endswith("compact schemas (--schemas compact: no outputSchema)")


def test_check_runtime_directory(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    assert check_runtime_directory().status == "ok"
    assert list(tmp_path.iterdir()) == []  # the probe is gone
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "missing"))
    missing = check_runtime_directory()
    assert missing.status == "fail"
    assert missing.fix is not None
    assert "TMPDIR" in missing.fix


def test_exit_status_and_lines() -> None:
    ok, warn = Check("a", "ok", "fine"), Check("b", "warn", "meh", "do x")
    assert exit_status([ok, warn]) == 0
    assert exit_status([ok, Check("c", "fail", "broken", "do y")]) == 1
    assert warn.line() == "WARN  b: meh; fix: do x"
    assert ok.line() == "OK    a: fine"


def test_diagnose_names_every_check() -> None:
    checks = diagnose({}, Options(SettingOptions(socket_name=unused_socket_name())))
    assert [check.name for check in checks] == [
        "tmux", "server", "runtime directory", "tracking", "program gate", "http", "tools",
        "audit log",
    ]  # fmt: skip


@pytest.mark.tmux
def test_check_audit(tmp_path: Path) -> None:
    made = check_audit(AuditSettings(tmp_path / "new" / "deeper" / "audit.jsonl", redact=True))
    assert made.status == "ok"
    assert (
        made.found
        == f"{tmp_path}/new/deeper/audit.jsonl; command, keys, input and argv by hash only"
    )
    assert not (tmp_path / "new").exists()  # asked, never made
    assert check_audit(AuditSettings()).found.startswith("off (--no-audit)")
    (tmp_path / "file").write_text("")
    blocked = check_audit(AuditSettings(tmp_path / "file" / "audit.jsonl"))
    assert blocked.status == "warn"
    assert "tool calls would go unrecorded" in blocked.found
    status, lines = doctor("--audit-log", str(tmp_path / "file" / "x"), "-L", unused_socket_name())
    assert line_of(lines, "audit log").startswith(f"WARN  audit log: {tmp_path}/file/x cannot")
    assert status == 0  # serving works: calls go on unrecorded


def test_check_audit_fails_a_file_not_the_users(tmp_path: Path) -> None:
    link = tmp_path / "audit.jsonl"
    link.symlink_to(tmp_path / "elsewhere.jsonl")
    refused = check_audit(AuditSettings(link))
    assert refused.status == "fail"
    assert refused.found == f"{link}: it is a symbolic link"
    assert refused.fix == "remove it, or name another file (--audit-log, SCHEMUX_AUDIT_LOG)"


GATE_SETTINGS: list[GateSetting] = ["auto", "perl", "python"]


@pytest.mark.parametrize("setting", GATE_SETTINGS)
def test_the_program_gate_check_names_the_gate_a_setting_picks(setting: GateSetting) -> None:
    check = check_program_gate(setting)
    assert check.status == "ok", check
    assert check.found.startswith(f"{choose_gate(setting).kind.capitalize()} gate (")
