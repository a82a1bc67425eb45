"""Fixtures: private tmux servers and MCP clients of schemux, in memory and over stdio."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from schemux.config import ProgramLimits
from schemux.host_settings import SshTarget
from schemux.serving.state import ServingState
from tests import suite_rules
from tests.contexts import Contexts, client_of
from tests.leftovers import run_environment
from tests.node import shared_scripts
from tests.ssh_server import ALIAS, SshServer, available, remote_tmux_server, ssh_server
from tests.suite_rules import (  # noqa: F401  # the suite's rules are this conftest's hooks
    pytest_configure,
    pytest_sessionfinish,
    pytest_unconfigure,
)
from tests.support import force_gate, private_tmux_server, tagged_socket_name

STDIO_WAIT_CEILING = 60

# The unit tier (``nox -s unit``, which runs ``-m "not tmux"`` with no tmux on PATH):
# the modules that hold tests needing no tmux server, shell, network or minute-long
# subprocess, each with the fixtures of its own that do need one. Every other test is
# marked ``tmux``: those of a module not listed here, those taking one of
# ``TMUX_FIXTURES`` or of their module's fixtures named here, and those marked ``tmux``
# where they stand. A test module is in the tmux tier until it is listed; a test listed
# here that starts tmux after all fails in the unit tier, where tmux is not found.
UNIT_MODULES: dict[str, frozenset[str]] = {
    "codegen/test_check.py": frozenset(),
    "codegen/test_contract_diff.py": frozenset(),
    "codegen/test_document_edits.py": frozenset(),
    "codegen/test_importer.py": frozenset(),
    "codegen/test_model_defaults.py": frozenset(),
    "codegen/test_models.py": frozenset(),
    "codegen/test_overlays.py": frozenset(),
    "codegen/test_projection.py": frozenset(),
    "codegen/test_provider_rules.py": frozenset(),
    "codegen/test_served_documents.py": frozenset(),
    "codegen/test_served_text.py": frozenset(),
    "codegen/test_strict_projection.py": frozenset(),
    "codegen/test_tmux_fields.py": frozenset(),
    "codegen/test_tool_docs.py": frozenset(),
    "codegen/test_upstream.py": frozenset(),
    "codegen/test_upstream_readme.py": frozenset(),
    "test_audit.py": frozenset(),
    "test_bench_common.py": frozenset(),
    "test_binding.py": frozenset(),
    "test_capture_since.py": frozenset(),
    "test_client_log.py": frozenset(),
    "test_contract_examples.py": frozenset(),
    "test_doctor.py": frozenset({"server_with_owned_session"}),
    "test_engine_start.py": frozenset(),
    "test_errors.py": frozenset({"no_server"}),
    "test_fleet_settings.py": frozenset(),
    "test_framing.py": frozenset({"socket"}),
    "test_history_cuts.py": frozenset(),
    "test_http.py": frozenset(),
    "test_inspect_rules.py": frozenset(),
    "test_layers.py": frozenset(),
    "test_module_state.py": frozenset(),
    "test_packaging.py": frozenset(),
    "test_pane_ownership.py": frozenset(),
    "test_pane_watch.py": frozenset(),
    "test_policy_rules.py": frozenset(),
    "test_pane_settling.py": frozenset(),
    "test_pictures.py": frozenset(),
    "test_processes.py": frozenset(),
    "test_program_reads.py": frozenset(),
    "test_progress.py": frozenset(),
    "test_readme.py": frozenset(),
    "test_resource_uris.py": frozenset(),
    "test_run_command_interrupts.py": frozenset(),
    "test_schema_checks.py": frozenset(),
    "test_screen.py": frozenset(),
    "test_selection.py": frozenset(),
    "test_server.py": frozenset(),
    "test_settings.py": frozenset(),
    "test_shell_channel.py": frozenset(),
    "test_shell_commands.py": frozenset(),
    "test_shell_output.py": frozenset(),
    "test_shell_start.py": frozenset(),
    "test_snapshot_pane.py": frozenset(),
    "test_soak_checks.py": frozenset(),
    "test_ssh.py": frozenset(),
    "test_start.py": frozenset(),
    "test_targets.py": frozenset(),
    "test_tasks.py": frozenset(),
    "test_terminal_barrier.py": frozenset(),
    "test_terminal_text.py": frozenset(),
    "test_text_patterns.py": frozenset(),
    "test_tmux_format.py": frozenset({"socket"}),
    "test_tmux_version.py": frozenset({"socket"}),
    "test_tools_list.py": frozenset(),
    "test_tracking_backends.py": frozenset(),
    "test_typed_command.py": frozenset(),
    "test_unknown_arguments.py": frozenset(),
    "test_validation.py": frozenset(),
    "test_wait_links.py": frozenset(),
    "test_wrapped_results.py": frozenset(),
}
# the fixtures of this file that start tmux, a shell, sshd or npm (a module that makes
# its own ``tmux_socket`` is caught by the name)
TMUX_FIXTURES = frozenset(
    {
        "main_tmux_socket", "tmux_socket", "other_tmux_socket", "stdio_client",
        "tool_context", "memory_client", "programs", "program_gate", "sshd", "ssh_target",
        "remote_tmux_socket", "transport", "node_scripts", "socket", "socket_client",
        "other_host",
    }
)  # fmt: skip
TESTS = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The suite's rules (``tests.suite_rules``: long tests first, reruns), and every test
    outside the unit tier marked ``tmux`` (``needs_tmux``)."""
    suite_rules.pytest_collection_modifyitems(items)
    # a module's path resolved once, not once a test (a system call a directory, and
    # every test worker collects every test)
    modules: dict[Path, frozenset[str] | None] = {}
    for item in items:
        if item.path not in modules:
            modules[item.path] = unit_module_fixtures(item.path)
        if needs_tmux(item, modules[item.path]):
            item.add_marker(pytest.mark.tmux)


