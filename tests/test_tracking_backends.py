"""How tmux_capture's tracking binds the tmux server's identity: SO_PEERPIDFD where the
kernel has it, pidfd_open of the pid the server reports elsewhere, and each refusal."""

from __future__ import annotations

import dataclasses
import errno
import os
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from schemux.config import TRACKING_SETTINGS, Settings, TrackingSetting, settings_from
from schemux.errors import ConfigError, TrackingUnavailable
from schemux.generated.bindings import BINDINGS
from schemux.panes import identity
from schemux.panes.identity import ProcessIdentity, choose_backend, open_server_process
from schemux.serving.server import call_bound_tool
from schemux.serving.state import ServingState
from schemux.system import processes
from schemux.tmux.references import ServerIdentity, server_identity
from schemux.tmux.server import ServerAddress, TmuxServer
from tests.support import Pane, new_pane, pane_format

pytestmark = pytest.mark.anyio

# the backends this kernel has (SO_PEERPIDFD arrived in Linux 6.5; Debian 12 runs 6.1)
NATIVE = identity.peer_pidfd_problem() is None
BACKENDS: tuple[TrackingSetting, ...] = ("peer-pidfd", "pidfd-open") if NATIVE else ("pidfd-open",)
NO_SUCH_OPTION = 0x7FFF  # a socket option no kernel has: SO_PEERPIDFD as on Linux < 6.5


async def tracked_read(tmux_socket: str, setting: TrackingSetting, pane: Pane) -> dict[str, Any]:
    """The structuredContent of a tracked tmux_capture under ``setting``."""
    context = ServingState(Settings(socket_name=tmux_socket, tracking_backend=setting))
    try:
        result = await call_bound_tool(
            BINDINGS["tmux_capture"], context, {"target": pane.reference(), "track": True}
        )
    finally:
        await context.close()
    content: dict[str, Any] | None = result.structured_content
    assert content is not None
    return content


@pytest.fixture
def pane(tmux_socket: str) -> Pane:
    return new_pane(tmux_socket, command="exec sleep 100000")


@pytest.fixture
def old_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    """The kernel of Debian 12 (Linux 6.1): pidfds, but none for a socket's peer."""
    monkeypatch.setattr(identity, "SO_PEERPIDFD", NO_SUCH_OPTION)


@pytest.fixture
async def server(tmux_socket: str) -> AsyncIterator[TmuxServer]:
    server = TmuxServer(ServerAddress(socket_name=tmux_socket))
    yield server
    await server.close()


@pytest.fixture
def open_fds() -> Iterator[None]:
    """The test leaves no descriptor open (a refused pidfd is closed)."""
    before = set(os.listdir("/proc/self/fd"))
    yield
    assert set(os.listdir("/proc/self/fd")) <= before


@pytest.mark.skipif(not NATIVE, reason="this kernel has no peer pidfds (Linux < 6.5)")
def test_choose_backend() -> None:
    assert choose_backend("pidfd-open") == "pidfd-open"
    assert choose_backend("auto") == "peer-pidfd"
    assert choose_backend("peer-pidfd") == "peer-pidfd"


@pytest.mark.usefixtures("old_kernel")
def test_choose_backend_without_peer_pidfds() -> None:
    assert identity.peer_pidfd_problem() is not None
    assert choose_backend("auto") == "pidfd-open"
    with pytest.raises(TrackingUnavailable, match="SCHEMUX_TRACKING_BACKEND=peer-pidfd"):
        choose_backend("peer-pidfd")


