"""The suite's own rules, as pytest hooks: which failed tests run again, long tests first,
how property tests draw their examples, and a run that fails when it leaves a tmux server,
socket, runtime directory or busy thread behind.

tests/conftest.py takes these hooks, and so do the inner suites of tests/test_leftovers.py
and tests/test_suite_policy.py, which check them: this module imports no MCP SDK nor
schemux's serving (a second of CPU for each of those inner runs' start).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Generator
from pathlib import Path
from typing import Any, Protocol, TypeVar

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.database import DirectoryBasedExampleDatabase

from tests.leftovers import (
    busy_threads,
    find_leftovers,
    private_temporary_directory,
    release_fifo_openers,
    runtime_directories,
)
from tests.schema_checks import remember_passed_checks

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
    """Tests marked ``long`` first, spread over the test workers (``spread_long_first``):
    collected late, one of them kept its worker busy alone at the run's end (the
    launcher's install for 16 s, the hold timers' tests for 9 s). Tests marked with an
    external cause may run again (``allow_reruns``)."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    items[:] = spread_long_first(items, workers)
    for item in items:
        allow_reruns(item)


class Marked(Protocol):
    """A collected test, as far as ``spread_long_first`` asks: its marks."""

    def get_closest_marker(self, name: str) -> object | None: ...


Test = TypeVar("Test", bound=Marked)


def spread_long_first(items: list[Test], workers: int) -> list[Test]:
    """``items`` in the order that puts each worker's share of the ``long`` tests at the
    start of its first batch. pytest-xdist's scheduler (``--dist worksteal``) first deals
    the collection out in ``workers`` consecutive batches, as equal as they divide, and
    later moves tests only from the end of a batch: the long tests dealt round the
    batches run first, each in its own worker, instead of one after the other in the
    first worker."""
    long: list[Test] = []
    rest: list[Test] = []
    for item in items:
        (rest if item.get_closest_marker("long") is None else long).append(item)
    if workers <= 1:
        return long + rest
    batches = [long[index::workers] for index in range(workers)]
    left = len(items)
    for index, batch in enumerate(batches):
        size = left // (workers - index)  # as the scheduler cuts it
        left -= size
        filling = max(size - len(batch), 0)
        batch.extend(rest[:filling])
        del rest[:filling]
    batches[-1].extend(rest)  # none, unless the long tests outnumber a batch
    return [item for batch in batches for item in batch]


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
    # here, not in pyproject.toml: the hook that marks tests is tests/conftest.py's, and a
    # run that borrows these rules (tests/test_leftovers.py's inner suites) knows the mark
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
