"""Fixtures: private tmux servers and MCP clients of schemux, in memory and over stdio."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Generator, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.database import DirectoryBasedExampleDatabase
from mcp import Client, StdioServerParameters

from schemux.config import ProgramLimits
from schemux.host_settings import SshTarget
from schemux.serving.state import ServingState
from tests.contexts import Contexts, client_of
from tests.leftovers import (
    busy_threads,
    find_leftovers,
    private_temporary_directory,
    release_fifo_openers,
    run_environment,
    runtime_directories,
)
from tests.node import shared_scripts
from tests.schema_checks import remember_passed_checks
from tests.ssh_server import ALIAS, SshServer, available, remote_tmux_server, ssh_server
from tests.support import force_gate, private_tmux_server, tagged_socket_name

STDIO_WAIT_CEILING = 60
THREAD_EXIT_SECONDS = 5.0
WORKER_LEFTOVERS = "schemux-worker-leftovers"
RUNTIME_WITNESS = "schemux-runtime-directory-witness"
RERUN_REASONS = "schemux-rerun-reasons"
# A test that fails runs again only when marked ``flaky_external(cause)``: the cause is
# something outside schemux and the test whose timing load moves (ssh's keep-alive, say),
# named where the test is, printed with each rerun (``RerunReasons``). Any other failure
# fails the run: a race that fails one run in three would go green with reruns for all.
EXTERNAL_CAUSE = "flaky_external"
EXTERNAL_RERUNS = 2
_temporary: list[Path] = []

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

# Property tests judge behaviour; how fast an example runs or is drawn is the machine's
# load (other runs, other test workers), and speed is measured in bench/, not in tests.
# A developer's run draws new examples each time and keeps those that failed in an
# example database (git-ignored; hypothesis' directory database is safe for the test
# workers sharing it), so the next run tries them first. CI (``CI`` set, as .ci/run and
# hosted CI do) starts from a fresh clone, where a database would be empty and then
# thrown away: it draws one fixed set of examples instead, so a red run names a change,
# not a draw, and a failure comes again on every run of that code, with the blob that
# reproduces it printed.
EXAMPLES = Path(__file__).resolve().parent.parent / ".hypothesis" / "examples"
settings.register_profile(
    "schemux",
    settings.get_profile("default"),  # not hypothesis' own "ci", which it loads in CI
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    database=DirectoryBasedExampleDatabase(EXAMPLES),
)
settings.register_profile(
    "schemux-ci", settings.get_profile("schemux"), derandomize=True, print_blob=True
)
settings.load_profile("schemux-ci" if os.environ.get("CI") else "schemux")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked ``long`` first, in their order: collected late, the launcher's install
    (30 s) kept one worker busy alone for the run's last 16 s. Tests marked with an
    external cause may run again (``allow_reruns``); every test outside the unit tier is
    marked ``tmux`` (``needs_tmux``)."""
    items.sort(key=lambda item: item.get_closest_marker("long") is None)
    for item in items:
        allow_reruns(item)
        if needs_tmux(item):
            item.add_marker(pytest.mark.tmux)


def needs_tmux(item: pytest.Item) -> bool:
    """Whether ``item`` is outside the unit tier (``UNIT_MODULES``)."""
    if item.get_closest_marker("tmux") is not None:
        return True
    module = item.path.resolve()
    if not module.is_relative_to(TESTS):
        return True
    own_fixtures = UNIT_MODULES.get(module.relative_to(TESTS).as_posix())
    if own_fixtures is None:
        return True
    return bool(set(getattr(item, "fixturenames", ())) & (TMUX_FIXTURES | own_fixtures))


def allow_reruns(item: pytest.Item) -> None:
    """A test marked ``flaky_external(cause)`` runs again when it fails, twice at most
    (pytest-rerunfailures' ``flaky`` mark), its cause kept in its reports for the
    summary. The plugin's own mark alone is refused: it would rerun with no cause said."""
    marked = item.get_closest_marker(EXTERNAL_CAUSE)
    if marked is None:
        if item.get_closest_marker("flaky") is not None:
            raise pytest.UsageError(
                f"{item.nodeid} is marked flaky: mark it {EXTERNAL_CAUSE}(cause) instead, "
                "naming the external cause that its failure waits on"
            )
        return
    cause = marked.args[0] if marked.args else marked.kwargs.get("cause")
    if not isinstance(cause, str) or not cause.strip():
        raise pytest.UsageError(
            f"{item.nodeid}: {EXTERNAL_CAUSE} needs the external cause, as a sentence"
        )
    item.add_marker(pytest.mark.flaky(reruns=marked.kwargs.get("reruns", EXTERNAL_RERUNS)))
    item.user_properties.append((EXTERNAL_CAUSE, cause))


