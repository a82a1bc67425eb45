"""Helpers shared by the tests: private tmux servers, fresh shell panes, placeholders."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import anyio
import pytest
from libtmux.pytest_plugin import _reap_test_server as reap_test_server
from libtmux.server import Server
from mcp import Client
from pydantic import BaseModel

from schemux.config import ENV_PROGRAM_GATE, GateSetting
from schemux.domain.call import Call
from schemux.errors import ServerUnavailable
from schemux.generated import models as generated_models
from schemux.hosts import Host
from schemux.hosts import local as local_host
from schemux.hosts.programs import gate as program_gates
from schemux.serving.binding import ToolBinding
from schemux.tmux.references import IDENTITY_FORMAT, ServerIdentity
from schemux.tmux.server import TmuxServer
from tests.leftovers import RUN_TAG
from tests.process_table import processes, running_with

SHELL_ENVIRONMENT = {
    "HISTCONTROL": "ignorespace",
    "HISTFILE": "/dev/null",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
}
SHELL = "bash --norc --noprofile"
Output = TypeVar("Output", bound=BaseModel)
Result = TypeVar("Result")


def tmux(socket_name: str, *args: str, check: bool = True) -> str:
    done = subprocess.run(
        ["tmux", "-L", socket_name, *args], capture_output=True, text=True, check=False
    )
    if check and done.returncode != 0:
        raise RuntimeError(f"tmux {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout


def tagged_socket_name(label: str) -> str:
    """A socket name of this run's own: the run's tag lets its end check find what is
    left (tests.leftovers)."""
    return f"schemux-test-{label}-{RUN_TAG}-{uuid.uuid4().hex[:6]}"


def remove_server(socket_name: str) -> None:
    """Reap the server as libtmux's pytest plugin reaps its test servers (kill-server if
    one runs, then the socket file, which tmux leaves behind). A server that did not
    take kill-server (seen once at the end of a full run), and any client of it still
    running, is killed by its process: with the socket file gone nothing could reach it
    any more."""
    reap_test_server(socket_name)
    deadline = time.monotonic() + 2.0
    while (left := processes_naming(socket_name)) and time.monotonic() < deadline:
        time.sleep(0.02)
    for pid in left:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def processes_naming(socket_name: str) -> list[int]:
    """tmux processes (servers and clients) whose command line names ``socket_name``."""
    return [
        process.pid
        for process in processes()
        if process.argv
        and process.argv[0].endswith(b"tmux")
        and socket_name.encode() in process.argv
    ]


@contextmanager
def private_tmux_server(label: str) -> Iterator[str]:
    """A tmux server on a socket of its own (never the user's), with a session
    ``keepalive``, made by libtmux and reaped afterwards (``remove_server``). Its socket
    name carries the run's tag, so the end-of-run check sees it if it were left."""
    server = Server(socket_name=tagged_socket_name(label), config_file="/dev/null")
    assert server.socket_name is not None
    try:
        server.new_session(session_name="keepalive")
        yield server.socket_name
    finally:
        remove_server(server.socket_name)


@dataclass(frozen=True)
class Pane:
    socket_name: str
    pane_id: str
    window_id: str
    session_id: str
    session_name: str

    def placeholders(self) -> dict[str, str]:
        return {
            "socket_name": self.socket_name,
            "pane_id": self.pane_id,
            "window_id": self.window_id,
            "session_id": self.session_id,
            "session_name": self.session_name,
            "generation": self.generation(),
        }

    def generation(self) -> str:
        """The generation of this pane's reference, from its live server."""
        return server_identity(self.socket_name).generation(self.pane_id)

    def reference(self) -> dict[str, str]:
        return {"kind": "pane", "id": self.pane_id, "generation": self.generation()}


async def control_client_pid(server: TmuxServer) -> int:
    """The pid of the control client that runs ``server``'s commands, as tmux tells it
    to the client asking (starting that client if none runs)."""
    return int((await server.run("display-message", "-p", "#{client_pid}"))[0])


async def spares_started(server: TmuxServer) -> None:
    """A wait on a channel signalled before it: an engine's first wait starts its spare
    control clients, and this returns once they have started and one served it."""
    await server.run("wait-for", "-S", "--", "spares-wanted")
    await server.wait("spares-wanted")


def server_identity(socket_name: str) -> ServerIdentity:
    return ServerIdentity.parse(
        tmux(socket_name, "display-message", "-p", IDENTITY_FORMAT).removesuffix("\n")
    )


def new_pane(
    socket_name: str,
    *,
    command: str = SHELL,
    remain_on_exit: bool = False,
    width: int = 100,
    height: int = 30,
) -> Pane:
    """A new detached session whose one pane runs ``command`` (an idle bash by default),
    in the run's temporary directory: a command a test sends (a fuzzed one with a ``>``,
    say) writes there, not into the working tree."""
    name = f"t{uuid.uuid4().hex[:8]}"
    args = ["new-session", "-d", "-s", name, "-x", str(width), "-y", str(height)]
    args += ["-c", tempfile.gettempdir()]
    for key, value in SHELL_ENVIRONMENT.items():
        args += ["-e", f"{key}={value}"]
    args += ["-P", "-F", "#{pane_id} #{window_id} #{session_id}", command]
    if remain_on_exit:  # in the same tmux call, so it holds before the program can exit
        args += [";", "set-option", "-p", "-t", f"={name}:", "remain-on-exit", "on"]
    pane_id, window_id, session_id = tmux(socket_name, *args).split()
    pane = Pane(socket_name, pane_id, window_id, session_id, name)
    if command == SHELL:
        wait_for_shell(pane)
    elif remain_on_exit:
        wait_until(lambda: pane_format(pane, "#{pane_dead}") == "1")
    return pane


def without_fish_man_page_scan(home: Path) -> None:
    """A home in which fish's first interactive start finds man-page completions made
    already: else it runs, in the background, a Python script over every man page (a
    second of CPU each time a test starts fish in a new home), which is fish's own and
    nothing schemux does or sees."""
    (home / ".local/share/fish/generated_completions").mkdir(parents=True, exist_ok=True)


def screen(pane: Pane, *, history: bool = False) -> str:
    """What ``pane`` shows (``capture-pane -p``); with ``history``, the history above it
    too, each wrapped line joined."""
    whole = ("-J", "-S", "-") if history else ()
    return tmux(pane.socket_name, "capture-pane", "-p", *whole, "-t", pane.pane_id)


def pane_format(pane: Pane, fmt: str) -> str:
    return tmux(pane.socket_name, "display-message", "-p", "-t", pane.pane_id, fmt).rstrip("\n")


def shell_holds_terminal(pane: Pane) -> bool:
    """Whether the pane's shell holds its terminal's foreground (is reading input), as
    the pane's tmux server sees it: its ``if-shell`` reads /proc where the server runs, so
    this holds for a server whose pids are another namespace's (``tests.ssh_server``)."""
    test = 'set -- $(sed "s/.*) //" /proc/#{pane_pid}/stat) && [ "$3" = "$6" ]'
    answer = tmux(
        pane.socket_name, "if-shell", "-t", pane.pane_id, test, "display -p 1", "display -p 0"
    )
    return answer.strip() == "1"


def poll_pauses() -> Iterator[float]:
    """The pauses between two looks at state nothing announces: 10 ms, then half as long
    again each time, up to 100 ms. A condition met soon is seen soon, and a long wait
    looks less often: a look at tmux is a tmux client, 2.5 ms of CPU, and at every 10 ms
    the suite's waits took a tenth of a core while a test ran."""
    pause = 0.01
    while True:
        yield pause
        pause = min(pause * 1.5, 0.1)


def wait_until(condition: Any, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    for pause in poll_pauses():
        if condition():
            return
        if time.monotonic() > deadline:
            raise TimeoutError("condition not reached")
        time.sleep(pause)


async def closed_mid_connect(host: Host, marker: str) -> tuple[float, str]:
    """``host.close()`` while its connect runs a process that does not answer, whose
    command line holds ``marker``: how long the close took, and what the connect said.
    Nothing with ``marker`` is left running."""
    said: list[str] = []

    async def connect() -> None:
        try:
            await host.connect()
        except ServerUnavailable as error:
            said.append(str(error))

    async with anyio.create_task_group() as group:
        group.start_soon(connect)
        await until(lambda: running_with(marker))
        started = time.monotonic()
        host.close()
        took = time.monotonic() - started
    assert running_with(marker) == []
    return took, said[0] if said else "(the connect succeeded)"


async def until(condition: Callable[[], object], timeout: float = 10.0) -> None:
    """``wait_until`` without holding up the event loop (clients or a context run on it)."""
    with anyio.fail_after(timeout):
        for pause in poll_pauses():
            if condition():
                return
            await anyio.sleep(pause)


def wait_for_shell(pane: Pane) -> None:
    """Until bash runs and shows its prompt, keys could reach the pane before the shell."""
    wait_until(lambda: pane_format(pane, "#{pane_current_command}") == "bash")
    wait_until(lambda: screen(pane).strip())


def fill(template: Any, values: Mapping[str, Any]) -> Any:
    """Replace ``{name}`` placeholders in every string of a JSON value; a string that is
    one placeholder alone takes the value itself (a number stays a number)."""
    if isinstance(template, str):
        whole = re.fullmatch(r"\{(\w+)\}", template)
        if whole and whole.group(1) in values:
            return values[whole.group(1)]
        return re.sub(r"\{(\w+)\}", lambda m: str(values.get(m.group(1), m.group(0))), template)
    if isinstance(template, list):
        return [fill(item, values) for item in template]
    if isinstance(template, dict):
        return {key: fill(item, values) for key, item in template.items()}
    return template


async def call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    """A call that must succeed: its structured result."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return dict(result.structured_content)


async def call_model(client: Client, output: type[Output], **arguments: Any) -> Output:
    """A call that must succeed, of the tool whose result model ``output`` is (its
    ``schemux.generated.models.<tool>.<Tool>Output``): its result, read by that model,
    so that a test names fields the contract has and gets their types."""
    package, _, tool = output.__module__.rpartition(".")
    assert package == generated_models.__name__, f"{output.__name__} is no tool's result model"
    return output.model_validate(await call(client, tool, **arguments))


async def run(
    client: Client, pane: Pane | str | None = None, command: str | None = None, **arguments: Any
) -> dict[str, Any]:
    """A ``run_command`` call that must succeed: its structured result. ``pane`` (a Pane
    or a pane id) and ``command`` say where and what, or ``arguments`` do."""
    if pane is not None:
        arguments["pane_id"] = pane if isinstance(pane, str) else pane.pane_id
    if command is not None:
        arguments["command"] = command
    return await call(client, "run_command", **arguments)


async def call_error(client: Client, tool: str, **arguments: Any) -> str:
    """A call that must fail: its error text."""
    result = await client.call_tool(tool, arguments)
    assert result.is_error
    return "\n".join(block.text for block in result.content if block.type == "text")


def missing(what: str) -> NoReturn:
    """A tool or privilege a test needs is missing here. In CI (``CI`` set, as .ci/run
    sets it after installing every tool the suite needs, as root) the test fails, so that
    a green run has run it; elsewhere it is skipped, saying what is missing."""
    if os.environ.get("CI"):
        pytest.fail(f"{what} (CI needs it: .ci/run installs the tools and runs as root)")
    pytest.skip(what)


def user_cache(name: str) -> Path:
    """``name`` in the tests' directory of the user's cache, which every run on the
    machine and its pytest-xdist workers share: for what costs much to make and is the
    same for each (the node packages, mypy's analysis of the libraries)."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "schemux-tests"
    cache.mkdir(parents=True, exist_ok=True)
    return cache / name


def require_tool(name: str) -> str:
    """The path of the program ``name``, which the test needs (``missing`` otherwise)."""
    path = shutil.which(name)
    if path is None:
        missing(f"{name} is not installed")
    return path


def force_gate(gate: GateSetting, monkeypatch: pytest.MonkeyPatch) -> str:
    """Programs run under ``gate`` ("perl" or "python"): those of a ServingState made in this
    process, whatever its settings say, and those of a schemux it starts (by the
    environment). Skipped where that gate cannot run on this machine's architecture."""
    if gate == "perl":
        require_tool("perl")
    try:
        chosen = program_gates.choose_gate(gate)
    except ValueError as error:
        pytest.skip(str(error))
    # where this machine's program host is made (``LocalHost.program_host``)
    monkeypatch.setattr(local_host, "choose_gate", lambda setting: chosen)
    monkeypatch.setenv(ENV_PROGRAM_GATE, gate)
    return gate


@dataclass(frozen=True)
class StandInBinding(ToolBinding):
    """A tool's real contract and validators, with ``stand_in`` in place of its handler."""

    stand_in: Callable[[Call, dict[str, Any]], Awaitable[dict[str, Any]]] | None = None

    async def call(self, call: Call, arguments: dict[str, Any]) -> dict[str, Any]:
        assert self.stand_in is not None
        return await self.stand_in(call, arguments)


async def interrupted_by_a_person(client: Client, pane: Pane) -> dict[str, Any]:
    """The result of ``run_command`` of ``echo before; sleep 30; echo never`` in ``pane``,
    which a person interrupts with C-c (tmux send-keys) once ``before`` shows."""

    async def interrupt() -> None:
        await until(lambda: "before" in screen(pane).splitlines())
        await anyio.sleep(0.2)
        tmux(pane.socket_name, "send-keys", "-t", pane.pane_id, "C-c")

    async with anyio.create_task_group() as group:
        group.start_soon(interrupt)
        with anyio.fail_after(8):
            result = await call(
                client, "run_command", command="echo before; sleep 30; echo never",
                pane_id=pane.pane_id, timeout=20,
            )  # fmt: skip
    return result


def watching_clients(socket_name: str) -> int:
    """schemux's control clients that take output: only a watch's watcher does (the
    shared client and the idle spares have ``no-output``)."""
    flags = tmux(
        socket_name, "list-clients", "-t", "=_schemux", "-F", "#{client_flags}", check=False
    )
    return sum("no-output" not in line for line in flags.splitlines())


ARMING_OWNER = """
import asyncio, sys
from pathlib import Path
from schemux.shell.channel import HookChannels

async def main():
    HookChannels().channel(Path(sys.argv[1])).arm()
    print("armed", flush=True)
    await asyncio.sleep(60)

asyncio.run(main())
"""


@contextmanager
def armed_by_a_silent_owner(armed: Path) -> Iterator[None]:
    """A process that arms a shell's hooks as a run_command call does (its armed file at
    ``armed``) and never answers them, killed (-9) when the block ends."""
    owner = subprocess.Popen(
        [sys.executable, "-c", ARMING_OWNER, str(armed)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert owner.stdout is not None
        assert owner.stdout.readline() == "armed\n"
        yield
    finally:
        owner.kill()
        owner.wait()
        if owner.stdout is not None:
            owner.stdout.close()


def armed_by_a_killed_owner(armed: Path) -> None:
    """A process that arms a shell's hooks as a run_command call does (its armed file at
    ``armed``), killed (-9) before it answers anything."""
    with armed_by_a_silent_owner(armed):
        pass


# terminal queries a command's output can hold (a `cat` of a log, curl, a program probing
# its terminal): tmux answers each on the pane's input, after the command has ended. Not
# the status query (ESC [ 5 n), which the barrier asks itself (docs/shells.md, Known gaps)
TERMINAL_QUERIES = {
    "cursor-position": r"\033[6n",
    "device-attributes": r"\033[c",
    "secondary-device-attributes": r"\033[>c",
    "decrqss": r"\033P$qm\033\134",  # ST's backslash as octal: fish's quotes read \\
    "foreground-colour": r"\033]10;?\007",
    "background-colour": r"\033]11;?\007",
    "xtversion": r"\033[>0q",
}


def run_apart(function: Callable[..., Awaitable[Result]], *args: Any) -> Result:
    """``anyio.run`` of ``function(*args)`` for a test that is not async itself, in a
    thread of its own: in the test's own thread, anyio's runner of a session-scoped async
    fixture (kept for the session once one ran in that worker) leaves the mark of a running
    event loop, and ``anyio.run`` there refuses ("Already running asyncio in this thread"),
    whichever test ran first."""
    with ThreadPoolExecutor(1, "run-apart") as pool:
        return pool.submit(anyio.run, function, *args).result()


def bin_without_python3(directory: Path) -> Path:
    """``directory``/bin, links to every program of the system's bin directories but
    python3 (and every other python): a PATH of a host without it."""
    bin_dir = directory / "bin"
    bin_dir.mkdir()
    for system in ("/usr/local/bin", "/usr/bin", "/bin"):
        for program in Path(system).iterdir():
            link = bin_dir / program.name
            if not program.name.startswith("python") and not link.exists():
                link.symlink_to(program)
    return bin_dir
