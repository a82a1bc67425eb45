"""Two ServingStates in one process share nothing: what a call of one leaves on a tmux
server (a pane with a call in flight, a pane settling, a shell known to have no line
editor) is kept by that context's own TmuxServer, never seen by the other's, even on the
same tmux server. What every caller must see, the pane a call runs in, tmux itself tells
(``schemux.panes.claims``). Real tmux on a private socket, through the in-memory MCP client."""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import pytest

from schemux.config import Settings
from schemux.errors import SchemuxError
from schemux.generated.bindings import BINDINGS
from schemux.panes.targets import PaneTarget, resolve_pane
from schemux.serving.state import ServingState
from schemux.shell.idle import ShellsWithoutEditor
from schemux.shell.settling import PaneSettling
from tests.contexts import client_of
from tests.support import call, call_error, new_pane, shell_holds_terminal, wait_until

pytestmark = pytest.mark.anyio


@pytest.fixture
async def two_contexts(
    anyio_backend: str, main_tmux_socket: str
) -> AsyncIterator[tuple[ServingState, ServingState]]:
    """Two contexts on the same tmux server, as two schemux processes would have, but in
    one process."""
    first = ServingState(Settings(socket_name=main_tmux_socket))
    second = ServingState(Settings(socket_name=main_tmux_socket))
    try:
        yield first, second
    finally:
        await first.close()
        await second.close()


async def test_a_pane_busy_with_one_contexts_call_is_busy_for_another_at_once(
    two_contexts: tuple[ServingState, ServingState], main_tmux_socket: str
) -> None:
    """While the first context's call runs in the pane, the second context knows nothing
    of it in itself: it does not wait for that call (as a call of its own context does, up
    to ``IN_FLIGHT_GRACE_SECONDS``); the pane's claim refuses it at once."""
    first, second = two_contexts
    pane = new_pane(main_tmux_socket)
    outcome: dict[str, object] = {}
    async with (
        client_of(first, BINDINGS) as first_client,
        client_of(second, BINDINGS) as second_client,
    ):

        async def in_first() -> None:
            outcome["first"] = await call(
                first_client, "run_command", command="sleep 1.5; echo first", pane_id=pane.pane_id
            )

        async with anyio.create_task_group() as group:
            group.start_soon(in_first)
            await anyio.to_thread.run_sync(wait_until, lambda: not shell_holds_terminal(pane))
            started = anyio.current_time()
            refused = await call_error(
                second_client, "run_command", command="echo second", pane_id=pane.pane_id
            )
            waited = anyio.current_time() - started
            still_running = "first" not in outcome
    assert "is busy: another run_command call is running in it (of this schemux" in refused
    assert still_running, "the second context waited for the first context's call"
    assert waited < 1.0, waited
    first_result = outcome["first"]
    assert isinstance(first_result, dict)
    assert first_result["output"] == ["first"]


async def test_each_contexts_server_keeps_its_own_pane_state(
    two_contexts: tuple[ServingState, ServingState], main_tmux_socket: str
) -> None:
    """The state of panes lives in each context's TmuxServer: a pane in flight or settling
    in one, or a shell known to read without a line editor, is not so in the other's;
    within one context, every call reaches the same state."""
    first, second = two_contexts
    pane_id = new_pane(main_tmux_socket).pane_id
    first_server, second_server = first.services.tmux(), second.services.tmux()
    assert first.services.tmux() is first_server
    assert first_server.shared(PaneSettling) is first.services.tmux().shared(PaneSettling)
    assert first_server.shared(PaneSettling) is not second_server.shared(PaneSettling)
    pane = await resolve_pane(first_server, PaneTarget(pane_id=pane_id), None)

    async with first_server.shared(PaneSettling).occupying(first_server, pane):
        with pytest.raises(SchemuxError, match="busy"):
            async with first_server.shared(PaneSettling).occupying(first_server, pane):
                pass
        async with second_server.shared(PaneSettling).occupying(second_server, pane):
            pass  # not busy there

    first_server.shared(ShellsWithoutEditor).add((pane.pid, "/dev/pts/0"))
    assert (pane.pid, "/dev/pts/0") not in second_server.shared(ShellsWithoutEditor)
    assert second_server.shared(ShellsWithoutEditor) == set()
