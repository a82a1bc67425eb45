"""Programs under attack and at every exit: hostile values reach the program exactly and run
nothing, a program cannot forge its end, limits hold under concurrency, stopping ends
the whole process tree, cancellation, and cleanup on every exit path of a real server."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from schemux.config import ProgramLimits, Settings
from schemux.generated.bindings import BINDINGS
from schemux.host_settings import SshTarget
from schemux.hosts.programs.gate import MARKER_PREFIX, PYTHON_GATE, report_token, scan
from schemux.hosts.programs.gate_process import TABLE_BYTES
from schemux.hosts.programs.host import LocalPrograms
from schemux.programs import output as output_module
from schemux.programs import panes
from schemux.programs import store as store_module
from schemux.programs.program import Program, ProgramSpec
from schemux.programs.store import ProgramCaller
from schemux.serving.state import ServingState
from schemux.shell.abandoned import PANE_OPTION, reap_runtime_directories
from schemux.system.processes import this_process
from schemux.system.runtime_identity import own_identity, owner_alive
from schemux.text.terminal import TextFilter
from schemux.tmux.server import TmuxServer
from tests.contexts import Contexts, client_of
from tests.http_serving import serve_http
from tests.process_table import processes
from tests.support import call, call_error, new_pane, tmux, until, wait_until

# every test here under each gate: in process, and in a schemux it starts
pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("program_gate")]

HOSTILE_NAMES = [
    "d#(touch PWNED)", "d#{pane_id}", "d##x", "d;x", "d\\;x", "-d", "d'\"q", "d\tt",
    "d\nn", "d\x1fu", "d $HOME `id`", "d" * 200,
]  # fmt: skip


PRINT_CWD = "import os; print(repr(os.getcwd()))"


# what a test's sleeps are told by: this process's pid, fixed width so that no run's is the
# start of another's, since the suite may run beside another run of it (or in workers)
RUN_DIGITS = f"{os.getpid():07d}"


def sleep_argument(tag: str) -> str:
    """A ``sleep`` duration that names this run and ``tag`` (50 minutes, and digits)."""
    return f"3000.{RUN_DIGITS}{tag}"


def alive_with(tag: str) -> list[int]:
    """Live ``sleep`` processes of this run whose argument starts with ``tag``'s."""
    word = sleep_argument(tag)
    return [
        process.pid
        for process in processes()
        if process.alive
        and process.argv[:1] == (b"sleep",)
        and len(process.argv) > 1
        and process.argv[1].startswith(word.encode())
        and process.pid != os.getpid()
    ]


def resistant_tree(tag: str) -> list[str]:
    """A program whose child ignores SIGTERM and SIGHUP, with a daemon that setsid's and
    forks twice: ``sleep`` processes of ``sleep_argument`` TAG1 and TAG2."""
    child, daemon = sleep_argument(f"{tag}1"), sleep_argument(f"{tag}2")
    script = (
        f"(trap '' TERM HUP; exec sleep {child}) & "
        f'setsid sh -c \'sh -c "trap \\"\\" TERM HUP; exec sleep {daemon}" & exit\' & '
        "trap '' TERM HUP; echo started; wait"
    )
    return ["sh", "-c", script]


# the gate's grace for a stopped or expired program, from SIGTERM to SIGKILL: the trees
# here resist SIGTERM, so each stop waits it out in full, and what the tests check (the
# whole tree gone, told to end first) holds whatever its length
QUICK_GRACE_SECONDS = 0.2


@pytest.fixture
def quick_grace(monkeypatch: pytest.MonkeyPatch) -> None:
    """Programs started from now on are killed ``QUICK_GRACE_SECONDS`` after they are
    told to stop (the gate takes the grace as it starts, so over ssh too)."""
    monkeypatch.setattr(store_module, "STOP_GRACE_SECONDS", QUICK_GRACE_SECONDS)


def pane_command(socket_name: str, pane_id: str) -> str:
    """What the pane runs in its foreground, as tmux tells it."""
    return tmux(
        socket_name, "display-message", "-p", "-t", pane_id, "#{pane_current_command}"
    ).rstrip("\n")


