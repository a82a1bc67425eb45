"""start_program, read_program and stop_program against real tmux, in memory over MCP."""

from __future__ import annotations

import shlex
import stat
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from schemux.config import ProgramLimits, Settings
from schemux.generated.bindings import BINDINGS
from schemux.hosts.programs.gate import marker_start
from schemux.serving.state import ServingState
from schemux.tmux.owned_session import OWNED_TARGET
from tests.contexts import Contexts, client_of
from tests.support import call, call_error, new_pane, tmux

# every test here under each gate
pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("program_gate")]
# the windows a call could make or end, by id: a name is tmux's automatic rename of
# whatever another test's pane runs now
WINDOWS = "#{session_name}:#{window_id}"


async def read_all(client: Client, program_id: str, **options: Any) -> tuple[str, dict[str, Any]]:
    """Every page until ended, joined; and the last read."""
    text, cursor = "", None
    while True:
        arguments: dict[str, Any] = {"programId": program_id, "timeoutMs": 10_000, **options}
        if cursor is not None:
            arguments["cursor"] = cursor
        page = await call(client, "read_program", **arguments)
        text += page["text"]
        cursor = page["cursor"]
        if page["ended"]:
            return text, page


async def run(client: Client, argv: list[str], **options: Any) -> tuple[str, dict[str, Any]]:
    started = await call(client, "start_program", argv=argv, **options)
    return await read_all(client, started["programId"])


async def test_text_status_and_line_endings(programs: tuple[Client, ServingState]) -> None:
    client, _ = programs
    script = "printf 'a\\r\\nb\\n10%%\\r20%%\\r\\n\\033[1;31mred\\033[0m\\nlast'; exit 3"
    text, end = await run(client, ["sh", "-c", script])
    assert text == "a\nb\n10%\n20%\nred\nlast"
    assert end["outcome"] == "completed"
    assert end["exitStatus"] == 3
    assert end["signal"] is None
    assert end["outputComplete"] is True


@pytest.mark.parametrize(
    ("script", "status", "signal"),
    [
        ("kill -s SEGV $$", None, "SIGSEGV"),
        ("kill -s TERM $$", None, "SIGTERM"),
        ("exit 130", None, "SIGINT"),  # as the contract reads that status
        ("exit 0", 0, None),
    ],
)
async def test_how_it_ended(
    programs: tuple[Client, ServingState], script: str, status: int | None, signal: str | None
) -> None:
    client, _ = programs
    text, end = await run(client, ["sh", "-c", script])
    assert text == ""  # nothing of the gate's own (no "Segmentation fault")
    assert (end["exitStatus"], end["signal"]) == (status, signal)


async def test_a_burst_of_quick_programs_all_report_right(
    programs: tuple[Client, ServingState],
) -> None:
    """120 programs at once, 40 of each way to end: seven times the default of 16 running
    (``ProgramLimits``). Each costs 17 ms of CPU; 300 took 5 s of it a transport."""
    client, _ = programs
    burst = range(40)
    scripts = {
        **{f"printf 'x{n}\\n'": (0, None, f"x{n}\n") for n in burst},
        **{f"exit {n % 120 + 1}; : {n}": (n % 120 + 1, None, "") for n in burst},
        **{f"echo s{n}; kill -s SEGV $$": (None, "SIGSEGV", f"s{n}\n") for n in burst},
    }
    results: dict[str, tuple[Any, Any, str]] = {}

    async def one(script: str) -> None:
        text, end = await run(client, ["sh", "-c", script])
        results[script] = (end["exitStatus"], end["signal"], text)

    with anyio.fail_after(120):
        async with anyio.create_task_group() as group:
            for script in scripts:
                group.start_soon(one, script)
    assert results == scripts


async def test_stdin_from_input_never_shown(programs: tuple[Client, ServingState]) -> None:
    client, _ = programs
    text, end = await run(client, ["sh", "-c", "tr a-z A-Z"], input="secret words\n")
    assert text == "SECRET WORDS\n"
    assert end["exitStatus"] == 0