def needs_tmux(item: pytest.Item, own_fixtures: frozenset[str] | None) -> bool:
    """Whether ``item`` is outside the unit tier (``UNIT_MODULES``), given its module's
    ``unit_module_fixtures``."""
    if item.get_closest_marker("tmux") is not None or own_fixtures is None:
        return True
    return bool(set(getattr(item, "fixturenames", ())) & (TMUX_FIXTURES | own_fixtures))


def unit_module_fixtures(module: Path) -> frozenset[str] | None:
    """The fixtures that put a test of the unit module ``module`` outside the tier; None
    for any other module."""
    resolved = module.resolve()
    if not resolved.is_relative_to(TESTS):
        return None
    return UNIT_MODULES.get(resolved.relative_to(TESTS).as_posix())


@pytest.fixture(scope="session", autouse=True)
def tests_directories_removed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Each test worker removes its tests' directories (``tmp_path``) once its last test
    has ended, while other workers still run: the run's end, which removes the run's
    directory, removed 12,000 entries one after another (5 s with nothing else running)."""
    yield
    shutil.rmtree(tmp_path_factory.getbasetemp(), ignore_errors=True)


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def main_tmux_socket() -> Iterator[str]:
    """The tmux server the tests' schemux is configured with (on this machine)."""
    with private_tmux_server("main") as socket_name:
        yield socket_name


@pytest.fixture(scope="session")
def tmux_socket(main_tmux_socket: str) -> str:
    """``main_tmux_socket``; a test that runs over both transports takes
    ``transport_socket`` instead."""
    return main_tmux_socket


@pytest.fixture(scope="session")
def other_tmux_socket() -> Iterator[str]:
    """A second tmux server, reached only through a call's socket_name."""
    with private_tmux_server("other") as socket_name:
        yield socket_name


def stdio_parameters(*args: str, env: dict[str, str] | None = None) -> StdioServerParameters:
    """``schemux serve ARGS`` as an MCP client starts it: the SDK gives it a filtered
    environment, to which the run's own variables (its TMUX_TMPDIR) and ``env`` are added."""
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "schemux", "serve", *args],
        env=run_environment(**(env or {})),
    )


@pytest.fixture(scope="session")
async def stdio_client(anyio_backend: str, tmux_socket: str) -> AsyncIterator[Client]:
    """schemux as an MCP client starts it: a subprocess speaking stdio, serving every
    tool (those served only on request too)."""
    parameters = stdio_parameters(
        "--socket-name", tmux_socket, "--wait-ceiling", str(STDIO_WAIT_CEILING), "--tools", "all"
    )
    async with Client(parameters) as client:
        yield client


