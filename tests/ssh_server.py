"""A real OpenSSH server for the tests: Debian's ``sshd`` on 127.0.0.1, on a free port,
with throwaway host and user keys in a temporary directory, and an ssh config that names
it (``ssh -F CONFIG schemux-test``). Nothing of the user's is read or written: the
config sets the identity, the known hosts file and every option that would prompt.

The server listens on three ports; what the remote user's commands find on ``PATH``
differs by port (sshd's ``Match LocalPort`` with ``SetEnv PATH``), so the faults of a
remote host without tmux, or with too old a tmux, are real sessions of the same server:

* ``schemux-test``: the tmux the tests run (the first on the test process's ``PATH``,
  so that a run against another tmux build has it on both sides).
* ``schemux-test-notmux``: ``PATH`` holds no tmux.
* ``schemux-test-oldtmux``: ``PATH`` holds a ``tmux`` that says it is 3.2a.

Two more aliases reach the first port wrongly: ``schemux-test-badkey`` offers a key the
server does not accept, and ``schemux-test-unknown`` knows no host key for it.

The server runs in a pid namespace (and a /proc) of its own (``unshare --pid --fork
--mount-proc``), as a remote host's processes would: a pid it shows is not this
machine's pid of the same process, so code that read this machine's /proc for a remote
server's pane would read an unrelated process (or none) and the tests would see it. That
holds for tmux servers started over ssh (``remote_tmux_server``): they and every pane
they spawn live in the namespace, whoever asks them for the pane, locally by socket or
over ssh. A tmux server started on this machine and then reached over ssh keeps this
machine's pids (it spawns its panes itself), so the tests that run over both transports
use a server started over ssh for the ssh side. The sockets stay shared: the namespace
has a mount table of its own, but the same /tmp.
"""

from __future__ import annotations

import os
import shlex
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.support import remove_server

SSHD = "/usr/sbin/sshd"
ALIAS = "schemux-test"
NO_TMUX = "schemux-test-notmux"
OLD_TMUX = "schemux-test-oldtmux"
BAD_KEY = "schemux-test-badkey"
UNKNOWN_HOST = "schemux-test-unknown"
START_SECONDS = 10.0


@dataclass(frozen=True)
class SshServer:
    config: Path  # the ssh_config naming every alias
    process: subprocess.Popen[bytes]
    port: int


def available() -> str | None:
    """Why the tests cannot start sshd here, or None."""
    if not os.access(SSHD, os.X_OK):
        return f"{SSHD} is missing (apt install openssh-server)"
    if shutil.which("ssh") is None or shutil.which("ssh-keygen") is None:
        return "ssh is missing (apt install openssh-client)"
    if shutil.which("unshare") is None:
        return "unshare is missing (apt install util-linux)"
    return None


@contextmanager
def remote_tmux_server(config: Path, socket_name: str) -> Iterator[str]:
    """A tmux server started over ssh (so in the server's pid namespace), with a session
    ``keepalive``; reaped afterwards from here, as the tests' other servers are."""
    command = f"exec tmux -L {shlex.quote(socket_name)} -f /dev/null new-session -d -s keepalive"
    subprocess.run(["ssh", "-F", str(config), ALIAS, command], check=True, timeout=30)
    try:
        yield socket_name
    finally:
        remove_server(socket_name)


def _free_ports(count: int) -> list[int]:
    sockets = []
    try:
        for _ in range(count):
            sock = socket.socket()
            sock.bind(("127.0.0.1", 0))
            sockets.append(sock)
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def _keygen(path: Path) -> str:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "schemux-test", "-f", str(path)],
        check=True,
        capture_output=True,
    )
    return path.with_suffix(".pub").read_text().strip()


def remote_environment(home: Path) -> str:
    """What sshd sets for a remote command: a home of its own, the tmux under test first on
    ``PATH`` (sshd's own ``PATH`` would give the system's tmux), and the test run's
    ``TMUX_TMPDIR``, so that both sides find the same servers; and its ``TMPDIR``, so
    that what schemux makes there (the program helper's directory) is this run's (a test
    worker's) alone, and counted among what it leaves."""
    tmux = shutil.which("tmux")
    tmux_directory = [os.path.dirname(tmux)] if tmux is not None else []
    path = ":".join([*tmux_directory, "/usr/local/bin", "/usr/bin", "/bin"])
    settings = [f"HOME={home}", f"PATH={path}"]
    settings += [
        f"{name}={os.environ[name]}" for name in ("TMUX_TMPDIR", "TMPDIR") if os.environ.get(name)
    ]
    return " ".join(f'"{setting}"' for setting in settings)  # sshd's quoting