async def test_pages_reassemble_exactly(programs: tuple[Client, ServingState]) -> None:
    client, _ = programs
    started = await call(client, "start_program", argv=["seq", "1", "100000"])
    text, _ = await read_all(client, started["programId"])
    assert text == "".join(f"{n}\n" for n in range(1, 100001))
    page = await call(
        client, "read_program", programId=started["programId"], maxLines=3, timeoutMs=0
    )
    assert page["text"] == "1\n2\n3\n"
    assert page["ended"] is False


async def test_a_long_line_comes_in_pieces(programs: tuple[Client, ServingState]) -> None:
    client, _ = programs
    text, _ = await run(client, ["sh", "-c", "head -c 1000000 /dev/zero | tr '\\0' x; echo"])
    assert text == "x" * 1_000_000 + "\n"


async def test_a_timed_out_read_returns_nothing_and_the_cursor_carries_on(
    programs: tuple[Client, ServingState], tmp_path: Path
) -> None:
    client, _ = programs
    go = tmp_path / "go"  # the program prints once the first read timed out, however late
    wait_then_print = f"until [ -e {shlex.quote(str(go))} ]; do sleep 0.05; done; echo late"
    started = await call(client, "start_program", argv=["sh", "-c", wait_then_print])
    first = await call(client, "read_program", programId=started["programId"], timeoutMs=100)
    go.touch()
    assert (first["text"], first["ended"], first["outcome"]) == ("", False, "running")
    again = await call(
        client, "read_program", programId=started["programId"], cursor=first["cursor"],
        timeoutMs=5000,
    )  # fmt: skip
    assert again["text"] == "late\n"


async def test_stop_during_a_waiting_read(programs: tuple[Client, ServingState]) -> None:
    client, _ = programs
    started = await call(client, "start_program", argv=["sleep", "30"])
    reads: list[dict[str, Any]] = []

    async def reader() -> None:
        reads.append(
            await call(client, "read_program", programId=started["programId"], timeoutMs=10_000)
        )

    async with anyio.create_task_group() as group:
        group.start_soon(reader)
        await anyio.sleep(0.3)
        stopped = await call(client, "stop_program", programId=started["programId"])
    assert stopped["wasRunning"] is True
    assert stopped["outcome"] == "stopped"
    assert reads[0]["outcome"] == "stopped"
    assert reads[0]["outputComplete"] is False
    # its output stays readable, as an ended program's does, and stopping again says so
    again = await call(client, "read_program", programId=started["programId"], timeoutMs=0)
    assert again["outcome"] == "stopped"
    assert again["ended"] is True
    assert (await call(client, "stop_program", programId=started["programId"])) == {
        **stopped,
        "wasRunning": False,
    }


async def test_a_stopped_program_s_output_stays_readable(
    programs: tuple[Client, ServingState], programs_socket: str
) -> None:
    """Stopping threw the output away ("no program ...: it was stopped"); now it reads as
    an ended program's, the pane is gone, and nothing of the program runs."""
    client, _ = programs
    started = await call(
        client, "start_program", argv=["sh", "-c", "echo one; echo two; exec sleep 30"]
    )
    first = await call(client, "read_program", programId=started["programId"], timeoutMs=5000)
    while first["text"].count("\n") < 2:
        more = await call(
            client, "read_program", programId=started["programId"], cursor=first["cursor"],
            timeoutMs=5000,
        )  # fmt: skip
        first = {**more, "text": first["text"] + more["text"]}
    stopped = await call(client, "stop_program", programId=started["programId"])
    assert stopped["outcome"] == "stopped"
    text, end = await read_all(client, started["programId"])
    assert text.splitlines() == ["one", "two"]
    assert end["ended"] is True
    assert end["outcome"] == "stopped"
    panes = tmux(programs_socket, "list-panes", "-a", "-F", "#{pane_id}").split()
    assert started["paneId"] not in panes


async def test_a_pane_killed_from_outside_is_gone(
    programs: tuple[Client, ServingState], programs_socket: str
) -> None:
    client, _ = programs
    started = await call(client, "start_program", argv=["sleep", "30"])
    tmux(programs_socket, "kill-pane", "-t", started["paneId"])
    _, end = await read_all(client, started["programId"])
    assert end["outcome"] == "gone"
    assert end["lostEnd"] is True
    assert end["outputComplete"] is False


