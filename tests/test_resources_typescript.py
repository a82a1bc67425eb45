"""TypeScript clients of schemux's resources over streamable HTTP: the TypeScript SDK's
client watching a pane (``resources_client.mjs``: the templates, completion, a read, a
subscription in both of the protocol's eras, the update a change brings and the read
after it), and the MCP Inspector's CLI listing and reading them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.http_serving import serving_over_http
from tests.node import run_inspector, run_node
from tests.support import new_pane, tmux, wait_until


@pytest.fixture(scope="module")
def served(tmux_socket: str) -> Iterator[str]:
    with serving_over_http(tmux_socket) as url:
        yield url


@pytest.mark.long
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
        "tmux://local/program/{program_id}/recording",
        "tmux://local/call/{call_id}/recording",
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


def test_the_inspector_lists_and_reads_the_resources(
    served: str, tmux_socket: str, node_scripts: Path
) -> None:
    pane = new_pane(tmux_socket)
    tmux(tmux_socket, "send-keys", "-t", pane.pane_id, "echo shown-to-the-inspector", "Enter")
    wait_until(
        lambda: (
            "\nshown-to-the-inspector"
            in tmux(tmux_socket, "capture-pane", "-p", "-t", pane.pane_id)
        )
    )
    uri = f"tmux://local/pane/%25{pane.pane_id[1:]}/screen"
    http = (served, "--transport", "http")
    listed = run_inspector(node_scripts, *http, "--method", "resources/list")
    assert uri in [resource["uri"] for resource in listed["result"]["resources"]]
    templates = run_inspector(node_scripts, *http, "--method", "resources/templates/list")
    assert [each["uriTemplate"] for each in templates["result"]["resourceTemplates"]] == [
        "tmux://local/pane/{pane_id}/screen",
        "tmux://local/pane/{pane_id}/scrollback",
        "tmux://local/program/{program_id}/output",
        "tmux://local/program/{program_id}/recording",
        "tmux://local/call/{call_id}/recording",
    ]
    read = run_inspector(node_scripts, *http, "--method", "resources/read", "--uri", uri)
    [contents] = read["result"]["contents"]
    assert contents["uri"] == uri
    assert contents["mimeType"] == "text/plain"
    assert contents["text"] == "\n".join(
        tmux(tmux_socket, "capture-pane", "-p", "-t", pane.pane_id, "-S", "0", "-E", "-").split(
            "\n"
        )[:-1]
    )
