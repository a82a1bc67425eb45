"""The settings tools (set_option, set_environment; served on request) against real tmux,
through the in-memory MCP client, on a tmux server of this module's own: what they set
is what tmux then holds, names and values reach tmux as one argument each and nothing in
them runs, schemux's own options stay its own, no target means the agent's pane, and bad
input is refused before any tmux work."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from schemux.generated.bindings import BINDINGS
from schemux.generated.tool_facts import FAMILIES
from schemux.serving.selection import select
from schemux.tmux.agent_session import AGENT_MARK
from tests.contexts import Contexts, client_of
from tests.support import (
    call,
    call_error,
    new_pane,
    remove_server,
    tagged_socket_name,
    tmux,
)

pytestmark = pytest.mark.anyio

SETTINGS = FAMILIES["settings"]


def hostile_values(marker: Path) -> list[str]:
    return [
        'it\'s "quoted"',
        "a;b ; kill-server",
        "#{pane_id}",
        "##{pane_id} #",
        f"$(touch {marker})",
        f"#(touch {marker})",
        "-t",
        "--",
        "`id` x\\n",
        "two\nlines\ttab",
        "é ☃ \x1b[31m red",
        "",
    ]


def pane_options(socket: str, pane_id: str) -> str:
    """The options set on the pane itself, as tmux lists them (``NAME VALUE`` lines, the
    name as it is)."""
    return tmux(socket, "show-options", "-p", "-t", pane_id)


async def test_the_default_selection_serves_none_of_them() -> None:
    assert set(SETTINGS) == {"set_option", "set_environment"}
    assert not set(SETTINGS) & set(select(BINDINGS, [], several_hosts=False))
    assert set(SETTINGS) <= set(select(BINDINGS, ["settings"], several_hosts=False))


async def test_a_value_is_stored_verbatim_and_nothing_in_it_runs(
    socket_client: Client, socket: str, marker: Path
) -> None:
    pane = new_pane(socket)
    for value in hostile_values(marker):
        arguments = {"option": "@set-test", "value": value, "scope": "pane", "target": pane.pane_id}
        assert await call(socket_client, "set_option", **arguments) == {
            "option": "@set-test", "value": value, "status": "set",
        }  # fmt: skip
        shown = await call(
            socket_client, "show_option", option="@set-test", scope="pane", target=pane.pane_id
        )
        assert shown["value"] == value
        set_environment = {"name": "SET_TEST", "value": value, "session_id": pane.session_id}
        assert (await call(socket_client, "set_environment", **set_environment))["value"] == value
        environment = await call(socket_client, "show_environment", session_id=pane.session_id)
        assert environment["variables"]["SET_TEST"] == value
    assert not marker.exists()


@pytest.mark.parametrize(
    "name", ["@n#{pane_id}", "@n#(touch {marker})", "@n ; kill-server", "@n$(touch {marker})"]
)
async def test_an_option_name_is_never_a_format(
    socket_client: Client, socket: str, marker: Path, name: str
) -> None:
    """tmux expands set-option's name as a format: unescaped, ``@n#{pane_id}`` set
    ``@n%5`` and ``@n#(touch F)`` set ``@n`` and ran touch."""
    name = name.replace("{marker}", str(marker))
    pane = new_pane(socket)
    await call(
        socket_client, "set_option", option=name, value="v", scope="pane", target=pane.pane_id
    )
    assert pane_options(socket, pane.pane_id) == f"{name} v\n"
    assert not marker.exists()
    assert tmux(socket, "display-message", "-p", "alive").strip() == "alive"


@pytest.mark.parametrize("name", ["-t", "--", "#{pane_id}", "#(touch {marker})", "a;b"])
async def test_an_unknown_option_is_named_as_given(
    socket_client: Client, socket: str, marker: Path, name: str
) -> None:
    name = name.replace("{marker}", str(marker))
    error = await call_error(socket_client, "set_option", option=name, value="1", scope="session")
    assert error == f"tmux set-option failed: invalid option: {name}"
    assert not marker.exists()


@pytest.mark.parametrize(
    "name", ["N#(touch {marker})", "$(touch {marker})", "-t", "--", "a;b", "#{pane_id}", "é"]
)
async def test_a_variable_name_is_one_argument(
    socket_client: Client, socket: str, marker: Path, name: str
) -> None:
    name = name.replace("{marker}", str(marker))
    pane = new_pane(socket)
    await call(socket_client, "set_environment", name=name, value="v", session_id=pane.session_id)
    shown = tmux(socket, "show-environment", "-t", pane.session_id, "--", name)
    assert shown == f"{name}=v\n"
    assert not marker.exists()


async def test_schemux_s_own_options_are_refused(socket_client: Client, socket: str) -> None:
    pane = new_pane(socket)
    for option in ("@schemux-busy", "@schemux_agent", "@schemux-program", "@schemux_x"):
        error = await call_error(
            socket_client, "set_option", option=option, value="1", scope="pane", target=pane.pane_id
        )
        assert error.startswith(f"option '{option}' is schemux's own"), error
    assert pane_options(socket, pane.pane_id) == ""


