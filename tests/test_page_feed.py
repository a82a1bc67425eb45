"""What an open page is told of the panes (``serving.page_feed``), against real tmux with
no browser: a pane made, split or closed is told when tmux says so, not at the next look."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from schemux.config import AuditSettings, Settings
from schemux.serving import page_feed
from schemux.serving.page_feed import PageFeed
from schemux.serving.state import ServingState
from tests.support import new_pane, tmux


async def roster_where(feed: PageFeed, wanted: Callable[[set[str]], bool]) -> set[str]:
    """The pane ids of the first roster the page is told that ``wanted`` accepts."""
    while True:
        for name, data in await feed.events.take():
            if name == "roster":
                ids = {pane["id"] for pane in data["panes"]}
                if wanted(ids):
                    return ids


@pytest.mark.anyio
async def test_panes_made_split_and_closed_are_told_as_tmux_tells_them(
    tmux_socket: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a look only every minute: what the page is told within seconds, tmux told it
    monkeypatch.setattr(page_feed, "ROSTER_SECONDS", 60.0)
    pane = new_pane(tmux_socket)
    settings = Settings(socket_name=tmux_socket, audit=AuditSettings(tmp_path / "audit.jsonl"))
    state = ServingState(settings)
    feed = PageFeed(state, signin=False)
    new: dict[str, Any] = {}
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(feed.run)
            with anyio.fail_after(20):
                await roster_where(feed, lambda ids: pane.pane_id in ids)
            with anyio.fail_after(5):  # a window of a user's session: %unlinked-window-add
                new["window"] = tmux(
                    tmux_socket, "new-window", "-d", "-t", f"{pane.session_name}:",
                    "-P", "-F", "#{pane_id}", "sleep 600",
                ).strip()  # fmt: skip
                await roster_where(feed, lambda ids: new["window"] in ids)
            with anyio.fail_after(5):  # a split of a window the page follows
                new["split"] = tmux(
                    tmux_socket, "split-window", "-d", "-t", pane.pane_id,
                    "-P", "-F", "#{pane_id}", "sleep 600",
                ).strip()  # fmt: skip
                await roster_where(feed, lambda ids: new["split"] in ids)
            with anyio.fail_after(5):  # a new session: %sessions-changed
                new["session"] = tmux(
                    tmux_socket, "new-session", "-d", "-P", "-F", "#{pane_id}", "sleep 600"
                ).strip()
                await roster_where(feed, lambda ids: new["session"] in ids)
            with anyio.fail_after(5):
                tmux(tmux_socket, "kill-pane", "-t", new["split"])
                await roster_where(feed, lambda ids: new["split"] not in ids)
            group.cancel_scope.cancel()
    finally:
        await feed.close()
        await state.close()
