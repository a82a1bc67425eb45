"""The embedded default: schemux starts its configured tmux server, with the agent's
session, when that server is not running; against real tmux on private sockets, each
test's server killed and its socket file removed afterwards."""

from __future__ import annotations

import asyncio
import os
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from schemux.config import (
    AgentSession,
    AuditSettings,
    RecordingSettings,
    Settings,
    parse_size,
    settings_from,
)
from schemux.domain.call import Call
from schemux.errors import ConfigError
from schemux.generated.bindings import BINDINGS
from schemux.hosts.local import shell_holds_terminal
from schemux.names import OWNED_SESSION, agent_name_problem, socket_directory
from schemux.serving.state import ServingState
from schemux.tmux.agent_session import (
    AGENT_MARK,
    STARTED_HISTORY_LIMIT,
    login_shell,
    user_environment,
    virtual_environment_bins,
)
from schemux.tmux.format import decode, field
from schemux.tmux.references import ServerIdentity
from tests.conftest import stdio_parameters
from tests.contexts import client_of
from tests.support import call, call_error, remove_server, run, tagged_socket_name, tmux, until

pytestmark = pytest.mark.anyio

# what a login shell's own output says about it, in any POSIX shell
# a login shell read the home's login files (bash is started with schemux's hooks,
# which read them as a login bash would: ``schemux.hooks``)
SHELL_REPORT = (
    'echo "login ${LOGIN_FILES_READ-unread}"; '
    'echo "${VIRTUAL_ENV-unset} ${SCHEMUX_HTTP_TOKEN-unset}"; pwd -P'
)
LOGIN_FILES = (".profile", ".zprofile")


def fresh_socket_name() -> str:
    return tagged_socket_name("embedded")


def server_running(socket_name: str) -> bool:
    return bool(tmux(socket_name, "list-sessions", "-F", "#{session_name}", check=False))


def sessions(socket_name: str) -> list[str]:
    """Read through tmux_format's field (tmux 3.4 and 3.5 escape what they print)."""
    listed = tmux(socket_name, "list-sessions", "-F", field("session_name"))
    return [decode(line) for line in listed.splitlines()]


def agent_panes(socket_name: str) -> list[str]:
    listing = tmux(socket_name, "list-panes", "-a", "-F", f"#{{pane_id}} #{{{AGENT_MARK}}}")
    return [line.split()[0] for line in listing.splitlines() if line.endswith(" 1")]