async def test_scopes_and_the_global_options(socket_client: Client, socket: str) -> None:
    pane = new_pane(socket)
    await call(socket_client, "set_option", option="history-limit", value="4321", scope="session",
               target=pane.session_name)  # fmt: skip
    assert tmux(socket, "show-options", "-v", "-t", pane.session_id, "history-limit") == "4321\n"
    await call(socket_client, "set_option", option="remain-on-exit", value="on", scope="window",
               target=pane.window_id)  # fmt: skip
    shown = tmux(socket, "show-options", "-wv", "-t", pane.window_id, "remain-on-exit")
    assert shown == "on\n"
    await call(
        socket_client, "set_option", option="@set-global", value="g", scope="session", global_=True
    )
    assert tmux(socket, "show-options", "-gv", "@set-global") == "g\n"
    # no scope: tmux tells it from the name (a window option here), on the agent's pane's
    error = await call_error(socket_client, "set_option", option="mouse", value="maybe")
    assert error.startswith("tmux set-option failed: ")


async def test_no_target_means_the_agent_pane(socket_client: Client, socket: str) -> None:
    agent = new_pane(socket)
    tmux(socket, "set-option", "-p", "-t", agent.pane_id, AGENT_MARK, "1")
    later = new_pane(socket)
    try:
        await call(socket_client, "set_option", option="@set-mine", value="agent's", scope="pane")
        assert pane_options(socket, agent.pane_id) == f'{AGENT_MARK} 1\n@set-mine "agent\'s"\n'
        assert "@set-mine" not in pane_options(socket, later.pane_id)
        await call(socket_client, "set_option", option="@set-session", value="s", scope="session")
        assert tmux(socket, "show-options", "-v", "-t", agent.session_id, "@set-session") == "s\n"
        await call(socket_client, "set_environment", name="SET_AGENT", value="yes")
        shown = tmux(socket, "show-environment", "-t", agent.session_id, "SET_AGENT")
        assert shown == "SET_AGENT=yes\n"
        assert "SET_AGENT" not in tmux(socket, "show-environment", "-t", later.session_id)
        assert "SET_AGENT" not in tmux(socket, "show-environment", "-g")
    finally:
        tmux(socket, "kill-session", "-t", agent.session_id, check=False)
        tmux(socket, "kill-session", "-t", later.session_id, check=False)


async def test_socket_name_sets_on_another_server(
    socket_client: Client, socket: str, other_tmux_socket: str
) -> None:
    there = new_pane(other_tmux_socket)
    await call(socket_client, "set_option", option="@set-there", value="1", scope="pane",
               target=there.pane_id, socket_name=other_tmux_socket)  # fmt: skip
    assert pane_options(other_tmux_socket, there.pane_id) == "@set-there 1\n"
    await call(socket_client, "set_environment", name="SET_THERE", value="1",
               session_id=there.session_id, socket_name=other_tmux_socket)  # fmt: skip
    shown = tmux(other_tmux_socket, "show-environment", "-t", there.session_id, "SET_THERE")
    assert shown == "SET_THERE=1\n"


@pytest.mark.parametrize(
    ("tool", "arguments", "refusal"),
    [
        ("set_option", {"option": "", "value": "1"}, "option is empty"),
        ("set_option", {"option": "a\nb", "value": "1"}, "option 'a\\nb' holds a newline"),
        ("set_option", {"option": "@schemux-busy", "value": "1"}, "is schemux's own"),
        ("set_option", {"option": "@x", "value": "a\x00b"}, "value: contains a NUL"),
        ("set_option", {"option": "@x", "value": "1", "target": "%1"}, "target needs a scope"),
        (
            "set_option",
            {"option": "@x", "value": "1", "scope": "pane", "target": "@1"},
            "pane_id '@1' is not a tmux pane id",
        ),
        ("set_option", {"option": "@x"}, "value"),
        ("set_environment", {"name": "", "value": "1"}, "name is empty"),
        ("set_environment", {"name": "A=B", "value": "1"}, "name 'A=B' holds an '='"),
        ("set_environment", {"name": "A\nB", "value": "1"}, "holds a newline"),
        ("set_environment", {"name": "A", "value": "1", "session_id": "1"}, "not a tmux session"),
        ("set_environment", {"name": "A", "value": "1", "session_name": ""}, "session_name is"),
        ("set_environment", {"name": "A", "value": "1", "cwd": "/"}, "cwd"),
    ],
)
async def test_bad_input_is_refused_before_any_tmux_work(
    make_context: Contexts, tool: str, arguments: dict[str, Any], refusal: str
) -> None:
    """On the configured socket, where no server runs: a call that reached tmux would
    start it."""
    never = tagged_socket_name("settings-never")
    try:
        async with client_of(make_context(socket_name=never)) as client:
            error = await call_error(client, tool, **arguments)
        assert refusal in error
        assert tmux(never, "list-sessions", check=False) == ""  # never started
    finally:
        remove_server(never)


async def test_a_session_that_is_not_there_changes_nothing(
    socket_client: Client, socket: str
) -> None:
    error = await call_error(
        socket_client, "set_environment", name="SET_NOWHERE", value="1", session_name="no such"
    )
    assert "no session matches" in error
    error = await call_error(
        socket_client, "set_option", option="@x", value="1", scope="window", target="@999999"
    )
    assert "target: no window '@999999'" in error
    assert "SET_NOWHERE" not in tmux(socket, "show-environment", "-g")