async def test_lifetime_expires(programs: tuple[Client, ServingState]) -> None:
    client, _ = programs
    started = await call(client, "start_program", argv=["sleep", "30"], lifetimeMs=300)
    assert started["effectiveLifetimeMs"] == 300
    _, end = await read_all(client, started["programId"])
    assert end["outcome"] == "expired"


async def test_bad_input_is_refused_and_changes_nothing(
    programs: tuple[Client, ServingState], programs_socket: str
) -> None:
    client, _ = programs
    await call(client, "run_program", argv=["true"])  # the server's own sessions made first
    # programs without fromPaneId get windows in _schemux; the ssh variant's tmux server is
    # shared with other tests, whose own sessions may change meanwhile
    windows = tmux(programs_socket, "list-windows", "-t", OWNED_TARGET, "-F", WINDOWS)
    assert "not found" in await call_error(client, "start_program", argv=["no-such-program-x"])
    assert "cannot be entered" in await call_error(
        client, "start_program", argv=["true"], startDirectory="/no/such/dir"
    )
    assert "minItems" in await call_error(client, "start_program", argv=[])
    assert "no program 'p0'" in await call_error(client, "read_program", programId="p0")
    assert tmux(programs_socket, "list-windows", "-t", OWNED_TARGET, "-F", WINDOWS) == windows
    first = await call(client, "start_program", argv=["echo", "one"])
    second = await call(client, "start_program", argv=["echo", "two"])
    page = await call(client, "read_program", programId=first["programId"], timeoutMs=5000)
    foreign = await call_error(
        client, "read_program", programId=second["programId"], cursor=page["cursor"]
    )
    assert "is not one that read_program returned" in foreign
    past = await call_error(
        client, "read_program", programId=first["programId"], cursor=page["cursor"] + (1 << 40)
    )
    assert "past the end" in past or "is not one" in past


async def test_retention_lets_the_oldest_output_go(tmux_socket: str, anyio_backend: str) -> None:
    limits = ProgramLimits(retained_ended=2)
    context = ServingState(Settings(socket_name=tmux_socket, program_limits=limits))
    async with client_of(context, BINDINGS) as client:
        ids = []
        for n in range(4):
            started = await call(client, "start_program", argv=["echo", str(n)])
            await read_all(client, started["programId"])
            ids.append(started["programId"])
        assert "no program" in await call_error(client, "read_program", programId=ids[0])
        assert "no program" in await call_error(client, "read_program", programId=ids[1])
        text, _ = await read_all(client, ids[3])
        assert text == "3\n"
        root = context.services.programs.root
        assert stat.S_IMODE(root.stat().st_mode) == 0o700
    await context.close()
    assert not root.exists()
    await context.close()  # closing again ends nothing twice (a file descriptor once closed)


async def test_inherit_the_variables_a_shell_exported(
    programs: tuple[Client, ServingState], programs_socket: str
) -> None:
    client, _ = programs
    pane = new_pane(programs_socket)
    tmux(
        programs_socket,
        "send-keys",
        "-t",
        pane.pane_id,
        "export SCHEMUX_ONLY_IN_SHELL=yes",
        "Enter",
    )
    script = 'echo "${SCHEMUX_ONLY_IN_SHELL:-unset}"'
    plain, _ = await run(client, ["sh", "-c", script], fromPaneId=pane.pane_id)
    assert plain == "unset\n"
    named, _ = await run(
        client, ["sh", "-c", script], fromPaneId=pane.pane_id,
        inheritShell=["SCHEMUX_ONLY_IN_SHELL"],
    )  # fmt: skip
    assert named == "yes\n"
    everything, _ = await run(
        client, ["sh", "-c", script], fromPaneId=pane.pane_id, inheritShell=True
    )
    assert everything == "yes\n"


async def test_snapshot_names_the_program_a_pane_runs(
    programs: tuple[Client, ServingState],
) -> None:
    client, _ = programs
    started = await call(client, "start_program", argv=["sleep", "30"])
    snapshot = await call(client, "tmux_snapshot")
    panes = {
        pane["target"]["id"]: pane
        for session in snapshot["data"]["sessions"]
        for window in session["windows"]
        for pane in window["panes"]
    }
    assert panes[started["paneId"]]["program_id"] == started["programId"]
    # a program's pane can be watched
    assert not (await client.call_tool("capture_pane", {"pane_id": started["paneId"]})).is_error


