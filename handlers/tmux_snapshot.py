"""tmux_snapshot: the sessions, windows and panes of a tmux server, with references."""

from __future__ import annotations

from schemux.domain.call import Call
from schemux.domain.failures import reporting_effects
from schemux.domain.snapshot import PaneEntry, SessionEntry, WindowEntry, list_server
from schemux.generated.models.tmux_snapshot import (
    Data,
    Pane,
    Server,
    Session,
    TargetPane,
    TargetSession,
    TargetWindow,
    TmuxSnapshotInput,
    TmuxSnapshotOutput,
    TmuxSnapshotOutputOk,
    Window,
)
from schemux.tmux.format import readable


async def handle(call: Call, request: TmuxSnapshotInput) -> TmuxSnapshotOutput:
    server = call.tmux(request.socket_name)
    # a failure is the pipeline's to send as the envelope
    listing = await reporting_effects(
        server,
        list_server(server, lambda pane: call.programs.lookup_pane(server, pane, call.session)),
    )
    identity = listing.identity
    data = Data(
        server=Server(
            socket_path=readable(identity.socket_path), pid=identity.pid, version=listing.version
        ),
        sessions=[session(entry) for entry in listing.sessions],
    )
    return TmuxSnapshotOutput(root=TmuxSnapshotOutputOk(ok=True, data=data))


def session(entry: SessionEntry) -> Session:
    return Session(
        target=TargetSession(kind="session", id=entry.id, generation=entry.generation),
        name=entry.name,
        attached=entry.attached,
        windows=[window(w) for w in entry.windows],
    )


def window(entry: WindowEntry) -> Window:
    return Window(
        target=TargetWindow(kind="window", id=entry.id, generation=entry.generation),
        index=entry.index,
        name=entry.name,
        active=entry.active,
        panes=[pane(p) for p in entry.panes],
    )


def pane(entry: PaneEntry) -> Pane:
    return Pane(
        target=TargetPane(kind="pane", id=entry.id, generation=entry.generation),
        index=entry.index,
        active=entry.active,
        width=entry.width,
        height=entry.height,
        current_command=entry.current_command,
        dead=entry.dead,
        dead_status=entry.dead_status,
        in_mode=entry.in_mode,
        program_id=entry.program_id,
    )