@pytest.fixture
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home whose only dotfiles are the login files, which mark that they were read,
    and an environment polluted the way a launcher would."""
    home = tmp_path / "home"
    home.mkdir()
    for name in LOGIN_FILES:
        (home / name).write_text("LOGIN_FILES_READ=yes\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("VIRTUAL_ENV", str(tmp_path / "venv"))
    monkeypatch.setenv("SCHEMUX_HTTP_TOKEN", "secret-of-schemux")
    return home


@pytest.fixture
def socket_name() -> Iterator[str]:
    """A socket on which no server runs yet; whatever starts there is removed."""
    name = fresh_socket_name()
    assert not server_running(name)
    try:
        yield name
    finally:
        remove_server(name)


@asynccontextmanager
async def schemux_on(settings: Settings) -> AsyncIterator[Client]:
    context = ServingState(settings)
    try:
        async with client_of(context, BINDINGS) as client:
            yield client
    finally:
        await context.close()


@pytest.fixture
async def client(anyio_backend: str, socket_name: str, user_home: Path) -> AsyncIterator[Client]:
    async with schemux_on(Settings(socket_name=socket_name, wait_ceiling=30)) as connected:
        yield connected


async def test_first_call_starts_the_server_with_the_agent_login_shell(
    client: Client, socket_name: str, user_home: Path
) -> None:
    result = await run(client, command=SHELL_REPORT)
    assert result["output"] == ["login yes", "unset unset", str(user_home.resolve())]
    assert sorted(sessions(socket_name)) == sorted([OWNED_SESSION, "agent"])
    assert agent_panes(socket_name) == [result["pane_id"]]
    shell = tmux(socket_name, "display-message", "-p", "-t", result["pane_id"], "#{pane_pid}")
    assert Path(f"/proc/{shell.strip()}/exe").resolve() == Path(login_shell(os.environ)).resolve()
    size = tmux(
        socket_name, "display-message", "-p", "-t", "=agent:", "#{window_width}x#{window_height}"
    )
    assert size.strip() == "160x48"
    # the server's global environment is the user's: what the pane's programs inherit
    environment = tmux(socket_name, "show-environment", "-g").splitlines()
    assert not [line for line in environment if line.startswith(("VIRTUAL_ENV=", "SCHEMUX_"))]
    path = next(line for line in environment if line.startswith("PATH="))
    for venv_bin in virtual_environment_bins(os.environ):
        assert venv_bin not in [os.path.realpath(p) for p in path[5:].split(os.pathsep)]


async def test_a_failed_first_capture_reports_both_sessions_it_started_the_server_with(
    client: Client, socket_name: str, user_home: Path
) -> None:
    """The envelope's effects name the owned session and the agent's, each with the
    reference tmux_snapshot would give it (their commands printed the server's identity:
    nothing is asked of tmux once the call failed)."""
    target = {"kind": "pane", "id": "%0", "generation": "stale"}
    result = await client.call_tool("tmux_capture", {"target": target})
    assert result.is_error
    assert result.structured_content is not None
    error = result.structured_content["error"]
    assert (error["code"], error["effects"]["state"]) == ("stale_reference", "known")
    pid, start_time, socket_path = (
        tmux(socket_name, "display-message", "-p", "#{pid} #{start_time} #{socket_path}")
        .strip()
        .split(" ", 2)
    )
    identity = ServerIdentity(int(pid), int(start_time), socket_path)
    ids = dict(
        line.split(" ", 1)[::-1]
        for line in tmux(socket_name, "list-sessions", "-F", "#{session_id} #{session_name}")
        .strip()
        .splitlines()
    )
    assert error["effects"]["created"] == [
        {"kind": "session", "id": ids[name], "generation": identity.generation(ids[name])}
        for name in (OWNED_SESSION, "agent")
    ]


async def test_no_target_keeps_the_agent_pane_when_a_person_adds_sessions(
    client: Client, socket_name: str
) -> None:
    first = await run(client, command="echo first")
    tmux(socket_name, "new-session", "-d", "-s", "mine")
    tmux(socket_name, "new-window", "-t", "=agent:")  # the agent's pane is no longer active
    again = await run(client, command="echo again")
    assert again["pane_id"] == first["pane_id"]
    assert again["output"] == ["again"]
    # a session name still means that session
    mine = await run(client, command="echo mine", session_name="mine")
    assert mine["pane_id"] != first["pane_id"]


@pytest.mark.parametrize("tool", ["picture_pane", "snapshot_pane", "capture_pane"])
async def test_reading_tools_without_a_target_read_the_agent_pane(
    client: Client, socket_name: str, tool: str
) -> None:
    """On a server schemux started, the tools that read a pane take the agent's pane with
    no target, as run_command does, though a person's session is the one used last."""
    agent = await run(client, command="echo agent-$((6 * 7))")
    tmux(socket_name, "new-session", "-d", "-s", "mine")
    tmux(socket_name, "new-window", "-t", "=agent:")  # the agent's pane is no longer active
    result = await client.call_tool(tool, {})
    assert not result.is_error, result.content
    assert result.structured_content is not None
    if tool == "capture_pane":  # its result is the pane's text alone
        assert "agent-42" in str(result.structured_content["result"])
    else:
        assert result.structured_content["pane_id"] == agent["pane_id"]