def _write_server_config(root: Path, ports: list[int]) -> Path:
    _, no_tmux, old_tmux = ports
    home = root / "home"
    home.mkdir()
    empty = root / "empty-bin"
    empty.mkdir()
    old = root / "old-bin"
    old.mkdir()
    fake = old / "tmux"
    fake.write_text("#!/bin/sh\necho 'tmux 3.2a'\n")
    fake.chmod(0o755)
    config = root / "sshd_config"
    config.write_text(
        "\n".join(
            [
                *(f"Port {port}" for port in ports),
                "ListenAddress 127.0.0.1",
                f"HostKey {root / 'host_key'}",
                f"PidFile {root / 'sshd.pid'}",
                f"AuthorizedKeysFile {root / 'authorized_keys'}",
                "AuthenticationMethods publickey",
                "PubkeyAuthentication yes",
                "PasswordAuthentication no",
                "KbdInteractiveAuthentication no",
                "UsePAM no",
                "StrictModes no",
                "PermitRootLogin prohibit-password",
                "PermitUserEnvironment no",
                "MaxStartups 100:30:200",
                "PrintMotd no",
                "LogLevel ERROR",
                # a home of no dotfiles: the machine's startup files are not what these
                # tests are about (bash reads ~/.bashrc for a command sshd runs)
                f"SetEnv {remote_environment(home)}",
                f"Match LocalPort {no_tmux}",
                f"    SetEnv HOME={home} PATH={empty}",
                f"Match LocalPort {old_tmux}",
                f"    SetEnv HOME={home} PATH={old}:/usr/bin:/bin",
                "",
            ]
        )
    )
    return config


def _write_client_config(root: Path, ports: list[int], host_key: str) -> Path:
    known = root / "known_hosts"
    known.write_text("".join(f"[127.0.0.1]:{port} {host_key}\n" for port in ports))
    (root / "known_hosts_empty").write_text("")
    user, no_tmux, old_tmux = ports

    def block(alias: str, port: int, key: str, known_hosts: Path) -> list[str]:
        return [
            f"Host {alias}",
            "    HostName 127.0.0.1",
            f"    Port {port}",
            f"    User {_user()}",
            f"    IdentityFile {key}",
            "    IdentitiesOnly yes",
            "    IdentityAgent none",
            f"    UserKnownHostsFile {known_hosts}",
            "    GlobalKnownHostsFile /dev/null",
            "    StrictHostKeyChecking yes",
            "    UpdateHostKeys no",
            # not Debian 12's default sntrup761x25519: its key generation took 75 ms of
            # CPU a connection (27 s of a run's); what these tests check is not the kex
            "    KexAlgorithms curve25519-sha256",
            "    LogLevel ERROR",
        ]

    key = str(root / "user_key")
    config = root / "ssh_config"
    config.write_text(
        "\n".join(
            [
                *block(ALIAS, user, key, known),
                *block(NO_TMUX, no_tmux, key, known),
                *block(OLD_TMUX, old_tmux, key, known),
                *block(BAD_KEY, user, str(root / "stranger_key"), known),
                *block(UNKNOWN_HOST, user, key, root / "known_hosts_empty"),
                "",
            ]
        )
    )
    return config


def _user() -> str:
    import pwd

    return pwd.getpwuid(os.getuid()).pw_name


def _without_penalties(config: Path) -> list[str]:
    """sshd's options that turn off OpenSSH 9.8's PerSourcePenalties, where this sshd has
    them (Debian 13's 10.0 does, by default; Debian 12's 9.2 refuses the option): every
    test connects from 127.0.0.1, so the listening probes (no login) and the bad-key and
    unknown-host tests would have sshd refuse every later connection for a while."""
    option = ["-o", "PerSourcePenalties=no"]
    known = subprocess.run(
        [SSHD, "-t", "-f", str(config), *option], capture_output=True, check=False
    )
    return option if known.returncode == 0 else []


def _until_listening(process: subprocess.Popen[bytes], ports: list[int]) -> None:
    deadline = time.monotonic() + START_SECONDS
    for port in ports:
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"sshd exited with status {process.returncode}")
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            if time.monotonic() > deadline:
                raise RuntimeError(f"sshd did not listen on port {port}")
            time.sleep(0.02)


@contextmanager
def ssh_server() -> Iterator[SshServer]:
    """sshd running until the block ends; then stopped and its directory removed."""
    root = Path(tempfile.mkdtemp(prefix="sshd-"))
    process: subprocess.Popen[bytes] | None = None
    try:
        root.chmod(0o700)
        host_key = _keygen(root / "host_key")
        (root / "authorized_keys").write_text(_keygen(root / "user_key") + "\n")
        _keygen(root / "stranger_key")
        ports = _free_ports(3)
        server_config = _write_server_config(root, ports)
        client_config = _write_client_config(root, ports, host_key)
        if os.getuid() == 0:
            # sshd running as root insists on its privilege separation directory
            Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
        options = _without_penalties(server_config)
        with open(root / "sshd.log", "wb") as log:  # its complaints about probes
            # --kill-child: sshd (the namespace's init) ends with unshare, and with it
            # every process of the namespace
            isolated = ["unshare", "--pid", "--fork", "--mount-proc", "--kill-child=SIGTERM"]
            process = subprocess.Popen(
                [*isolated, SSHD, "-D", "-e", "-f", str(server_config), *options],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log,
            )
        _until_listening(process, ports)
        yield SshServer(client_config, process, ports[0])
    finally:
        if process is not None:
            # unshare ignores SIGTERM while it waits for its child; killed, it hands sshd
            # the --kill-child signal, and sshd's end (as the namespace's init) ends the rest
            process.kill()
            process.wait()
        shutil.rmtree(root, ignore_errors=True)