@pytest.fixture
async def make_context(anyio_backend: str) -> AsyncIterator[Contexts]:
    """``make_context(**settings)``: a ServingState of ``Settings(**settings)``, closed
    after the test as the server closes its own (programs ended, runtime directory
    removed, ssh master ended)."""
    async with Contexts() as contexts:
        yield contexts


@pytest.fixture
def tool_context(make_context: Contexts, main_tmux_socket: str) -> ServingState:
    """Closed afterwards, as the server closes its own: programs ended, runtime directory
    removed. On this machine's server (not a module's ``tmux_socket``, which may be a
    transport's)."""
    return make_context(socket_name=main_tmux_socket, wait_ceiling=STDIO_WAIT_CEILING)


@pytest.fixture
async def memory_client(anyio_backend: str, tool_context: ServingState) -> AsyncIterator[Client]:
    """schemux in this process, over the SDK's in-memory transport."""
    async with client_of(tool_context) as client:
        yield client


@pytest.fixture(scope="module")
def socket(request: pytest.FixtureRequest) -> Iterator[str]:
    """A tmux server of the test module's own, named after it: its sessions, buffers,
    options and agent mark are that module's tests' alone. (A module that needs its own
    kind, one a test, say, defines its own ``socket``.)"""
    label = request.module.__name__.rpartition(".")[2].removeprefix("test_")
    with private_tmux_server(label) as socket_name:
        yield socket_name


@pytest.fixture
async def socket_client(module_contexts: Contexts, socket: str) -> AsyncIterator[Client]:
    """schemux in this process serving the module's ``socket``: a new MCP session of one
    ServingState the module's tests share (``Contexts.shared_client``), so that its
    control clients and owned session are started once a module, not once a test. For
    calls that start no program; a test that needs a context of its own (one whose
    server it kills, say) makes it with ``make_context``."""
    async with module_contexts.shared_client(socket_name=socket) as client:
        yield client


@pytest.fixture
def marker(tmp_path: Path) -> Path:
    """A file that exists only if something a test sent ran as a command."""
    return tmp_path / "ran"


@pytest.fixture
def other_host() -> Iterator[tuple[str, str]]:
    """A host ``there`` (an exec-kind host's tmux, in a directory of its own) running a
    server with one session, ``on-there``, on a socket name of its own: the directory,
    and the socket name."""
    directory = tempfile.mkdtemp(prefix="sxh-", dir="/tmp")
    name = tagged_socket_name("there")
    there = ["env", f"TMUX_TMPDIR={directory}", "tmux", "-L", name]
    subprocess.run([*there, "new-session", "-d", "-s", "on-there", "cat"], check=True)
    try:
        yield directory, name
    finally:
        subprocess.run([*there, "kill-server"], capture_output=True, check=False)
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture
def client(memory_client: Client) -> Client:
    """The test's MCP client of schemux: ``memory_client``, unless its module serves
    schemux otherwise (as its own ``client``)."""
    return memory_client