async def test_an_ended_agent_shell_is_made_again(client: Client, socket_name: str) -> None:
    first = await run(client, command="true")
    tmux(socket_name, "kill-session", "-t", "=agent")
    assert sessions(socket_name) == [OWNED_SESSION]  # the owned session keeps the server
    again = await run(client, command="echo back")
    assert again["output"] == ["back"]
    assert again["pane_id"] != first["pane_id"]
    assert agent_panes(socket_name) == [again["pane_id"]]


async def test_exit_in_the_agent_shell_is_reported_and_the_agent_made_again(
    client: Client, socket_name: str
) -> None:
    """The agent's shell has schemux's hooks: the command runs in that shell itself, so
    its state persists, and an `exit` ends it with its status reported."""
    first = await run(client, command="export SCHEMUX_KEPT=kept")
    kept = await run(client, command='echo "$SCHEMUX_KEPT"')
    assert kept["output"] == ["kept"]
    ended = await run(client, command="exit 3")
    assert ended["exit_status"] == 3
    assert ended["pane_id"] == first["pane_id"]
    await until(lambda: first["pane_id"] not in agent_panes(socket_name))
    again = await run(client, command='echo "back ${SCHEMUX_KEPT-unset}"')
    assert again["output"] == ["back unset"]
    assert again["pane_id"] != first["pane_id"]
    assert agent_panes(socket_name) == [again["pane_id"]]


async def test_a_call_right_after_exit_gets_a_new_agent_shell(
    client: Client, socket_name: str
) -> None:
    """The call after an `exit` may come before tmux has closed the ended shell's pane:
    it still finds the pane, which is gone by its next step. It goes on in a new agent
    shell, as it would a moment later, rather than fail on the pane that went."""
    for round_number in range(6):
        ended = await run(client, command="exit 3")
        assert ended["exit_status"] == 3
        again = await run(client, command=f"echo again {round_number}")
        assert again["output"] == [f"again {round_number}"], again
        assert again["pane_id"] != ended["pane_id"]


async def test_a_server_killed_between_calls_is_started_by_the_next(
    client: Client, socket_name: str
) -> None:
    first = await run(client, command="echo one")
    tmux(socket_name, "kill-server")
    await until(lambda: not server_running(socket_name))
    await anyio.sleep(0.5)  # as between two calls: schemux sees its control client end
    again = await run(client, command=SHELL_REPORT)
    assert again["output"][0] == "login yes"
    assert agent_panes(socket_name) == [again["pane_id"]]
    assert first["output"] == ["one"]


def test_a_process_gone_is_not_waited_for() -> None:
    assert shell_holds_terminal(2**22 + 1, "/usr/bin/tmux")  # above any pid_max


async def test_snapshot_of_a_server_not_running_lists_the_agent_session(
    client: Client, socket_name: str
) -> None:
    result = await call(client, "tmux_snapshot")
    assert result["ok"] is True
    names = [entry["name"] for entry in result["data"]["sessions"]]
    assert names == ["agent"]


async def test_run_program_on_a_server_not_running(client: Client, socket_name: str) -> None:
    result = await call(client, "run_program", argv=["sh", "-c", "echo made; exit 4"])
    assert (result["output"], result["exitStatus"]) == ("made", 4)
    assert "agent" in sessions(socket_name)


async def test_another_socket_not_running_is_not_started(client: Client, socket_name: str) -> None:
    other = fresh_socket_name()
    try:
        message = await call_error(client, "run_command", command="true", socket_name=other)
        assert f"no tmux server is running on socket name '{other}'" in message
        snapshot = await client.call_tool("tmux_snapshot", {"socket_name": other})
        assert snapshot.is_error
        assert snapshot.structured_content is not None
        assert snapshot.structured_content["error"]["code"] == "server_unavailable"
        assert not server_running(other)
        assert not Path(socket_directory(), other).exists()
        assert not server_running(socket_name)  # nor was the configured one
    finally:
        remove_server(other)


async def test_naming_the_configured_server_by_socket_name_starts_it(
    client: Client, socket_name: str
) -> None:
    result = await run(client, command="echo here", socket_name=socket_name)
    assert result["output"] == ["here"]
    assert agent_panes(socket_name) == [result["pane_id"]]


