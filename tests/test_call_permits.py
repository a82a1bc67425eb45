"""A call's handle of a tmux server (``TmuxServer.for_call``) and what its
``CallPermits`` let it do: pure, no tmux."""

from __future__ import annotations

from schemux.config import AgentSession
from schemux.errors import ServerUnavailable
from schemux.tmux.server import CallPermits, ServerAddress, TmuxServer


def test_a_calls_handle_is_the_server_it_handles() -> None:
    """Handles share the server's state and are equal to it (dictionary keys, cursors
    and waits keyed by server see one server); another server is not."""
    server = TmuxServer(ServerAddress(socket_name="permits-one"))
    other = TmuxServer(ServerAddress(socket_name="permits-one"))
    handle = server.for_call(CallPermits())
    assert handle is not server
    assert handle == server
    assert hash(handle) == hash(server)
    assert handle.for_call(CallPermits()) == server
    assert handle != other
    assert handle.shared(dict) is server.shared(dict)
    handle.reported_pid = (1, 2)
    assert server.reported_pid == (1, 2)


def test_only_the_configured_server_may_be_started_and_only_once() -> None:
    configured = TmuxServer(ServerAddress(socket_name="permits-two"), agent=AgentSession())
    named = TmuxServer(ServerAddress(socket_name="permits-three"))
    permits = CallPermits()
    permits.allow_start(configured)
    permits.allow_start(named)
    assert permits.may_start(configured.for_call(permits))
    assert not permits.may_start(named)
    permits.start_used(configured)
    assert not permits.may_start(configured)
    assert not CallPermits().may_start(configured)  # another call's permission is its own


def test_an_ended_call_permits_nothing_and_remembers_no_failed_connect() -> None:
    """A handle that outlives its call (a program's, a cursor's) neither starts the
    server nor refuses a connect that failed while the call ran."""
    server = TmuxServer(ServerAddress(socket_name="permits-four"), agent=AgentSession())
    permits = CallPermits()
    permits.allow_start(server)
    failure = ServerUnavailable("host h did not answer")
    permits.connect_failed("h", failure)
    assert permits.failed_connect("h") is failure
    permits.end()
    assert not permits.may_start(server)
    assert permits.failed_connect("h") is None
    permits.connect_failed("h", failure)
    assert permits.failed_connect("h") is None
