"""Programs over ssh (``schemux.hosts.programs.remote``): zero loss, hostile values, the remote
process tree's end, the remote runtime directory's removal, and a dropped connection.

The remote host is this machine (the test sshd on loopback), so a test sees the remote
files and processes directly.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import tempfile
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
from schemux.hosts.programs.remote import RemotePrograms
from schemux.programs.store import GATE_GRACE_SECONDS
from schemux.serving.state import ServingState
from schemux.shell.abandoned import reap_runtime_directories
from tests.conftest import stdio_parameters
from tests.contexts import Contexts, client_of
from tests.support import call, call_error, new_pane, tmux, until, wait_for_shell, wait_until
from tests.test_ssh import HOSTILE_WORDS, master_pid

pytestmark = pytest.mark.anyio


@pytest.fixture
async def remote(
    anyio_backend: str, remote_tmux_socket: str, ssh_target: SshTarget
) -> AsyncIterator[tuple[Client, ServingState]]:
    limits = ProgramLimits(max_running=100, retained_ended=100)
    context = ServingState(
        Settings(socket_name=remote_tmux_socket, program_limits=limits, ssh=ssh_target)
    )
    try:
        async with client_of(context, BINDINGS) as client:
            yield client, context
    finally:
        await context.close()


def remote_root(context: ServingState) -> str:
    host = context.services.programs.host
    assert isinstance(host, RemotePrograms)
    root = host.remote_root
    assert root is not None
    return root


async def read_all(client: Client, program_id: str) -> tuple[bytes, dict[str, Any]]:
    text, cursor = b"", 0
    while True:
        page = await call(
            client, "read_program", programId=program_id, cursor=cursor, timeoutMs=20_000
        )
        text += page["text"].encode()
        cursor = page["cursor"]
        if page["ended"]:
            return text, page


async def test_large_output_arrives_whole(remote: tuple[Client, ServingState]) -> None:
    client, _ = remote
    script = "seq 1 300000; printf 'tail without newline'"
    started = await call(client, "start_program", argv=["sh", "-c", script])
    text, end = await read_all(client, started["programId"])
    expected = "".join(f"{n}\n" for n in range(1, 300001)) + "tail without newline"
    assert text.decode() == expected
    assert (end["outcome"], end["exitStatus"], end["outputComplete"]) == ("completed", 0, True)


async def test_binary_bytes_and_utf8_arrive_as_locally(remote: tuple[Client, ServingState]) -> None:
    client, _ = remote
    # every byte value but the terminal's own controls, and a multibyte character cut
    # across writes
    script = "printf 'caf\\303'; sleep 0.1; printf '\\251 \\000\\001 end\\n'; exit 7"
    started = await call(client, "start_program", argv=["sh", "-c", script])
    text, end = await read_all(client, started["programId"])
    assert text.decode().startswith("café ")
    assert text.decode().endswith(" end\n")
    assert end["exitStatus"] == 7


async def test_fifty_quick_programs_at_once(remote: tuple[Client, ServingState]) -> None:
    client, _ = remote
    results: dict[int, dict[str, Any]] = {}

    async def one(number: int) -> None:
        results[number] = await call(
            client, "run_program", argv=["sh", "-c", f"seq 1 {number * 20}; exit {number % 7}"],
            timeoutMs=60_000,
        )  # fmt: skip

    async with anyio.create_task_group() as group:
        for number in range(1, 51):
            group.start_soon(one, number)
    for number, result in results.items():
        assert result["exitStatus"] == number % 7
        assert result["output"] == "\n".join(str(n) for n in range(1, number * 20 + 1))
        assert result["outputComplete"] is True
    assert len(results) == 50


# a lone surrogate is not text: the tools' arguments refuse it before anything runs
TEXT_WORDS = [word for word in HOSTILE_WORDS if "\udcff" not in word]


@pytest.fixture(scope="module")
async def table_remote(
    anyio_backend: str, remote_tmux_socket: str, ssh_target: SshTarget
) -> AsyncIterator[Client]:
    """One remote context for a table of values, each of which runs one program with
    run_program: the program ends with its call, so nothing of one value's is left for
    the next, and the ssh master and the remote helper start once, not once a value."""
    async with Contexts() as contexts:
        context = contexts(socket_name=remote_tmux_socket, ssh=ssh_target)
        async with client_of(context) as client:
            yield client


@pytest.mark.parametrize("word", TEXT_WORDS, ids=[repr(w)[:20] for w in TEXT_WORDS])
async def test_hostile_argv_and_directory_reach_the_program_verbatim(
    table_remote: Client, tmp_path: Path, word: str
) -> None:
    client = table_remote
    mark = tmp_path / "ran"
    value = word.replace("{mark}", str(mark))
    if "\x1f" in value or "\n" in value or "\t" in value:
        directory_name = "plain"  # a terminal shows these otherwise: the argv test is below
    else:
        directory_name = value.replace("/", "_") or "empty"
    directory = tmp_path / ("d" + directory_name)
    directory.mkdir()
    script = 'printf "%s" "$1" | od -An -v -tx1; pwd | od -An -v -tx1'
    result = await call(
        client, "run_program", argv=["sh", "-c", script, "sh", value],
        startDirectory=str(directory),
    )  # fmt: skip
    digits = result["output"].split()
    expected = os.fsencode(value).hex() + os.fsencode(str(directory) + "\n").hex()
    assert "".join(digits) == expected
    assert result["exitStatus"] == 0
    assert not mark.exists()


def local_pid(remote_pid: int, argv: list[bytes]) -> int:
    """The pid on this machine of the process the remote host (the sshd's pid namespace)
    calls ``remote_pid``, with each word of ``argv`` (once it has exec'd): its NSpid's last field
    is the remote pid."""
    deadline = time.monotonic() + 5
    while (found := find_local_pid(remote_pid, argv)) is None:
        assert time.monotonic() < deadline, f"no {argv!r} is pid {remote_pid} on the remote host"
        time.sleep(0.01)
    return found


def find_local_pid(remote_pid: int, argv: list[bytes]) -> int | None:
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            words = (entry / "cmdline").read_bytes().split(b"\0")[:-1]
            status = (entry / "status").read_text()
        except OSError:
            continue
        spaces = [line.split()[1:] for line in status.splitlines() if line.startswith("NSpid:")]
        if (
            all(word in words for word in argv)
            and spaces
            and len(spaces[0]) > 1
            and int(spaces[0][-1]) == remote_pid
        ):
            return int(entry.name)
    return None


async def test_stop_and_expiry_end_the_remote_process_tree(
    remote: tuple[Client, ServingState],
) -> None:
    client, _ = remote
    for how in ("stop", "expire"):
        lasting = f"300.{secrets.randbelow(10**6)}"  # names the child among the machine's
        script = f"setsid sleep {lasting} & echo $!; sleep 300"
        lifetime = {"lifetimeMs": 800} if how == "expire" else {}
        started = await call(client, "start_program", argv=["sh", "-c", script], **lifetime)
        page = await call(client, "read_program", programId=started["programId"], maxLines=1)
        child = local_pid(int(page["text"]), [b"sleep", lasting.encode()])
        if how == "stop":
            stopped = await call(client, "stop_program", programId=started["programId"])
            assert stopped["outcome"] == "stopped"
        else:
            _, end = await read_all(client, started["programId"])
            assert end["outcome"] == "expired"
        process = Path(f"/proc/{child}")
        wait_until(lambda process=process: not process.exists(), timeout=5)


async def test_the_remote_runtime_directory_is_private_and_goes_at_close(
    remote_tmux_socket: str, anyio_backend: str, ssh_target: SshTarget
) -> None:
    context = ServingState(Settings(socket_name=remote_tmux_socket, ssh=ssh_target))
    async with client_of(context, BINDINGS) as client:
        started = await call(client, "start_program", argv=["sleep", "30"], input="in")
        root = Path(remote_root(context))
        assert (root.stat().st_mode & 0o777) == 0o700
        directory = root / started["programId"]
        assert (directory.stat().st_mode & 0o777) == 0o700
        # its gate's child opened its stdin file, and removed its name
        await anyio.to_thread.run_sync(wait_until, lambda: not (directory / "stdin").exists())
    await context.close()
    assert not root.exists()


def schemux_processes(socket_name: str) -> list[int]:
    """The pids of the schemux over ssh this test started (the suite's stdio schemux on
    the same tmux server has no --ssh)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            words = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        wanted = (b"schemux", b"serve", b"--ssh", socket_name.encode())
        if all(word in words for word in wanted):
            found.append(int(entry.name))
    return found


async def test_kill_9_of_schemux_removes_the_remote_directory(
    remote_tmux_socket: str, anyio_backend: str, ssh_target: SshTarget
) -> None:
    assert ssh_target.config is not None
    parameters = stdio_parameters(
        "--socket-name", remote_tmux_socket,
        "--ssh", ssh_target.destination, "--ssh-config", ssh_target.config,
    )  # fmt: skip
    temporary = Path(tempfile.gettempdir())  # the remote side's TMPDIR too (ssh_server)
    before = set(temporary.glob("schemux-remote-*"))
    made: set[Path] = set()
    killed: list[int] = []

    async def use_then_kill() -> None:
        async with Client(parameters) as client:
            await call(client, "start_program", argv=["sleep", "300"])
            made.update(set(temporary.glob("schemux-remote-*")) - before)
            pids = schemux_processes(remote_tmux_socket)
            assert len(pids) == 1
            os.kill(pids[0], signal.SIGKILL)
            killed.append(pids[0])
            # nothing more is sent: a request written to the dead server's pipe failed
            # (BrokenPipeError) in the SDK's writer after this test, failing the next one
            await until(lambda: schemux_processes(remote_tmux_socket) == [])

    try:
        await use_then_kill()
    except AssertionError:
        raise
    except Exception:  # the client may see its server gone as it closes
        pass
    assert len(made) == 1
    assert killed  # the directory goes with the kill, not with a clean exit
    (root,) = made
    wait_until(lambda: not root.exists(), timeout=5)
    # its directories on this machine (the ssh master's socket, its programs' files) are
    # for the next schemux to reap, as each does when it starts on a server; none may
    # start in this run after this test
    here = set(temporary.glob(f"schemux-{killed[0]}-*"))
    assert here
    assert here <= set(reap_runtime_directories())


@pytest.mark.parametrize("socket_lingers", [False, True], ids=["socket-gone", "socket-lingers"])
async def test_a_dropped_connection_fails_run_program_at_once(
    remote: tuple[Client, ServingState], socket_lingers: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A killed master ends its sessions a moment before its socket stops answering (seen
    in CI): the helper's ssh status tells it then, so "socket-lingers" keeps the probe
    answering through the whole drop. The call fails within about a second (2.4 s seen
    under six test workers), not at its own 25-s timeout."""
    client, context = remote
    await call(client, "run_program", argv=["true"])
    master = master_pid(context)
    if socket_lingers:
        monkeypatch.setattr(context.services.host, "_master_answers", lambda: True)
    failed_at: list[float] = []
    message: list[str] = []

    async def long_call() -> None:
        message.append(
            await call_error(client, "run_program", argv=["sleep", "30"], timeoutMs=25_000)
        )
        failed_at.append(time.monotonic())

    async with anyio.create_task_group() as group:
        group.start_soon(long_call)
        await anyio.sleep(1.0)
        os.kill(master, signal.SIGKILL)
        killed_at = time.monotonic()
    assert failed_at[0] - killed_at < 10
    assert "ssh connection" in message[0], message[0]
    monkeypatch.undo()
    # the next call reconnects by itself
    again = await call(client, "run_program", argv=["echo", "back"])
    assert (again["output"], again["exitStatus"]) == ("back", 0)


HOSTILE_VALUES = [
    "$(touch {mark})",
    "a;b",
    'it\'s "q"',
    "`touch {mark}`",
    "-n",
    "#{pane_id}",
    "x\ny",
]


async def test_hostile_variables_of_a_shell_reach_a_remote_program_verbatim(
    remote: tuple[Client, ServingState], remote_tmux_socket: str, tmp_path: Path
) -> None:
    """inheritShell's values, read from a shell's environment, become the remote
    program's environment byte for byte: no remote shell reads them."""
    client, _ = remote
    mark = tmp_path / "ran"
    pane = new_pane(remote_tmux_socket)
    wait_for_shell(pane)
    names = []
    for index, template in enumerate(HOSTILE_VALUES):
        value_file = tmp_path / f"value{index}"
        value_file.write_text(template.replace("{mark}", str(mark)))
        names.append(f"SCHEMUX_HOSTILE_{index}")
        command = f'export SCHEMUX_HOSTILE_{index}="$(cat {value_file})"'
        tmux(remote_tmux_socket, "send-keys", "-t", pane.pane_id, command, "Enter")
    script = 'for name in "$@"; do printenv "$name" | od -An -v -tx1; echo; done'
    result = await call(
        client, "run_program", argv=["sh", "-c", script, "sh", *names],
        fromPaneId=pane.pane_id, inheritShell=names,
    )  # fmt: skip
    got = ["".join(line.split()) for line in result["output"].split("\n\n")]
    expected = [
        (template.replace("{mark}", str(mark)) + "\n").encode().hex() for template in HOSTILE_VALUES
    ]
    assert ["".join(g.split()) for g in got] == expected
    assert not mark.exists()


async def test_stop_reaches_a_program_that_ignores_term_only_through_its_gate(
    remote: tuple[Client, ServingState],
) -> None:
    """stop_program signals the gate through the helper (by its pidfd): the gate's SIGTERM
    is ignored, its SIGKILL after the grace ends the program, and the gate tells the end.
    A signal that missed the gate would leave only the pane's removal: no status, lost."""
    client, _ = remote
    script = "trap '' TERM HUP; echo started; while :; do sleep 0.1; done"
    started = await call(client, "start_program", argv=["sh", "-c", script])
    page = await call(client, "read_program", programId=started["programId"], maxLines=1)
    assert page["text"] == "started\n"
    reads: list[dict[str, Any]] = []

    async def reader() -> None:
        reads.append(
            await call(
                client, "read_program", programId=started["programId"], cursor=page["cursor"],
                timeoutMs=20_000,
            )
        )  # fmt: skip

    async with anyio.create_task_group() as group:
        group.start_soon(reader)
        await anyio.sleep(0.3)
        stopped = await call(client, "stop_program", programId=started["programId"])
    assert (stopped["outcome"], stopped["wasRunning"]) == ("stopped", True)
    assert (reads[0]["outcome"], reads[0]["signal"]) == ("stopped", "SIGKILL")
    assert reads[0]["lostEnd"] is False


async def test_the_watch_sees_the_gate_run_and_exit(
    remote: tuple[Client, ServingState], remote_tmux_socket: str
) -> None:
    """The helper watches the gate itself: a gate that runs on past the gate grace is not
    taken for gone, and a gate killed outright (no marker ever comes) ends its program as
    gone all the same."""
    client, context = remote
    lasting = f"300.{secrets.randbelow(10**6)}"
    started = await call(client, "start_program", argv=["sleep", lasting])
    gate_path = f"{remote_root(context)}/program_gate.pl".encode()
    pane_pid = tmux(remote_tmux_socket, "display", "-p", "-t", started["paneId"], "#{pane_pid}")
    gate = local_pid(int(pane_pid), [gate_path])
    program = local_pid(int(tmux_pid_of_child(gate)), [b"sleep", lasting.encode()])
    try:
        await anyio.sleep(GATE_GRACE_SECONDS + 0.5)
        page = await call(client, "read_program", programId=started["programId"], timeoutMs=0)
        assert page["outcome"] == "running"
        os.kill(gate, signal.SIGKILL)
        _, end = await read_all(client, started["programId"])
        assert (end["outcome"], end["lostEnd"]) == ("gone", True)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(program, signal.SIGKILL)


def tmux_pid_of_child(parent: int) -> int:
    """The remote pid (NSpid's last field) of the one child of ``parent`` (a local pid)."""
    deadline = time.monotonic() + 5
    while True:
        children = Path(f"/proc/{parent}/task/{parent}/children").read_text().split()
        if children:
            status = Path(f"/proc/{children[0]}/status").read_text()
            (line,) = [line for line in status.splitlines() if line.startswith("NSpid:")]
            return int(line.split()[-1])
        assert time.monotonic() < deadline, f"process {parent} started no child"
        time.sleep(0.01)


def gate_panes(socket_name: str) -> set[str]:
    """The panes of ``socket_name`` that run a program's gate."""
    listing = tmux(socket_name, "list-panes", "-a", "-F", "#{pane_id} #{pane_start_command}")
    return {line.split()[0] for line in listing.splitlines() if "program_gate" in line}


async def test_a_tmux_server_in_another_pid_namespace_is_a_clear_error(
    main_tmux_socket: str, anyio_backend: str, ssh_target: SshTarget
) -> None:
    """A tmux server on this machine reached over ssh (the sshd runs in its own pid
    namespace): the pane's pid names no process where the helper runs, so no program is
    started there, with an error that says why, and its pane goes."""
    gates_before = gate_panes(main_tmux_socket)
    context = ServingState(Settings(socket_name=main_tmux_socket, ssh=ssh_target))
    try:
        async with client_of(context, BINDINGS) as client:
            message = await call_error(client, "start_program", argv=["sh", "-c", "echo ran"])
    finally:
        await context.close()
    assert "pid namespace" in message, message
    assert "the tmux server started on that host" in message, message
    assert gate_panes(main_tmux_socket) == gates_before  # (other tests' kept panes stay)
