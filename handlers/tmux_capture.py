"""tmux_capture: a pane's exact rows by reference, as a snapshot or as a tracked delta."""

from __future__ import annotations

from typing import Literal, TypedDict

from schemux.domain.call import Call
from schemux.domain.capture import CaptureLimits, PaneReference, Read, read_delta, snapshot
from schemux.domain.failures import reporting_effects
from schemux.generated.models.tmux_capture import (
    DataDelta,
    DataSnapshot,
    Interval,
    Scope,
    Splice,
    Target,
    TmuxCaptureInput,
    TmuxCaptureInputWithoutCursor,
    TmuxCaptureOutput,
    TmuxCaptureOutputOk,
)


async def handle(call: Call, request: TmuxCaptureInput) -> TmuxCaptureOutput:
    args = request.root
    reference = PaneReference(args.target.id, args.target.generation)
    server = call.tmux()
    if isinstance(args, TmuxCaptureInputWithoutCursor):
        scope = CaptureLimits(
            max_lines=args.max_lines, max_bytes=args.max_bytes, history_lines=args.history_lines
        )
        work = snapshot(server, call.screens, reference, scope, args.track)
    else:
        work = read_delta(server, call.screens, reference, args.cursor)
    # a failure is the pipeline's to send as the envelope
    read = await reporting_effects(server, work)
    return TmuxCaptureOutput(root=TmuxCaptureOutputOk(ok=True, data=data(read)))


class _Common(TypedDict):
    """What snapshots and deltas both report."""

    target: Target
    capture_id: str
    process_generation: str | None
    encoding: Literal["utf-8", "base64"]
    row_count: int
    bytes: int
    truncated: bool
    history_continuity: Literal["unknown"]
    interval: Interval
    scope: Scope


def data(read: Read) -> DataSnapshot | DataDelta:
    capture, scope = read.capture, read.scope
    common = _Common(
        target=Target(kind="pane", id=read.reference.pane_id, generation=read.reference.generation),
        capture_id=capture.capture_id,
        process_generation=read.process_generation,
        encoding=capture.rows.encoding,
        row_count=len(capture.rows.rows),
        bytes=capture.rows.bytes,
        truncated=capture.truncated,
        history_continuity="unknown",
        interval=Interval(
            clock="monotonic_seconds", started=capture.started, finished=capture.finished
        ),
        scope=Scope(
            max_lines=scope.max_lines, max_bytes=scope.max_bytes, history_lines=scope.history_lines
        ),
    )
    if read.delta is None:
        if read.next_cursor is None:
            return DataSnapshot(**common, mode="snapshot", rows=capture.rows.rows)
        return DataSnapshot(
            **common, mode="snapshot", rows=capture.rows.rows, next_cursor=read.next_cursor
        )
    splice = read.delta.splice
    return DataDelta(
        **common,
        mode="delta",
        base_capture_id=read.delta.base_capture_id,
        reset=read.delta.reset,
        splice=Splice(start=splice.start, delete=splice.delete, rows=splice.rows),
        next_cursor=read.delta.next_cursor,
    )