def tree_gone(tag: str, timeout: float = 4.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not alive_with(tag):
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("name", HOSTILE_NAMES)
async def test_a_start_directory_is_taken_literally(
    programs: tuple[Client, ServingState], programs_socket: str, tmp_path: Path, name: str
) -> None:
    client, _ = programs
    directory = tmp_path / name
    directory.mkdir()
    os.chdir(tmp_path)
    try:
        result = await call(
            client, "run_program", argv=[sys.executable, "-c", PRINT_CWD],
            startDirectory=str(directory),
        )  # fmt: skip
        assert result["output"] == repr(str(directory))
        # the same directory as the current path of a fromPaneId pane
        pane = tmux(
            programs_socket, "new-window", "-d", "-P", "-F", "#{pane_id}", "--",
            "sh", "-c", 'cd "$1" && exec sleep 30', "sh", str(directory),
        ).strip()  # fmt: skip
        # its shell has changed directory once it runs sleep (exec'd after the cd)
        await until(lambda: pane_command(programs_socket, pane) == "sleep")
        beside = await call(
            client, "run_program", argv=[sys.executable, "-c", PRINT_CWD],
            fromPaneId=pane,
        )  # fmt: skip
        assert beside["output"] == repr(str(directory))
        tmux(programs_socket, "kill-pane", "-t", pane)
    finally:
        os.chdir("/")
    assert not list(tmp_path.rglob("PWNED"))
    assert not Path("/PWNED").exists()


async def test_argv_and_input_arrive_exactly(programs: tuple[Client, ServingState]) -> None:
    client, _ = programs
    values = [
        ";",
        "\\;",
        "#{pane_id}",
        "#(touch PWNED)",
        "##",
        "-x",
        "a\nb",
        "'\"",
        "\x1f\t",
        "x" * 5000,
    ]
    script = "import json, sys; print(json.dumps(sys.argv[1:]) + json.dumps(sys.stdin.read()))"
    stdin = "".join(values)
    text = await call(
        client, "run_program", argv=[sys.executable, "-c", script, *values], input=stdin,
        startDirectory=tempfile.gettempdir(),
    )  # fmt: skip
    assert text["output"].replace("\n", "") == json.dumps(values) + json.dumps(stdin)


async def test_a_semicolon_is_an_argument(
    programs: tuple[Client, ServingState], programs_socket: str, tmp_path: Path
) -> None:
    client, _ = programs
    (tmp_path / "x").touch()
    found = await call(
        client, "run_program", argv=["find", ".", "-name", "x", "-exec", "echo", "{}", ";"],
        startDirectory=str(tmp_path),
    )  # fmt: skip
    assert (found["output"], found["exitStatus"]) == ("./x", 0)
    server_pid = tmux(programs_socket, "display-message", "-p", "#{pid}")
    done = await call(client, "run_program", argv=["true", ";", "kill-server"])
    assert (done["outcome"], done["exitStatus"]) == ("completed", 0)
    # the same server still runs (not one started again): kill-server was an argument
    assert tmux(programs_socket, "display-message", "-p", "#{pid}") == server_pid


async def test_a_hostile_temporary_directory_carries_the_copy(
    tmux_socket: str, anyio_backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hostile = tmp_path / "t #{pane_id} ; '\" #(touch PWNED) $x"
    hostile.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(hostile))
    context = ServingState(Settings(socket_name=tmux_socket))
    async with client_of(context, BINDINGS) as client:
        result = await call(client, "run_program", argv=["echo", "copied"])
        assert (result["output"], result["outputComplete"]) == ("copied", True)
        assert str(context.services.programs.root).startswith(str(hostile))
    await context.close()
    assert not list(tmp_path.rglob("PWNED"))


HARVESTER = r"""
import os, re, subprocess, sys
found = set(os.environ.values()) | set(sys.argv)
def take(data):
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    found.update(re.split(r"[\x00\s;=:,/]+", text)); found.add(text)
    if isinstance(data, bytes):  # raw bytes (a token table, say) as the gate spells tokens
        found.update(data[at : at + 8].hex() for at in range(0, len(data) - 7, 8))
ppid = os.getppid()
for name in ("cmdline", "environ"):
    try: take(open(f"/proc/{ppid}/{name}", "rb").read())
    except OSError: pass
for fd in os.listdir(f"/proc/{ppid}/fd"):
    try:
        target = os.readlink(f"/proc/{ppid}/fd/{fd}"); take(target)
        if "pipe" in target or target.startswith("/"):
            f = os.open(f"/proc/{ppid}/fd/{fd}", os.O_RDONLY | os.O_NONBLOCK)
            try: take(os.read(f, 65536))
            except OSError: pass
            os.close(f)
    except OSError: pass
for args in (["show-options", "-g"], ["show-options", "-s"], ["show-options", "-w"],
             ["show-options", "-p"], ["show-environment"], ["show-environment", "-g"],
             ["show-options", "-gw"], ["show-hooks", "-g"]):
    take(subprocess.run(["tmux", *args], capture_output=True).stdout)
# schemux's runtime directories only: a walk of all of a busy /tmp outlasted the test
tops = {os.environ.get("TMPDIR", "/tmp"), "/tmp"}
for top in [os.path.join(t, e) for t in tops for e in os.listdir(t) if e.startswith("schemux-")]:
    for root, dirs, files in os.walk(top):
        for name in files:
            path = os.path.join(root, name); take(path)
            try:
                f = os.open(path, os.O_RDONLY | os.O_NONBLOCK); take(os.read(f, 65536)); os.close(f)
            except OSError: pass
# every candidate as the token of a report of success (STATUS;FLAG;TOKEN); only printable
# ones: a token is hex, and raw bytes would only scramble the terminal
candidates = {x for x in found if x and len(x) < 200 and x.isprintable()}
candidates |= {w for x in candidates for w in re.findall(r"[0-9a-f]{8,}", x)}
for s in sorted(candidates):
    sys.stdout.write(f"\x1b]7777;schemux-end;0;x;{s}\x07")
sys.stdout.write("REAL OUTPUT\n"); sys.stdout.flush()
sys.exit(7)
"""


async def test_a_program_cannot_forge_its_end(programs: tuple[Client, ServingState]) -> None:
    client, _ = programs
    result = await call(client, "run_program", argv=[sys.executable, "-c", HARVESTER])
    assert (result["outcome"], result["exitStatus"]) == ("completed", 7)
    assert result["output"].endswith("REAL OUTPUT")
    assert result["outputComplete"] is True
    started = await call(client, "start_program", argv=[sys.executable, "-c", HARVESTER])
    pages: list[dict[str, Any]] = []
    while not pages or not pages[-1]["ended"]:
        cursor = pages[-1]["cursor"] if pages else 0
        pages.append(
            await call(
                client, "read_program", programId=started["programId"], cursor=cursor,
                timeoutMs=10_000,
            )
        )  # fmt: skip
    assert pages[-1]["exitStatus"] == 7
    assert "".join(page["text"] for page in pages).endswith("REAL OUTPUT\n")


TAMPERER = r"""
import os, stat, sys, time
held = []
for top in sys.argv[1:]:
    for root, dirs, files in os.walk(top):
        for name in files:
            path = os.path.join(root, name)
            try:
                mode = os.stat(path).st_mode
                if stat.S_ISFIFO(mode) and name == "copy":
                    fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
                    os.write(fd, b"FORGED-COPY\n\x1b]7777;schemux-end;"); held.append(fd)
                    print("held", path)
                elif stat.S_ISREG(mode) and name in ("stdin", "stderr", "text"):
                    print("read", path, repr(open(path, "rb").read(200)))
                    with open(path, "ab") as file: file.write(b"FORGED-TEXT\n")
            except OSError as error:
                print("refused", path, error.strerror)
print("ATTACK-DONE", flush=True)
time.sleep(30)
"""


async def read_until(
    client: Client, program_id: str, condition: Any, timeout: float = 20
) -> list[dict[str, Any]]:
    """read_program's pages from the start until ``condition(text so far)`` holds or
    the program ended."""
    pages: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout
    while not pages or not (pages[-1]["ended"] or condition("".join(p["text"] for p in pages))):
        assert time.monotonic() < deadline, "".join(page["text"] for page in pages)
        pages.append(
            await call(
                client, "read_program", programId=program_id,
                cursor=pages[-1]["cursor"] if pages else 0, timeoutMs=2_000,
            )
        )  # fmt: skip
    return pages


async def test_a_program_cannot_tamper_with_another(
    programs: tuple[Client, ServingState], tmp_path: Path
) -> None:
    """Another program of the same user read a program's stdin file, appended to its
    text file (its output came back as FORGED-) and held its copy FIFO (its end was never
    seen). Once a program runs, none of its files has a name left to open."""
    client, context = programs
    attacked = tmp_path / "attacked"  # the victim reads its input once the attack is over
    victim = await call(
        client, "start_program",
        argv=["sh", "-c", 'echo STARTED; until [ -e "$1" ]; do sleep 0.02; done; read line; '
              'echo "REAL-$line"', "sh", str(attacked)],
        input="SECRET-INPUT\n",
    )  # fmt: skip
    await read_until(client, victim["programId"], lambda text: "STARTED" in text)
    directory = context.services.programs.get(victim["programId"], ProgramCaller(None)).directory
    roots = {
        str(directory.parent),
        str(Path(context.services.programs.host.gate_directory(directory)).parent),
    }
    attacker = await call(
        client, "start_program", argv=[sys.executable, "-c", TAMPERER, *sorted(roots)]
    )
    said = "".join(
        page["text"]
        for page in await read_until(client, attacker["programId"], lambda t: "ATTACK-DONE" in t)
    )
    attacked.touch()
    pages = await read_until(client, victim["programId"], lambda text: False)
    await call(client, "stop_program", programId=attacker["programId"])
    assert "SECRET" not in said
    assert "".join(page["text"] for page in pages) == "STARTED\nREAL-SECRET-INPUT\n"
    assert (pages[-1]["exitStatus"], pages[-1]["outputComplete"]) == (0, True)


async def test_no_program_runs_while_its_copy_fifo_has_a_name(
    programs: tuple[Client, ServingState],
) -> None:
    """Programs started at once each list, as they start, the copy FIFOs that have a name:
    one that found its own could open it and write as itself, its end marker included,
    and hide what it printed after (as the tampering test's attacker once did, under six
    test workers). None finds its own: each runs only once its copy is open at both ends,
    and so unnamed."""
    client, context = programs
    first = await call(client, "start_program", argv=["true"])
    directory = context.services.programs.get(first["programId"], ProgramCaller(None)).directory
    roots = sorted(
        {
            str(directory.parent),
            str(Path(context.services.programs.host.gate_directory(directory)).parent),
        }
    )
    look = f"find {shlex.join(roots)} -name copy -type p"
    started: list[dict[str, Any]] = []

    async def start() -> None:
        started.append(await call(client, "start_program", argv=["sh", "-c", look]))

    async with anyio.create_task_group() as group:
        for _ in range(10):
            group.start_soon(start)
    for program in started:
        pages = await read_until(client, program["programId"], lambda text: False)
        found = "".join(page["text"] for page in pages).split()
        assert pages[-1]["exitStatus"] == 0
        assert not [path for path in found if f"/{program['programId']}/" in path]


async def test_the_running_limit_holds_under_concurrency(
    tmux_socket: str, anyio_backend: str
) -> None:
    context = ServingState(Settings(socket_name=tmux_socket, program_limits=ProgramLimits(16)))
    started: list[dict[str, Any]] = []
    refused: list[str] = []
    async with client_of(context, BINDINGS) as client:

        async def one() -> None:
            result = await client.call_tool("start_program", {"argv": ["sleep", "30"]})
            if result.is_error:
                refused.append(str(result.content[0].text))  # type: ignore[union-attr]
            else:
                started.append(result.structured_content or {})

        async with anyio.create_task_group() as group:
            for _ in range(50):
                group.start_soon(one)
    await context.close()
    assert len(started) == 16
    assert len(refused) == 34
    assert all("programs run already" in message for message in refused)


@pytest.fixture
async def limited_programs(
    request: pytest.FixtureRequest,
    make_context: Contexts,
    transport_ssh: SshTarget | None,
    tmux_socket: str,
) -> AsyncIterator[Client]:
    """schemux in this process with the default running limit (16), on this machine and
    over ssh."""
    ssh = transport_ssh
    socket_name = tmux_socket if ssh is None else request.getfixturevalue("remote_tmux_socket")
    async with client_of(make_context(socket_name=socket_name, ssh=ssh)) as client:
        yield client


async def test_a_burst_of_run_program_calls_all_run(limited_programs: Client) -> None:
    """At the running limit run_program waits for a slot within its timeout (it was
    refused: 16 of 40 answered)."""
    client = limited_programs
    answers: dict[int, Any] = {}

    async def one(index: int) -> None:
        answers[index] = await client.call_tool(
            "run_program", {"argv": ["echo", f"run-{index}"], "timeoutMs": 120_000}
        )

    async with anyio.create_task_group() as group:
        for index in range(60):
            group.start_soon(one, index)
    wrong = {
        index: answer.content
        for index, answer in answers.items()
        if answer.is_error
        or (answer.structured_content or {}).get("output") != f"run-{index}"
        or (answer.structured_content or {}).get("exitStatus") != 0
    }
    assert wrong == {}


async def test_run_program_waits_its_turn_within_its_timeout(
    limited_programs: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Behind 16 running programs: a run_program whose timeout passes first is refused
    saying so, at its timeout (not once a program ends: they run a minute); the waiting
    ones run first come, first served as a slot comes free, and start_program is
    refused at once."""
    client = limited_programs
    running_for = 60
    started = [
        await call(client, "start_program", argv=["sleep", str(running_for)]) for _ in range(16)
    ]
    queued: list[float | None] = []  # the deadline of each call that asked for a slot
    taken: list[float | None] = []  # ... and of each that got one, in the order they did
    take_slot = store_module.ProgramStore._take_slot

    async def recorded(store: store_module.ProgramStore, deadline: float | None) -> None:
        queued.append(deadline)  # and, before its first await, into the queue
        await take_slot(store, deadline)
        taken.append(deadline)

    monkeypatch.setattr(store_module.ProgramStore, "_take_slot", recorded)
    try:
        assert "16 programs run already" in await call_error(client, "start_program", argv=["true"])
        before = time.monotonic()
        error = await call_error(client, "run_program", argv=["true"], timeoutMs=500)
        assert "none ended within the call's timeout" in error
        assert 0.5 <= time.monotonic() - before < running_for / 2
        order: list[int] = []

        async def waiting(index: int) -> None:
            result = await call(client, "run_program", argv=["echo", str(index)], timeoutMs=60_000)
            order.append(int(result["output"]))

        async def queued_after(asked: int) -> None:
            await until(lambda: len(queued) > asked)

        async with anyio.create_task_group() as group:
            for index in range(3):
                asked = len(queued)
                group.start_soon(waiting, index)
                await queued_after(asked)  # queued in this order
            # one slot comes free: the waiting calls take it in turn, each as the one
            # before it ends (the task group waits for all three)
            await call(client, "stop_program", programId=started[0]["programId"])
        # first come, first served: the slots went in the order the calls queued (their
        # answers may come in another order: a call's own work after its program ends
        # can outlast the next program on a loaded machine)
        assert taken == queued[-3:]
        assert sorted(order) == [0, 1, 2]
    finally:
        for program in started[1:]:
            await call(client, "stop_program", programId=program["programId"])


@pytest.mark.usefixtures("quick_grace")
async def test_stop_and_expiry_end_the_whole_tree(programs: tuple[Client, ServingState]) -> None:
    client, _ = programs
    stopped = await call(client, "start_program", argv=resistant_tree("4"))
    await call(client, "read_program", programId=stopped["programId"], timeoutMs=5000)
    await anyio.to_thread.run_sync(wait_until, lambda: len(alive_with("4")) == 2)
    await call(client, "stop_program", programId=stopped["programId"])
    assert await anyio.to_thread.run_sync(tree_gone, "4")
    expiring = await call(client, "start_program", argv=resistant_tree("5"), lifetimeMs=1500)
    await call(client, "read_program", programId=expiring["programId"], timeoutMs=5000)
    await anyio.to_thread.run_sync(wait_until, lambda: len(alive_with("5")) == 2)
    assert await anyio.to_thread.run_sync(tree_gone, "5", 8.0)


@pytest.mark.usefixtures("quick_grace")
async def test_cancelling_run_program_ends_it_and_a_read_changes_nothing(
    programs: tuple[Client, ServingState], programs_socket: str, tmp_path: Path
) -> None:
    client, _ = programs

    def program_panes() -> set[str]:
        rows = tmux(programs_socket, "list-panes", "-a", "-F", f"#{{pane_id}} #{{{PANE_OPTION}}}")
        return {row.split()[0] for row in rows.splitlines() if len(row.split()) == 2}

    before = program_panes()
    async with anyio.create_task_group() as group:  # cancelled once its program runs
        group.start_soon(client.call_tool, "run_program", {"argv": resistant_tree("6")})
        await until(lambda: len(alive_with("6")) == 2)
        group.cancel_scope.cancel()
    assert await anyio.to_thread.run_sync(tree_gone, "6")
    await anyio.to_thread.run_sync(wait_until, lambda: program_panes() <= before)
    # the program prints nothing until the read waiting for its output is cancelled
    go = tmp_path / "go"
    script = 'until [ -e "$1" ]; do sleep 0.02; done; echo early; read line; echo got $line'
    argv = ["sh", "-c", script, "sh", str(go)]
    started = await call(client, "start_program", argv=argv, input="x\n")
    with anyio.move_on_after(0.3):
        await client.call_tool(
            "read_program", {"programId": started["programId"], "timeoutMs": 10_000}
        )
    go.touch()
    page = await call(client, "read_program", programId=started["programId"], timeoutMs=5000)
    while not page["ended"]:
        more = await call(
            client, "read_program", programId=started["programId"], cursor=page["cursor"],
            timeoutMs=5000,
        )  # fmt: skip
        more["text"] = page["text"] + more["text"]
        page = more
    assert page["text"] == "early\ngot x\n"
    assert page["outcome"] == "completed"


def _rpc(process: subprocess.Popen[bytes], message: dict[str, Any]) -> None:
    assert process.stdin is not None
    process.stdin.write(json.dumps(message).encode() + b"\n")
    process.stdin.flush()


def _read_reply(process: subprocess.Popen[bytes], request_id: int) -> dict[str, Any]:
    assert process.stdout is not None
    while True:
        line = process.stdout.readline()
        assert line, "the server closed its output"
        reply: dict[str, Any] = json.loads(line)
        if reply.get("id") == request_id:
            return reply


def serve_with_programs(tmux_socket: str, tag: str, *extra: str) -> subprocess.Popen[bytes]:
    """A real ``schemux serve`` over stdio running two resistant programs."""
    process = subprocess.Popen(
        [sys.executable, "-m", "schemux", "serve", "--socket-name", tmux_socket, *extra],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    _rpc(process, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"}}})  # fmt: skip
    _read_reply(process, 0)
    _rpc(process, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    for n in (1, 2):
        arguments = {"argv": resistant_tree(f"{tag}{n}")}
        _rpc(process, {"jsonrpc": "2.0", "id": n, "method": "tools/call",
                       "params": {"name": "start_program", "arguments": arguments}})  # fmt: skip
        assert not _read_reply(process, n)["result"].get("isError")
    wait_until(lambda: len(alive_with(tag)) == 4)
    return process


# how long an ended schemux may take to exit: an exit that waited for the trees (their
# sleeps last 50 minutes) misses it; the exit's own bounded waits (the calls' cleanup,
# every program's one-second grace at once, uvicorn's shutdown) fit in it many times
# over on a loaded machine (5 s was seen under load on two cores). That the programs
# end all at once, not one after another, is told by order, not by a clock:
# test_at_exit_every_program_is_told_to_end_before_any_is_killed
EXIT_SECONDS = 20


def assert_nothing_left(tmux_socket: str, tag: str, pid: int) -> None:
    # the trees sleep 50 minutes: gone at all, they were ended by the exit (its gates'
    # SIGKILL), however long a loaded machine took to reap them
    assert tree_gone(tag, timeout=10.0)
    owners = tmux(tmux_socket, "list-panes", "-a", "-F", f"#{{{PANE_OPTION}}}").split()
    assert not [owner for owner in owners if owner.startswith(f"{pid}-")]
    assert not list(Path(tempfile.gettempdir()).glob(f"schemux-{pid}-*"))


@pytest.mark.parametrize("how", ["eof", "SIGTERM", "SIGINT", "SIGHUP"])
def test_every_exit_path_cleans_up(tmux_socket: str, how: str) -> None:
    tag = {"eof": "71", "SIGTERM": "72", "SIGINT": "73", "SIGHUP": "74"}[how]
    process = serve_with_programs(tmux_socket, tag)
    if how == "eof":
        assert process.stdin is not None
        process.stdin.close()
    else:
        process.send_signal(getattr(signal, how))
    process.wait(timeout=EXIT_SECONDS)
    assert_nothing_left(tmux_socket, tag, process.pid)


async def test_at_exit_every_program_is_told_to_end_before_any_is_killed(
    programs: tuple[Client, ServingState], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The exit ends the programs all at once: each is told to end (its gate's SIGTERM
    to its tree) before the grace of any is over and its pane killed, so the exit takes
    one grace however many programs resist, not one a program. The order tells it,
    where a clock would also measure the machine's load."""
    client, context = programs
    events: list[str] = []
    tell = store_module.ProgramStore._signal
    kill = panes.kill_pane

    def told(store: store_module.ProgramStore, program: Program, signum: int) -> None:
        if signum == signal.SIGUSR2:  # the gate's stop: SIGTERM, then SIGKILL after grace
            events.append("told")
        tell(store, program, signum)

    async def killed(server: TmuxServer, pane_id: str) -> None:
        events.append("killed")
        await kill(server, pane_id)

    for n in (1, 2, 3):
        await call(client, "start_program", argv=resistant_tree(f"3{n}"))
    await anyio.to_thread.run_sync(wait_until, lambda: len(alive_with("3")) == 6)
    monkeypatch.setattr(store_module.ProgramStore, "_signal", told)
    monkeypatch.setattr(store_module, "kill_pane", killed)
    await context.services.programs.close()
    assert events.count("told") == 3, events
    assert events[:3] == ["told"] * 3, events  # not told, killed, told, killed, ...
    assert "killed" in events, events
    assert await anyio.to_thread.run_sync(tree_gone, "3")


@pytest.mark.parametrize("how", ["SIGTERM", "SIGINT", "SIGHUP"])
async def test_http_exit_cleans_up(tmux_socket: str, anyio_backend: str, how: str) -> None:
    tag = {"SIGTERM": "81", "SIGINT": "82", "SIGHUP": "83"}[how]
    port = 20000 + os.getpid() % 20000 + int(tag)
    process = serve_http(tmux_socket, port)
    try:
        with anyio.fail_after(20):
            while True:
                try:
                    async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                        for n in (1, 2):
                            await call(client, "start_program", argv=resistant_tree(f"{tag}{n}"))
                    break
                except Exception:
                    if process.poll() is not None:
                        raise
                    await anyio.sleep(0.2)
        await anyio.to_thread.run_sync(wait_until, lambda: len(alive_with(tag)) == 4)
        process.send_signal(getattr(signal, how))
        # about 1.5 s quiet (uvicorn's shutdown, the resisting trees' 1-s grace, then
        # SIGKILL), 6 s under six test workers
        process.wait(timeout=EXIT_SECONDS)
        assert_nothing_left(tmux_socket, tag, process.pid)
    finally:
        if process.poll() is None:
            process.kill()


async def test_after_kill_9_the_next_schemux_reaps(tmux_socket: str, anyio_backend: str) -> None:
    process = serve_with_programs(tmux_socket, "91")
    process.kill()
    process.wait()
    assert len(alive_with("91")) == 4  # left behind, for now
    assert list(Path(tempfile.gettempdir()).glob(f"schemux-{process.pid}-*"))
    context = ServingState(Settings(socket_name=tmux_socket))
    await context.services.abandoned.settled(context.services.tmux())
    await context.close()
    assert_nothing_left(tmux_socket, "91", process.pid)


async def test_a_failed_copy_ends_the_program_as_gone(
    programs: tuple[Client, ServingState], monkeypatch: pytest.MonkeyPatch
) -> None:
    client, _ = programs

    class Broken(TextFilter):
        def feed(self, data: bytes) -> str:
            raise RuntimeError("a copy that fails")

    monkeypatch.setattr(output_module, "TextFilter", Broken)
    started = await call(
        client, "start_program", argv=["sh", "-c", f"echo x; exec sleep {sleep_argument('95')}"]
    )
    page = await call(client, "read_program", programId=started["programId"], timeoutMs=5000)
    assert (page["outcome"], page["ended"], page["lostEnd"]) == ("gone", True, True)
    assert await anyio.to_thread.run_sync(tree_gone, "95")


async def test_a_failed_gate_watch_ends_the_program_as_gone(
    programs: tuple[Client, ServingState], monkeypatch: pytest.MonkeyPatch
) -> None:
    client, context = programs

    async def broken(pidfd: int) -> None:
        await asyncio.sleep(0.5)  # once the program runs (a failed start is an error)
        raise RuntimeError("a watch that fails")

    monkeypatch.setattr(
        context.services.programs.host, "exited", broken
    )  # this machine's, or ssh's
    started = await call(
        client, "start_program", argv=["sh", "-c", f"echo x; exec sleep {sleep_argument('96')}"]
    )
    page: dict[str, Any] = {"cursor": 0, "ended": False}
    with anyio.fail_after(10):
        while not page["ended"]:
            page = await call(
                client, "read_program", programId=started["programId"], cursor=page["cursor"],
                timeoutMs=5000,
            )  # fmt: skip
    assert (page["outcome"], page["lostEnd"], page["outputComplete"]) == ("gone", True, False)
    assert await anyio.to_thread.run_sync(tree_gone, "96")


def program_tasks(program_id: str) -> list[str]:
    return sorted(
        task.get_name() for task in asyncio.all_tasks() if task.get_name().startswith(program_id)
    )


async def test_no_task_outlives_its_program(programs: tuple[Client, ServingState]) -> None:
    client, _ = programs
    started = await call(client, "start_program", argv=["sleep", sleep_argument("94")])
    program_id = started["programId"]
    assert program_tasks(program_id) == [
        f"{program_id} {name}" for name in ("copy", "gate", "lifetime")
    ]
    await call(client, "stop_program", programId=program_id)
    assert program_tasks(program_id) == []


async def test_a_start_cancelled_while_its_copy_opens_leaves_no_descriptor(
    tmux_socket: str, anyio_backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cancelled while a thread waits to open the copy's FIFO (pipe-pane never comes),
    the start closes everything it opened, also what that thread gets after the cancel."""
    context = ServingState(Settings(socket_name=tmux_socket))
    server = context.services.tmux()
    await server.run("display-message", "-p", "x")  # the connection, before counting
    before = set(os.listdir("/proc/self/fd"))
    monkeypatch.setattr(store_module, "start_copy", lambda *arguments: anyio.sleep_forever())
    spec = ProgramSpec(["sleep", sleep_argument("93")], "/", {})
    for _ in range(2):
        with anyio.move_on_after(0.3) as scope:
            await context.services.programs.start(server, spec, ProgramCaller(None))
        assert scope.cancelled_caught
    await context.close()
    await anyio.to_thread.run_sync(wait_until, lambda: set(os.listdir("/proc/self/fd")) <= before)
    assert await anyio.to_thread.run_sync(tree_gone, "93")


async def test_inherited_variables_arrive_exactly(
    programs: tuple[Client, ServingState], programs_socket: str
) -> None:
    client, _ = programs
    pane = new_pane(programs_socket)
    value = "#{pane_id} #(touch PWNED) ## ; \\; -x '\" $HOME"
    tmux(
        programs_socket,
        "send-keys",
        "-l",
        "-t",
        pane.pane_id,
        f"export HOSTILE={shlex.quote(value)}",
    )
    tmux(programs_socket, "send-keys", "-t", pane.pane_id, "Enter")
    await anyio.sleep(0.3)
    result = await call(
        client, "run_program", argv=["sh", "-c", 'printf %s "$HOSTILE"'], fromPaneId=pane.pane_id,
        inheritShell=["HOSTILE"],
    )  # fmt: skip
    assert result["output"] == value


async def test_bad_sizes_are_refused(programs: tuple[Client, ServingState]) -> None:
    client, _ = programs
    for width in (0, -1, 100_000):
        message = await call_error(client, "start_program", argv=["true"], width=width)
        assert "width" in message


def test_only_the_runtime_directories_of_dead_owners_are_reaped(tmp_path: Path) -> None:
    pid, ticks = this_process().identity.split("-")  # a runtime directory's: PID-TICKS
    dead = tmp_path / f"schemux-{pid}-{int(ticks) + 1}-abc"  # our pid, started another time
    alive = tmp_path / f"schemux-{this_process().identity}-def"
    unknown = tmp_path / "schemux-ghi"  # not an owner's name: never touched
    for directory in (dead, alive, unknown):
        directory.mkdir()
        (directory / "text").write_text("output")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep").write_text("not schemux's")
    (tmp_path / f"schemux-{pid}-{int(ticks) + 2}-link").symlink_to(elsewhere)
    assert reap_runtime_directories(tmp_path) == [dead]
    assert alive.exists()
    assert unknown.exists()
    assert (elsewhere / "keep").exists()  # a link is never followed


def test_owner_identities() -> None:
    assert owner_alive(own_identity())
    pid, ticks = this_process().identity.split("-")
    assert not owner_alive(f"{pid}-{int(ticks) + 1}")  # the same pid, started another time
    assert owner_alive("not an owner; #{pane_id}")  # what is not ours is never reaped


def test_only_a_genuine_marker_ends_the_copy() -> None:
    key, other = os.urandom(TABLE_BYTES), os.urandom(TABLE_BYTES)

    def marker(status: bytes, flag: bytes, token: bytes) -> bytes:
        return MARKER_PREFIX + status + b";" + flag + b";" + token + b"\x07"

    genuine_token = report_token(key, 3, "x")
    genuine = marker(b"3", b"x", genuine_token)
    assert scan(b"out\n" + genuine, key) == (b"out\n", b"", (3, "x"))
    assert scan(marker(b"127", b"n", report_token(key, 127, "n")), key) == (b"", b"", (127, "n"))
    # another table's token, the genuine token of another report, or none: plain output
    for fake in (
        marker(b"0", b"x", report_token(other, 0, "x")),
        marker(b"0", b"x", report_token(key, 3, "x")),
        marker(b"3", b"n", report_token(key, 3, "x")),
        marker(b"3", b"x", bytes([genuine_token[0] ^ 1]) + genuine_token[1:]),
        marker(b"256", b"x", b""),
        marker(b"0", b"x", b"0" * 16),
    ):
        assert scan(b"a" + fake + b"b", key) == (b"a" + fake + b"b", b"", None)
        assert scan(fake + genuine, key) == (fake, b"", (3, "x"))
    # a marker cut across two reads is held back, then found
    data, held, report = scan(b"out" + genuine[:10], key)
    assert (data, held, report) == (b"out", genuine[:10], None)
    assert scan(held + genuine[10:], key) == (b"", b"", (3, "x"))
    # an unterminated look-alike is not held for ever
    long = MARKER_PREFIX + b"9" * 200
    assert scan(long, key)[0] == long
    # nor does one hide the genuine marker that follows it (the program's last words)
    for opened in (MARKER_PREFIX, MARKER_PREFIX + b"0;x;", MARKER_PREFIX + b"0;x;" + b"0" * 8):
        assert scan(b"out" + opened + genuine, key) == (b"out" + opened, b"", (3, "x"))
        data, held, report = scan(b"out" + opened + genuine[:7], key)
        assert report is None
        assert scan(held + genuine[7:], key)[2] == (3, "x")


THIEF = r"""
import os, re, sys, time
gate = open(f"/proc/{os.getppid()}/cmdline", "rb").read().split(b"\0")
# the gate's first argument that is a directory with the copy's FIFO in it (none: the
# FIFO's name goes once the pane's copy has opened it)
directory = next((a.decode() for a in gate if os.path.exists(os.path.join(a, b"copy"))), None)
if directory is not None and os.fork() == 0:  # a descendant that reads the copy's FIFO
    copy = os.open(os.path.join(directory, "copy"), os.O_RDONLY)
    out = os.open(os.path.join(directory, "copy"), os.O_WRONLY)
    seen = b""
    while True:  # a blocking read, racing schemux's for every write
        seen += os.read(copy, 65536)
        found = re.search(rb"(\x1b\]7777;schemux-end;)(\d+)(;[xn];[0-9a-f]+\x07)", seen)
        if found:  # the genuine marker: pass on a copy that says exit 0
            os.write(out, found[1] + b"0" + found[3])
            break
    os._exit(0)
time.sleep(0.5)
print("REAL OUTPUT")
sys.exit(7)
"""


async def test_a_descendant_that_steals_the_marker_cannot_change_the_status(
    programs: tuple[Client, ServingState],
) -> None:
    client, _ = programs
    result = await call(client, "run_program", argv=[sys.executable, "-c", THIEF], timeoutMs=1500)
    if result["outcome"] == "completed":  # schemux read the genuine marker first
        assert result["exitStatus"] == 7
        assert result["output"] == "REAL OUTPUT"  # the screen's, whatever the thief read
    else:  # the thief took it (and maybe output): the end is lost, and said so
        assert result["outcome"] == "timed_out"
        assert result["outputComplete"] is False


async def test_the_gate_is_the_one_chosen(
    programs: tuple[Client, ServingState], program_gate: str
) -> None:
    client, _ = programs
    result = await call(client, "run_program", argv=["sh", "-c", "cat /proc/$PPID/comm"])
    assert result["output"].startswith(program_gate)  # perl, or python3.N


async def test_a_copy_open_not_begun_when_unblocked_leaves_no_thread_waiting(
    tmp_path: Path,
) -> None:
    """With every opener thread busy, a program's copy open waits its turn; the program
    forgotten meanwhile (its start failed, say: tmux did not answer in time) unblocks it
    before its thread has begun the open: that open must still return, and closing the
    host leaves none waiting, so no thread is kept from exiting."""
    host = LocalPrograms(1, PYTHON_GATE)
    busy, queued = tmp_path / "busy", tmp_path / "queued"
    os.mkfifo(busy)
    os.mkfifo(queued)

    async def open_copy(path: Path) -> None:
        async with host.open_copy(path):
            pass

    first = asyncio.create_task(open_copy(busy))
    second = asyncio.create_task(open_copy(queued))
    await anyio.wait_all_tasks_blocked()
    second.cancel()
    host.unblock_copy(queued)  # its thread has not begun: the only one waits on ``busy``
    first.cancel()
    host.unblock_copy(busy)
    await asyncio.gather(first, second, return_exceptions=True)
    await host.close()
    openers = [t for t in threading.enumerate() if t.name.startswith("schemux-copy")]
    for thread in openers:
        thread.join(timeout=5)
    assert not [thread for thread in openers if thread.is_alive()]
