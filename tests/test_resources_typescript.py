"""The TypeScript SDK's client watching a pane through schemux's resources over
streamable HTTP (``resources_client.mjs``): the templates, completion, a read, a
subscription in both of the protocol's eras, the update a change brings and the read
after it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.http_serving import serving_over_http
from tests.node import run_node
from tests.support import new_pane, tmux, wait_until


@pytest.fixture(scope="module")
def served(tmux_socket: str) -> Iterator[str]:
    with serving_over_http(tmux_socket) as url:
        yield url


@pytest.mark.parametrize("era", ["2026-07-28", "legacy"])
def test_the_typescript_client_reads_and_watches_a_pane(
    served: str, tmux_socket: str, node_scripts: Path, era: str
) -> None:
    pane = new_pane(tmux_socket)
    tmux(tmux_socket, "send-keys", "-t", pane.pane_id, "echo before-the-watch", "Enter")
    wait_until(
        lambda: "\nbefore-the-watch" in tmux(tmux_socket, "capture-pane", "-p", "-t", pane.pane_id)
    )
    output = run_node(node_scripts, "resources_client.mjs", served, era, pane.pane_id)
    seen = json.loads(output)
    # the legacy handshake settles on the newest handshake-era revision
    assert seen["protocol"] == {"legacy": "2025-11-25"}.get(era, era)
    assert seen["templates"] == [
        "tmux://local/pane/{pane_id}/screen",
        "tmux://local/pane/{pane_id}/scrollback",
        "tmux://local/program/{program_id}/output",
    ]
    assert pane.pane_id in seen["completed"]
    uri = f"tmux://local/pane/%25{pane.pane_id[1:]}/screen"
    assert seen["uri"] == uri
    assert seen["before"]["uri"] == uri
    assert seen["before"]["mimeType"] == "text/plain"
    assert "before-the-watch" in seen["before"]["text"]
    assert "seen-by-the-ts-client" not in seen["before"]["text"]
    assert seen["updatedUri"] == uri
    # the screen after the update shows the command and what it printed
    assert "\nseen-by-the-ts-client" in seen["after"]