async def test_a_running_server_without_an_agent_keeps_the_old_default(
    anyio_backend: str, socket_name: str, user_home: Path
) -> None:
    tmux(socket_name, "-f", "/dev/null", "new-session", "-d", "-s", "theirs")
    async with schemux_on(Settings(socket_name=socket_name)) as client:
        result = await run(client, command="echo theirs")
    theirs = tmux(socket_name, "display-message", "-p", "-t", "=theirs:", "#{pane_id}")
    assert result["pane_id"] == theirs.strip()
    assert "agent" not in sessions(socket_name)
    # a server schemux did not start keeps its options
    assert tmux(socket_name, "show-options", "-gv", "history-limit").strip() == "2000"


async def test_the_agent_pane_keeps_a_long_output_whole(client: Client, socket_name: str) -> None:
    """The server schemux starts keeps more history than tmux's 2,000 rows by default:
    100,000 lines in the agent's pane come back whole (issue 34)."""
    result = await run(client, command="seq 1 100000", socket_name=socket_name, timeout=60)
    assert (result["output_truncated"], result["output_truncated_lines"]) == (False, 0)
    assert result["output"] == [str(number) for number in range(1, 100_001)]
    limit = tmux(socket_name, "display-message", "-p", "-t", result["pane_id"], "#{history_limit}")
    assert int(limit) == STARTED_HISTORY_LIMIT


async def test_lines_the_agent_pane_lost_to_its_history_are_counted_exactly(
    anyio_backend: str, socket_name: str, user_home: Path, tmp_path: Path
) -> None:
    """Recorded, as calls are by default (beside the audit log), the agent's pane counts
    exactly the lines of an output that outgrew its history (issue 34): a new agent
    pane, made once the first one's shell exited, takes a lower limit set meanwhile."""
    directory = tmp_path / "audit"
    settings = Settings(
        socket_name=socket_name,
        wait_ceiling=30,
        audit=AuditSettings(directory / "audit.jsonl"),
        recording=RecordingSettings(directory),
    )
    async with schemux_on(settings) as client:
        first = await run(client, command="true")
        tmux(socket_name, "set-option", "-g", "history-limit", "200")
        await run(client, command="exit")
        # the next call makes a new agent pane once this one is gone (it closes as the
        # call ends: a call a moment later may find it still there, closing)
        await until(lambda: first["pane_id"] not in agent_panes(socket_name))
        result = await run(client, command="seq 1 500")
        assert result["pane_id"] != first["pane_id"]
        assert agent_panes(socket_name) == [result["pane_id"]]
        tail = result["output"]
        assert result["output_truncated"]
        assert 160 <= len(tail) < 500
        assert tail == [str(number) for number in range(501 - len(tail), 501)]
        assert result["output_truncated_lines"] == 500 - len(tail)


async def test_a_higher_history_limit_of_the_users_configuration_is_kept(
    anyio_backend: str, socket_name: str, user_home: Path
) -> None:
    (user_home / ".tmux.conf").write_text(f"set -g history-limit {STARTED_HISTORY_LIMIT * 2}\n")
    async with schemux_on(Settings(socket_name=socket_name)) as client:
        result = await run(client, command="true")
    limit = tmux(socket_name, "display-message", "-p", "-t", result["pane_id"], "#{history_limit}")
    assert int(limit) == STARTED_HISTORY_LIMIT * 2