def pytest_configure(config: pytest.Config) -> None:
    """The run gets a temporary directory of its own, so that its end can tell what it left
    from what other runs on the machine leave; a state directory in it, so that no
    schemux it starts writes its audit log into the real ~/.local/state; and a home in it,
    so that the login shells its servers start read no rc file of the user running it
    (tests that need a profile give one). A login bash of root's home here runs ``pyenv
    rehash``, whose lock a shell killed mid-start leaves behind: every later login bash
    then waited 60 s for it. The caches stay the user's: nothing is fetched again."""
    config.addinivalue_line(
        "markers",
        f"{EXTERNAL_CAUSE}(cause, reruns={EXTERNAL_RERUNS}): the test may run again when it "
        "fails, because of the external cause named (printed with each rerun)",
    )
    # here, not in pyproject.toml: the hooks that mark tests are this module's, and a run
    # that borrows them (tests/test_leftovers.py's inner suites) gets the marker with them
    config.addinivalue_line(
        "markers",
        "tmux: needs a tmux server, shells or the network; `nox -s unit` runs the tests without it",
    )
    remember_passed_checks()
    temporary = private_temporary_directory()
    _temporary.append(temporary)
    os.environ["XDG_STATE_HOME"] = str(temporary / "state")
    os.environ.setdefault("XDG_CACHE_HOME", str(Path.home() / ".cache"))
    os.environ.setdefault("npm_config_cache", str(Path.home() / ".npm"))
    home = temporary / "home"
    home.mkdir(mode=0o700)
    os.environ["HOME"] = str(home)
    config.pluginmanager.register(RuntimeDirectoryWitness(temporary), RUNTIME_WITNESS)
    config.pluginmanager.register(RerunReasons(), RERUN_REASONS)
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(WorkerLeftovers(), WORKER_LEFTOVERS)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the run when it left a tmux socket, server or schemux runtime directory. A
    test worker (pytest-xdist) has no terminal of its own: it hands its report to the
    run that started it (``WorkerLeftovers``)."""
    if not _temporary:
        return
    temporary = _temporary.pop()
    leftovers = find_leftovers(temporary)
    if leftovers:
        witness = session.config.pluginmanager.get_plugin(RUNTIME_WITNESS)
        report = leftovers.report(witness.made_during if witness is not None else None)
        worker_output = getattr(session.config, "workeroutput", None)
        if worker_output is not None:
            worker_output["leftovers"] = report
        else:
            report_leftovers(session, report)
    # either way, leave the machine clean for the next run
    for path in leftovers.sockets:
        subprocess.run(["tmux", "-S", str(path), "kill-server"], capture_output=True, check=False)
        path.unlink(missing_ok=True)
    release_fifo_openers(temporary)  # before the FIFOs' paths are gone
    shutil.rmtree(temporary, ignore_errors=True)
    workers = session.config.pluginmanager.get_plugin(WORKER_LEFTOVERS)
    for report in workers.reports if workers is not None else []:
        report_leftovers(session, report)


def report_leftovers(session: pytest.Session, report: str) -> None:
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(report, red=True)
    else:
        print(report, file=sys.stderr)
    session.exitstatus = pytest.ExitCode.TESTS_FAILED


class RuntimeDirectoryWitness:
    """Which test each schemux runtime directory of this process's run appeared during,
    for the leftovers report."""

    def __init__(self, temporary: Path) -> None:
        self.temporary = temporary
        self.made_during: dict[Path, str] = {}

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Generator[None, object, object]:
        before = set(runtime_directories(self.temporary))
        try:
            return (yield)
        finally:
            for path in set(runtime_directories(self.temporary)) - before:
                self.made_during.setdefault(path, item.nodeid)


class RerunReasons:
    """Why each test that ran again failed first, and the external cause its mark names,
    printed after the summary: ``-raR`` names the reruns but not their failures, and a
    failure that a rerun hides is seen once and then lost (pytest-xdist hands the
    workers' reports to the run's own end)."""

    def __init__(self) -> None:
        self.reasons: list[tuple[str, str, str]] = []

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.outcome == "rerun":  # type: ignore[comparison-overlap]  # rerunfailures' own
            # a worker's report comes through pytest-xdist with its pairs as lists
            causes = [value for name, value in report.user_properties if name == EXTERNAL_CAUSE]
            cause = str(causes[0]) if causes else "none marked (--reruns)"
            self.reasons.append((report.nodeid, cause, report.longreprtext))

    @pytest.hookimpl
    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        for nodeid, cause, reason in self.reasons:
            terminalreporter.write_sep("-", f"why {nodeid} ran again")
            terminalreporter.write_line(f"external cause: {cause}")
            terminalreporter.write_line(reason)


class WorkerLeftovers:
    """The test workers' reports of what they left (pytest-xdist), gathered as each
    worker ends, before the run's own end reports them."""

    def __init__(self) -> None:
        self.reports: list[str] = []

    @pytest.hookimpl
    def pytest_testnodedown(self, node: Any, error: object) -> None:
        report = getattr(node, "workeroutput", {}).get("leftovers")
        if report:
            self.reports.append(f"{node.gateway.id}: {report}")


def pytest_unconfigure(config: pytest.Config) -> None:
    """The run always exits: a thread still busy now (blocked opening a FIFO, say) would
    keep the interpreter from ending, after the summary; it is reported and the run ends
    as failed."""
    busy = busy_threads(wait=THREAD_EXIT_SECONDS)
    if busy:
        print("the test run left threads that would keep it from exiting:", file=sys.stderr)
        for line in busy:
            print(f"  {line}", file=sys.stderr)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(pytest.ExitCode.TESTS_FAILED)


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