def test_choose_backend_without_pidfds(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_pidfd_open(pid: int, flags: int = 0) -> int:
        raise OSError(errno.ENOSYS, os.strerror(errno.ENOSYS))

    monkeypatch.setattr(os, "pidfd_open", no_pidfd_open)
    for setting in TRACKING_SETTINGS:
        with pytest.raises(TrackingUnavailable, match=r"Linux 5\.3"):
            choose_backend(setting)


@pytest.mark.usefixtures("old_kernel")
async def test_auto_tracks_without_peer_pidfds(tmux_socket: str, pane: Pane) -> None:
    result = await tracked_read(tmux_socket, "auto", pane)
    assert result["ok"] is True, result
    assert result["data"]["process_generation"].startswith(
        f"linux:{pane_format(pane, '#{pane_pid}')}:"
    )


@pytest.mark.usefixtures("old_kernel")
async def test_forced_pidfd_open_never_asks_for_a_peer_pidfd(tmux_socket: str, pane: Pane) -> None:
    result = await tracked_read(tmux_socket, "pidfd-open", pane)
    assert result["ok"] is True, result


@pytest.mark.usefixtures("old_kernel")
async def test_forced_peer_pidfd_is_refused_without_it(tmux_socket: str, pane: Pane) -> None:
    result = await tracked_read(tmux_socket, "peer-pidfd", pane)
    assert result["ok"] is False
    assert result["error"]["code"] == "tracking_unavailable"
    assert "SO_PEERPIDFD" in result["error"]["message"]
    assert "pidfd-open" in result["error"]["message"]


@pytest.mark.usefixtures("open_fds")
def test_a_pid_that_changes_hands_while_opened_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The start time read after pidfd_open differs from the one read before: another
    process took the pid in between, and the pidfd (of that process) is not kept."""
    real = processes.read_start_ticks
    readings: list[int] = []

    def recycled(pid: int) -> int:
        ticks = real(pid) + len(readings)  # each reading a later process
        readings.append(ticks)
        return ticks

    monkeypatch.setattr(identity, "read_start_ticks", recycled)
    with pytest.raises(TrackingUnavailable, match="changed hands"):
        open_server_process(os.getpid())
    assert len(readings) == 2


@pytest.mark.usefixtures("open_fds")
def test_an_ended_process_is_refused() -> None:
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    with pytest.raises(TrackingUnavailable, match="has ended"):
        open_server_process(pid)


def test_a_steady_process_is_held() -> None:
    handle = open_server_process(os.getpid())
    try:
        assert handle.alive()
        assert handle.start_ticks == processes.read_start_ticks(os.getpid())
    finally:
        handle.close()


@pytest.mark.usefixtures("open_fds")
async def test_a_server_that_changed_during_the_check_is_refused(server: TmuxServer) -> None:
    """The server reports another identity once the pidfd is held (it restarted, or pid
    and socket were taken over): the pidfd is not taken for it."""
    key = await server_identity(server)

    async def restarted() -> ServerIdentity:
        return dataclasses.replace(key, start_time=key.start_time + 1)

    tracking = ProcessIdentity("pidfd-open")
    try:
        with pytest.raises(TrackingUnavailable, match="ended or was replaced"):
            await tracking.check_server(key, restarted)
    finally:
        tracking.close()


async def test_a_server_in_another_pid_namespace_is_refused(server: TmuxServer) -> None:
    """The pid a server reports is not the one its socket's peer has here."""
    key = await server_identity(server)
    elsewhere = dataclasses.replace(key, pid=1)  # as a server in a container would say
    for setting in BACKENDS:
        tracking = ProcessIdentity(setting)
        try:
            with pytest.raises(TrackingUnavailable, match="another pid namespace"):
                await tracking.check_server(elsewhere, lambda: server_identity(server))
        finally:
            tracking.close()


async def test_both_backends_hold_the_server_itself(server: TmuxServer) -> None:
    key = await server_identity(server)
    for setting in BACKENDS:
        tracking = ProcessIdentity(setting)
        try:
            await tracking.check_server(key, lambda: server_identity(server))
            [held] = tracking._servers.values()
            assert (held.pid, held.alive()) == (key.pid, True)
            assert held.start_ticks == processes.read_start_ticks(key.pid)
        finally:
            tracking.close()


@pytest.mark.parametrize("raw", ["peer", "PIDFD_OPEN ", "pidfd-open;", "-auto", "#{pid}"])
def test_a_bad_setting_is_refused(raw: str) -> None:
    with pytest.raises(ConfigError, match="SCHEMUX_TRACKING_BACKEND"):
        settings_from({"SCHEMUX_TRACKING_BACKEND": raw})


def test_the_setting() -> None:
    assert settings_from({}).tracking_backend == "auto"
    env = {"SCHEMUX_TRACKING_BACKEND": " Pidfd-Open "}
    assert settings_from(env).tracking_backend == "pidfd-open"