@pytest.mark.parametrize(
    "name",
    [
        *("; kill-server", "#{pane_id}", "#(touch /tmp/x)", "-t", "a b;", "a\\;"),
        *('it\'s "q" ##', "é\t", "$HOME", "a$ $1"),
    ],
)
async def test_hostile_agent_session_names_stay_one_argument(
    anyio_backend: str, socket_name: str, user_home: Path, name: str
) -> None:
    if agent_name_problem(name) is not None:
        with pytest.raises(ConfigError, match="SCHEMUX_AGENT_SESSION"):
            settings_from({"SCHEMUX_AGENT_SESSION": name, "SCHEMUX_SOCKET_NAME": socket_name})
        return
    settings = settings_from({"SCHEMUX_AGENT_SESSION": name, "SCHEMUX_SOCKET_NAME": socket_name})
    async with schemux_on(settings) as client:
        result = await run(client, command="echo ok")
    assert result["output"] == ["ok"]
    assert sorted(sessions(socket_name)) == sorted([OWNED_SESSION, name])


async def test_two_processes_starting_the_same_server_make_one_agent_session(
    anyio_backend: str, socket_name: str, user_home: Path
) -> None:
    parameters = stdio_parameters("--socket-name", socket_name, env={"HOME": str(user_home)})
    snapshots: list[dict[str, Any]] = []
    async with Client(parameters) as first, Client(parameters) as second:

        async def first_call(client: Client) -> None:
            snapshots.append(await call(client, "tmux_snapshot"))

        # each process's first call finds no server and starts one, at the same moment
        async with anyio.create_task_group() as group:
            group.start_soon(first_call, first)
            group.start_soon(first_call, second)
        assert sorted(sessions(socket_name)) == sorted([OWNED_SESSION, "agent"])
        assert len(agent_panes(socket_name)) == 1
        for snapshot in snapshots:
            assert [entry["name"] for entry in snapshot["data"]["sessions"]] == ["agent"]
        # one after the other (commands typed into one shell at once would mix): the
        # same shell runs both
        ran = [await run(client, command="echo $$") for client in (first, second)]
    assert ran[0]["pane_id"] == ran[1]["pane_id"] == agent_panes(socket_name)[0]
    assert ran[0]["output"] == ran[1]["output"]


async def test_the_server_outlives_schemux(
    anyio_backend: str, socket_name: str, user_home: Path
) -> None:
    async with schemux_on(Settings(socket_name=socket_name)) as client:
        pane = (await run(client, command="true"))["pane_id"]
    # schemux's control clients are gone, the person's view of the agent's shell is not
    await until(lambda: tmux(socket_name, "list-clients", "-F", "#{client_pid}") == "")
    assert agent_panes(socket_name) == [pane]


async def test_a_home_with_format_text_is_taken_literally(
    anyio_backend: str, socket_name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "h #{session_name} #(echo x) ## it's;"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    async with schemux_on(Settings(socket_name=socket_name)) as client:
        result = await run(client, command="pwd -P")
    assert result["output"] == [str(home.resolve())]


# pure parts


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("agent", None),
        ("; kill-server", None),
        ("#{pane_id}", None),
        ("-t", None),
        ("", "empty"),
        ("a:b", "':'"),
        ("a.b", "'.'"),
        ("a\\b", "'\\\\'"),
        ("a\nb", "control character"),
        ("a\x1fb", "control character"),
        ("a\x00b", "control character"),
        ("a\udcffb", "UTF-8"),
        ("$dev", "'$'"),
        ("a${b}", "'$'"),
        ("$_x", "'$'"),
        ("$1 a$ $", None),
        (OWNED_SESSION, "schemux's own session"),
    ],
)
def test_agent_name_problem(name: str, problem: str | None) -> None:
    found = agent_name_problem(name)
    if problem is None:
        assert found is None
    else:
        assert found is not None
        assert problem in found


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("160x48", (160, 48)),
        (" 80x24 ", (80, 24)),
        ("80X24", None),
        ("0x24", None),
        ("80x", None),
        ("-80x24", None),
        ("80x24x2", None),
        ("10001x24", None),
        ("\uff180x24", None),  # a fullwidth digit, which str.isdigit takes
    ],
)
def test_parse_size(text: str, size: tuple[int, int] | None) -> None:
    assert parse_size(text) == size