async def test_the_running_limit_is_a_clear_error(tmux_socket: str, make_context: Contexts) -> None:
    limits = ProgramLimits(max_running=2)
    context = make_context(socket_name=tmux_socket, program_limits=limits)
    async with client_of(context) as client:
        for _ in range(2):
            await call(client, "start_program", argv=["sleep", "30"])
        message = await call_error(client, "start_program", argv=["sleep", "30"])
        assert "2 programs run already" in message


async def test_run_program_keep_leaves_the_pane(
    programs: tuple[Client, ServingState], programs_socket: str
) -> None:
    client, _ = programs
    await call(client, "run_program", argv=["true"])  # the server's own sessions made first
    # the kept pane is in _schemux, as every program's without fromPaneId: other tests' sessions
    # on the ssh variant's shared tmux server may gain panes meanwhile
    owned = ("list-panes", "-s", "-t", OWNED_TARGET)
    before = set(tmux(programs_socket, *owned, "-F", "#{pane_id}").split())
    result = await call(client, "run_program", argv=["echo", "kept"], keep=True)
    assert result["output"] == "kept"

    def new_panes() -> list[str]:
        listing = tmux(programs_socket, *owned, "-F", "#{pane_id} #{pane_dead}")
        return [line.split()[1] for line in listing.splitlines() if line.split()[0] not in before]

    # one new pane, left for a person; dead once the released gate has gone (over ssh its
    # exit may be reported a moment after the call returned)
    with anyio.fail_after(5):
        while new_panes() != ["1"]:  # noqa: ASYNC110 (tmux state: nothing to wait on)
            await anyio.sleep(0.02)


def test_only_a_possiblemarker_start_is_held_back() -> None:
    marker = b"\x1b]7777;schemux-end;abc;"
    assert marker_start(b"line\r\n", marker) == 6
    assert marker_start(b"line\r\n\x1b[31m", marker) == 11
    assert marker_start(b"line\r\n\x1b]77", marker) == 6
    assert marker_start(b"x\x1b]7777;schemux-end;abc;0;", marker) == 1
    assert marker_start(b"x\x1b]7777;schemux-end;zzz;", marker) == 24


async def test_output_past_the_copy_limit_is_cut(tmux_socket: str, make_context: Contexts) -> None:
    limits = ProgramLimits(output_limit=1000)
    context = make_context(socket_name=tmux_socket, program_limits=limits)
    async with client_of(context) as client:
        text, end = await run(client, ["seq", "1", "2000"])
        assert end["outputCut"] is True
        assert end["outputComplete"] is False
        assert end["exitStatus"] == 0  # the program itself ran to its end
        assert text == "".join(f"{n}\n" for n in range(1, 2000))[: len(text)]
        assert 900 < len(text) <= 1000
        assert text.endswith("\n")  # cut on a line break


async def test_a_program_the_shell_cannot_find_is_not_started(
    programs: tuple[Client, ServingState], programs_socket: str
) -> None:
    client, _ = programs
    pane = new_pane(programs_socket)
    text, end = await run(
        client, ["schemux-missing-program"], fromPaneId=pane.pane_id, inheritShell=["HOME"]
    )
    assert end["outcome"] == "not_started"
    assert end["exitStatus"] == 127
    assert "schemux-missing-program" in text  # the shell's own word on it
    assert end["outputComplete"] is True  # nothing it wrote is missing


async def test_run_program_output_beyond_the_result_ceiling(
    programs: tuple[Client, ServingState],
) -> None:
    client, _ = programs
    script = "for i in $(seq 1 2000); do printf '%080d\\n' $i; done"
    result = await call(client, "run_program", argv=["sh", "-c", script])
    assert result["omittedBytes"] > 0
    assert result["returnedBytes"] == len(result["output"].encode()) <= 64 * 1024
    assert result["output"].endswith(f"{2000:080d}")
    assert result["outputComplete"] is False
