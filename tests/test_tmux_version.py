"""The tmux server's own version is what schemux serves: a server too old is refused at
first use and by doctor, whatever the client's version; a client of another version
than its server is said. The versions are faked by a wrapper around the real tmux (no
tmux older than 3.3 is at hand), which rewrites what the server prints for
``#{version}`` or what the client says to ``-V``."""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from schemux.cli.doctor import check_server
from schemux.config import Settings
from schemux.errors import TmuxUnavailable
from schemux.names import OWNED_SESSION
from schemux.tmux.server import ServerAddress, TmuxServer
from schemux.versions import mismatch, parse_version, release, server_refusal
from tests.support import private_tmux_server, tmux


@pytest.mark.parametrize("server", ["3.2a", "3.2", "2.9a", "", "next-2.0"])
def test_a_server_older_than_3_3_is_refused_naming_both_versions(server: str) -> None:
    refusal = server_refusal(server, "tmux 3.5a", "socket name 'w'")
    assert refusal is not None
    assert "too old" in refusal.message
    assert "socket name 'w'" in refusal.message
    assert "3.5a" in refusal.message
    assert refusal.suggestion is not None


@pytest.mark.parametrize("server", ["3.3a", "3.4", "3.5a", "3.6a", "3.7c", "next-3.8", "master"])
def test_a_served_server_is_not_refused(server: str) -> None:
    assert server_refusal(server, "tmux 3.3a", "here") is None


def test_a_mismatch_is_said_and_a_match_is_not() -> None:
    said = mismatch("3.3a", "tmux 3.5a", "socket name 'w'")
    assert said is not None
    assert "3.3a" in said
    assert "3.5a" in said
    assert mismatch("3.5a", "tmux 3.5a", "here") is None
    assert release("tmux 3.5a\n") == "3.5a"


def real_release() -> str:
    return release(subprocess.run(["tmux", "-V"], capture_output=True, text=True).stdout)


def fake_tmux(directory: Path, *, server: str | None = None, client: str | None = None) -> Path:
    """A ``tmux`` that runs the real one, but prints ``server`` where the server prints
    its version, and says ``client`` to ``-V``."""
    real = shutil.which("tmux")
    assert real is not None
    version = real_release()
    rewrite = f"s/^\\(.* \\)\\{{0,1\\}}{version}$/\\1{server}/" if server else ""
    path = directory / "tmux"
    said = f'echo "tmux {client}"' if client else f'exec "{real}" -V'
    path.write_text(
        "#!/bin/sh\n"
        + f'for arg; do [ "$arg" = -V ] && {{ {said}; exit 0; }}; done\n'
        + """case "$*" in *'#{version}'*) ;; *) exec \""""
        + real
        + """\" "$@";; esac\n"""
        + f'out=$("{real}" "$@"); status=$?\n'
        + f"""[ -n "$out" ] && printf '%s\\n' "$out" | sed -e '{rewrite}'\n"""
        + "exit $status\n"
    )
    path.chmod(0o755)
    return path


@pytest.fixture
def socket() -> Iterator[str]:
    with private_tmux_server("version") as socket_name:
        yield socket_name


def test_the_fake_prints_what_it_is_told(socket: str, tmp_path: Path) -> None:
    """(The wrapper itself: a test that cannot fail is a defect.)"""
    fake = fake_tmux(tmp_path, server="3.2a", client="9.9z")
    shown = subprocess.run(
        [str(fake), "-L", socket, "display-message", "-p", "#{pid} #{version}"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert shown.stdout.split()[1] == "3.2a"
    assert subprocess.run([str(fake), "-V"], capture_output=True, text=True).stdout == (
        "tmux 9.9z\n"
    )


async def test_first_use_of_a_server_too_old_is_refused_and_makes_nothing(
    anyio_backend: str, socket: str, tmp_path: Path
) -> None:
    """Whatever the client says of itself: what the server prints is the server's doing."""
    server = TmuxServer(
        ServerAddress(socket_name=socket), binary=str(fake_tmux(tmp_path, server="3.2a"))
    )
    try:
        with pytest.raises(TmuxUnavailable, match=r"is tmux 3\.2a, too old") as refused:
            await server.run("display-message", "-p", "#{pid}")
    finally:
        await server.close()
    assert f"client it would use is {real_release()}" in refused.value.message
    assert tmux(socket, "list-sessions", "-F", "#{session_name}").split() == ["keepalive"]
    assert OWNED_SESSION not in tmux(socket, "list-sessions")


async def test_first_use_of_a_server_of_another_version_says_so_and_serves(
    anyio_backend: str, socket: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    server = TmuxServer(
        ServerAddress(socket_name=socket), binary=str(fake_tmux(tmp_path, client="3.9z"))
    )
    try:
        with caplog.at_level(logging.WARNING, logger="schemux"):
            assert await server.run("display-message", "-p", "#{version}") == [real_release()]
            await server.close()
            await server.run("display-message", "-p", "#{version}")  # said once
    finally:
        await server.close()
    said = [record.getMessage() for record in caplog.records if "3.9z" in record.getMessage()]
    assert len(said) == 1
    assert f"is tmux {real_release()} but the tmux client is tmux 3.9z" in said[0]


def test_doctor_fails_a_server_too_old_and_warns_of_a_mismatch(
    socket: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = tmp_path / "old"
    other = tmp_path / "other"
    old.mkdir()
    other.mkdir()
    fake_tmux(old, server="3.2a")
    fake_tmux(other, client="3.9z")
    real_path = os.environ["PATH"]

    monkeypatch.setenv("PATH", f"{old}:{real_path}")
    check = check_server(Settings(socket_name=socket))
    assert (check.status, "is tmux 3.2a, too old" in check.found) == ("fail", True)

    monkeypatch.setenv("PATH", f"{other}:{real_path}")
    check = check_server(Settings(socket_name=socket))
    assert check.status == "warn"
    assert "the tmux client is tmux 3.9z" in check.found
    assert check.fix is not None

    monkeypatch.setenv("PATH", real_path)
    assert check_server(Settings(socket_name=socket)).status == "ok"


@pytest.mark.parametrize(
    ("text", "version"),
    [("tmux 3.3a", (3, 3)), ("tmux 3.5a", (3, 5)), ("tmux next-3.6", (3, 6)), ("tmux 2.9", (2, 9))],
)
def test_parse_version(text: str, version: tuple[int, int]) -> None:
    assert parse_version(text) == version


def test_parse_version_rejects_garbage() -> None:
    with pytest.raises(TmuxUnavailable, match="cannot read the tmux version"):
        parse_version("tmux")