@pytest.fixture(params=["perl", "python"])
def program_gate(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The gate programs run under, each in turn (``force_gate``)."""
    return force_gate(request.param, monkeypatch)


def over_ssh(request: pytest.FixtureRequest, transport: str) -> SshTarget | None:
    """The test sshd's target for the "ssh" transport (None for "local"). Over ssh the
    remote Perl gate always runs: a test's Python-gate run is skipped there, as the same
    run twice."""
    if transport != "ssh":
        return None
    callspec = getattr(request.node, "callspec", None)
    if callspec is not None and callspec.params.get("program_gate") == "python":
        pytest.skip("over ssh programs run under the remote host's Perl gate")
    target: SshTarget = request.getfixturevalue("ssh_target")
    return target


@pytest.fixture
async def programs(
    request: pytest.FixtureRequest,
    make_context: Contexts,
    transport_ssh: SshTarget | None,
    tmux_socket: str,
) -> AsyncIterator[tuple[Client, ServingState]]:
    """schemux in this process with room for many programs, running and ended; once on
    this machine's ``tmux_socket`` and once over ssh to a tmux server started over ssh
    (``remote_tmux_socket``), in the pid namespace the program helper runs in, as on a
    real remote host. ``programs_socket`` names the server in use."""
    limits = ProgramLimits(max_running=400, retained_ended=400)
    ssh = transport_ssh
    socket_name = tmux_socket if ssh is None else request.getfixturevalue("remote_tmux_socket")
    context = make_context(socket_name=socket_name, program_limits=limits, ssh=ssh)
    async with client_of(context) as client:
        yield client, context


@pytest.fixture
def programs_socket(programs: tuple[Client, ServingState]) -> str:
    """The tmux server ``programs`` makes its panes on (tmux -L reaches either: the
    remote one is this machine's too, over loopback)."""
    socket_name = programs[1].settings.socket_name
    assert socket_name is not None
    return socket_name


@pytest.fixture(scope="session")
def sshd() -> Iterator[SshServer]:
    """A real OpenSSH server on 127.0.0.1 (``tests.ssh_server``). Each ServingState ends
    the ssh master it started when it closes."""
    problem = available()
    if problem is not None:
        pytest.fail(problem)  # .ci/run installs it: a missing sshd is a broken machine
    with ssh_server() as server:
        yield server


@pytest.fixture(scope="session")
def ssh_target(sshd: SshServer) -> SshTarget:
    """The test server as ``schemux --ssh schemux-test --ssh-config FILE`` names it; its
    tmux servers are this machine's (loopback), so tests see them with tmux -L too."""
    return SshTarget(ALIAS, str(sshd.config))


@pytest.fixture(scope="session")
def remote_tmux_socket(sshd: SshServer) -> Iterator[str]:
    """A tmux server started over ssh: its panes' pids are the sshd namespace's
    (``tests.ssh_server``), as a remote host's are."""
    with remote_tmux_server(sshd.config, tagged_socket_name("remote")) as socket_name:
        yield socket_name


@pytest.fixture(params=["local", "ssh"])
def transport(request: pytest.FixtureRequest) -> str:
    """Each test that runs over both transports, on this machine and over ssh: the one
    place the two are listed (``transport_ssh``, ``transport_socket``,
    ``transport_client`` and ``programs`` follow it)."""
    return str(request.param)


@pytest.fixture
def transport_ssh(request: pytest.FixtureRequest, transport: str) -> SshTarget | None:
    """The ssh target of the transport: None on this machine (``over_ssh``)."""
    return over_ssh(request, transport)


@pytest.fixture
def transport_socket(request: pytest.FixtureRequest, transport: str) -> str:
    """The tmux server of the transport: this machine's, or one started over ssh (so
    that this machine's /proc would be wrong about its panes): a test that runs over
    both transports makes its panes there, where ``transport_client`` reaches them."""
    if transport == "ssh":
        return str(request.getfixturevalue("remote_tmux_socket"))
    return str(request.getfixturevalue("main_tmux_socket"))


@pytest.fixture
async def transport_client(
    make_context: Contexts, transport_ssh: SshTarget | None, transport_socket: str
) -> AsyncIterator[Client]:
    """``memory_client``, once on this machine and once over ssh (``transport``)."""
    context = make_context(
        socket_name=transport_socket, wait_ceiling=STDIO_WAIT_CEILING, ssh=transport_ssh
    )
    async with client_of(context) as client:
        yield client


@pytest.fixture(scope="module")
async def module_contexts(anyio_backend: str) -> AsyncIterator[Contexts]:
    """ServingStates a module's tests share (``Contexts.shared``), closed after its last
    test."""
    async with Contexts() as contexts:
        yield contexts


@pytest.fixture
async def shared_transport_client(
    module_contexts: Contexts, transport_ssh: SshTarget | None, transport_socket: str
) -> AsyncIterator[Client]:
    """``transport_client`` for a module whose calls start no program and leave nothing in
    their context but the cursors a session's end forgets (``Contexts.shared_client``): a
    new MCP session of one context a transport that the module's tests share, so that
    over ssh one master, remote control client and helper serve the module, not one a
    test. Such a module takes it as its ``transport_client``."""
    async with module_contexts.shared_client(
        socket_name=transport_socket, wait_ceiling=STDIO_WAIT_CEILING, ssh=transport_ssh
    ) as client:
        yield client


@pytest.fixture(scope="session")
def node_scripts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The node packages, installed once for the run (``tests.node``)."""
    return shared_scripts(tmp_path_factory)