def test_agent_settings_from_the_environment() -> None:
    settings = settings_from({"SCHEMUX_AGENT_SESSION": "work", "SCHEMUX_AGENT_SIZE": "100x30"})
    assert settings.agent == AgentSession("work", 100, 30)
    assert settings_from({}).agent == AgentSession("agent", 160, 48)
    with pytest.raises(ConfigError, match=r"SCHEMUX_AGENT_SIZE='big'"):
        settings_from({"SCHEMUX_AGENT_SIZE": "big"})
    with pytest.raises(ConfigError, match=r"SCHEMUX_AGENT_SESSION.*':'"):
        settings_from({"SCHEMUX_AGENT_SESSION": "a:b"})


def test_user_environment_drops_what_is_not_the_users(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    env = {
        "PATH": f"{venv}/bin:/usr/local/bin::{venv}/bin/../bin:/usr/bin",
        "VIRTUAL_ENV": str(venv),
        "VIRTUAL_ENV_PROMPT": "(venv)",
        "PYTHONPATH": "/x",
        "PYTHONHOME": "/y",
        "TMUX": "/tmp/tmux-0/default,1,0",
        "TMUX_PANE": "%1",
        "SCHEMUX_HTTP_TOKEN": "secret",
        "SCHEMUXISH": "kept",
        "LANG": "C.UTF-8",
        "SHELL": "/somewhere/else",
    }
    cleaned = user_environment(env, "/bin/zsh")
    assert cleaned == {
        "PATH": "/usr/local/bin::/usr/bin",
        "SCHEMUXISH": "kept",
        "LANG": "C.UTF-8",
        "SHELL": "/bin/zsh",
    }


def test_login_shell_prefers_the_passwd_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    class Entry:
        pw_shell = "/bin/sh"
        pw_dir = "/"

    monkeypatch.setattr("schemux.tmux.agent_session.pwd.getpwuid", lambda _: Entry)
    assert login_shell({"SHELL": "/bin/bash"}) == "/bin/sh"
    Entry.pw_shell = "relative/shell"
    assert login_shell({"SHELL": "/bin/bash"}) == "/bin/bash"
    assert login_shell({"SHELL": "/no/such/shell"}) == "/bin/sh"
    assert login_shell({}) == "/bin/sh"


def test_login_shell_passes_over_shells_that_refuse_a_login(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Entry:
        pw_shell = "/usr/sbin/nologin"

    monkeypatch.setattr("schemux.tmux.agent_session.pwd.getpwuid", lambda _: Entry)
    assert login_shell({"SHELL": "/bin/false"}) == "/bin/sh"
    assert login_shell({"SHELL": "/bin/bash"}) == "/bin/bash"


async def test_a_login_shell_that_ends_at_once_is_a_clear_error(
    anyio_backend: str,
    socket_name: str,
    user_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    shell = tmp_path / "ends-at-once"
    shell.write_text("#!/bin/sh\nexit 0\n")
    shell.chmod(0o755)
    monkeypatch.setattr("schemux.tmux.server.login_shell", lambda _: str(shell))
    async with schemux_on(Settings(socket_name=socket_name)) as client:
        message = await call_error(client, "run_command", command="true")
    # the shell ends a few milliseconds after it starts, so the call fails at whichever
    # step finds it gone (usually at once: "the agent's login shell ... ended as soon as
    # it started"), or finds it still running as what it is, never as a shell at a prompt
    assert message.startswith(
        (f"the agent's login shell {shell} ended as soon as it started", "pane %", "tmux ")
    ), message
    await until(lambda: sessions(socket_name) == [OWNED_SESSION])  # the server stays up


async def test_a_socket_tmux_cannot_create_is_a_clear_error(
    anyio_backend: str, tmp_path: Path, user_home: Path
) -> None:
    # short: a socket path is at most 107 bytes, and tmp_path can be long
    socket_path = Path(tempfile.gettempdir()) / f"absent-{uuid.uuid4().hex[:8]}" / "socket"
    async with schemux_on(Settings(socket_path=str(socket_path))) as client:
        message = await call_error(client, "run_command", command="true")
    assert f"tmux could not start a server on socket path {socket_path}" in message
    assert not socket_path.parent.exists()


def test_login_shell_without_a_passwd_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(uid: int) -> object:
        raise KeyError(uid)

    monkeypatch.setattr("schemux.tmux.agent_session.pwd.getpwuid", missing)
    assert login_shell({"SHELL": "/bin/bash"}) == "/bin/bash"


async def test_reaping_never_starts_the_server(
    anyio_backend: str, socket_name: str, user_home: Path
) -> None:
    """What a dead schemux left is looked for on a server that runs; the start-up reaper
    starts none (the call's first command does, with the agent's session)."""
    context = ServingState(Settings(socket_name=socket_name))
    try:
        await context.services.abandoned.settled(context.services.tmux())
        assert not server_running(socket_name)
        call = Call(context.services, context.services.scope)
        result = await call.tmux().run("display-message", "-p", "#{session_name}")
        assert result  # the call's first command starts it, reaping or not
        assert agent_panes(socket_name)
    finally:
        await context.close()


async def test_a_call_keeps_its_permission_to_start_the_server(
    anyio_backend: str, socket_name: str, user_home: Path
) -> None:
    """Each call may start the configured server with its first command, whatever other
    calls did meanwhile: a call's first command never uses up another's permission."""
    context = ServingState(Settings(socket_name=socket_name))
    first_ran, second_began = asyncio.Event(), asyncio.Event()

    async def first_call() -> None:
        server = Call(context.services, context.services.scope).tmux()
        await second_began.wait()
        assert await server.run("display-message", "-p", "first") == ["first"]
        first_ran.set()

    async def second_call() -> list[str]:
        server = Call(context.services, context.services.scope).tmux()
        second_began.set()
        await first_ran.wait()
        remove_server(socket_name)  # gone before this call's first command
        await until(lambda: not server_running(socket_name))
        await server.close()  # its control client went with the server
        return await server.run("display-message", "-p", "second")

    try:
        _, second = await asyncio.gather(first_call(), second_call())
        assert second == ["second"]
        assert server_running(socket_name)
        assert agent_panes(socket_name)
    finally:
        await context.close()


async def test_capture_pane_without_a_target_reads_the_agent_pane(
    client: Client, socket_name: str
) -> None:
    """``capture_pane {}`` was refused ("'paneId' is a required property"): it reads
    the agent's pane, every row of its screen, as tmux gives them."""
    await run(client, command="echo captured-$((6 * 7))")
    (agent,) = agent_panes(socket_name)
    screen = (await call(client, "capture_pane"))["result"]
    assert "captured-42" in screen.splitlines()
    rows = tmux(socket_name, "capture-pane", "-p", "-t", agent).removesuffix("\n")
    assert screen == rows
    height = tmux(socket_name, "display-message", "-p", "-t", agent, "#{pane_height}")
    assert len(screen.split("\n")) == int(height)


async def test_every_shell_tool_without_a_target_uses_the_agent_pane(
    client: Client, socket_name: str
) -> None:
    """run_command, run_shell_command, send_keys and wait_for_text with no target."""
    shell = await call(client, "run_shell_command", command="echo agent")
    assert shell["output"] == "agent"
    (agent,) = agent_panes(socket_name)
    assert shell["paneId"] == agent
    assert (await run(client, command="true"))["pane_id"] == agent
    waited: dict[str, Any] = {}

    async def wait() -> None:
        waited.update(await call(client, "wait_for_text", patterns=["^typed-by-keys$"], regex=True))

    async with anyio.create_task_group() as group:
        group.start_soon(wait)
        await anyio.sleep(0.5)  # the wait has begun: only what comes after it counts
        sent = await call(client, "send_keys", keys="echo typed-by-keys")
        assert sent == {"result": f"Keys sent to pane {agent}"}
    assert waited["outcome"] == "matched", waited
    assert waited["pane_id"] == agent
