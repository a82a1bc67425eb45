"""The end-of-run check finds what this run leaves, and only that."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from schemux.names import socket_directory
from schemux.system.runtime_identity import RUNTIME_PREFIX
from tests.leftovers import RUN_TAG, USER_TMUX_DIRECTORY, find_leftovers, tagged_servers
from tests.process_table import processes
from tests.support import private_tmux_server, remove_server, tagged_socket_name, tmux


def test_the_run_has_a_temporary_directory_of_its_own() -> None:
    assert RUN_TAG in tempfile.gettempdir()
    assert os.environ["TMPDIR"] == tempfile.gettempdir()


def test_a_left_server_socket_and_runtime_directory_are_found(tmp_path: Path) -> None:
    temporary = Path(tempfile.gettempdir())
    with private_tmux_server("probe") as socket_name:
        runtime = Path(tempfile.mkdtemp(prefix=RUNTIME_PREFIX, dir=temporary))
        try:
            found = find_leftovers(temporary, wait=0)
            assert Path(socket_directory(), socket_name) in found.sockets
            assert found.servers  # this server, at least
            assert runtime in found.runtime_directories
            assert "tmux socket" in found.report()
        finally:
            runtime.rmdir()
    # (no wait for servers to go: remove_server has waited, and sockets are files)
    assert socket_name not in {path.name for path in find_leftovers(temporary, wait=0).sockets}


def test_a_removed_server_leaves_no_socket_and_no_process() -> None:
    socket_name = tagged_socket_name("removed")
    tmux(socket_name, "-f", "/dev/null", "new-session", "-d", "-s", "gone")
    socket = Path(socket_directory(), socket_name)
    assert socket.exists()
    remove_server(socket_name)
    assert not socket.exists()
    found = find_leftovers(Path(tempfile.gettempdir()), wait=0)  # remove_server has waited
    assert socket not in found.sockets
    servers = tagged_servers()
    assert not [
        process
        for process in processes()
        if process.pid in servers and socket_name.encode() in b"\0".join(process.argv)
    ]


def test_another_runs_socket_is_not_ours_but_this_runs_anywhere_is(tmp_path: Path) -> None:
    """In the user's tmux directory (here a stand-in) a socket is this run's when its
    name says so; in the run's own tmux directory every socket is."""
    other = tmp_path / f"schemux-test-x-runffffffff-{os.getpid()}"
    ours = tmp_path / tagged_socket_name("leaked")
    untagged = Path(socket_directory(), f"untagged-{os.getpid()}")
    # made by the worker's first tmux server, unless none started before this test
    untagged.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    for path in (other, ours, untagged):
        path.touch()
    try:
        found = find_leftovers(tmp_path, wait=0, user_directory=tmp_path).sockets
        assert other not in found
        assert ours in found
        assert untagged in found
    finally:
        untagged.unlink()


def test_the_run_never_uses_the_users_tmux_directory() -> None:
    """The run's tmux sockets are made in a directory of its own (TMUX_TMPDIR), so that
    no test server can be confused with, or reach, one of the user's."""
    assert os.environ["TMUX_TMPDIR"] == tempfile.gettempdir()
    assert socket_directory() != USER_TMUX_DIRECTORY
    assert Path(socket_directory()).is_relative_to(tempfile.gettempdir())
    with private_tmux_server("where") as socket_name:
        assert Path(socket_directory(), socket_name).is_socket()
        assert not Path(USER_TMUX_DIRECTORY, socket_name).exists()


LEAKY_TEST = """
from tests.support import tagged_socket_name, tmux

def test_leaks_a_server():
    tmux(tagged_socket_name("leak"), "-f", "/dev/null", "new-session", "-d", "-s", "left")
"""


@pytest.mark.long
def test_a_run_that_leaves_a_server_fails_and_is_cleaned_up(tmp_path: Path) -> None:
    """A suite with the suite's end check, one test of which leaks a tmux server."""
    done = run_inner_suite(tmp_path, LEAKY_TEST)
    assert done.returncode == pytest.ExitCode.TESTS_FAILED, done.stdout + done.stderr
    assert "1 passed" in done.stdout
    assert "the test run left things behind:" in done.stdout
    (line,) = [line for line in done.stdout.splitlines() if "tmux socket" in line]
    socket = Path(line.split("tmux socket ", 1)[1])
    assert "schemux-test-leak-run" in socket.name
    assert not socket.exists()  # cleaned up after the report
    assert not [
        process for process in processes() if socket.name.encode() in b"\0".join(process.argv)
    ]


LEAKY_DIRECTORY_TEST = """
import tempfile
from schemux.system.runtime_identity import make_runtime_directory

def test_makes_nothing():
    tempfile.mkdtemp(prefix="not-schemux-")

def test_leaks_a_runtime_directory():
    make_runtime_directory()
"""


def test_a_left_runtime_directory_is_reported_with_the_test_that_made_it(tmp_path: Path) -> None:
    done = run_inner_suite(tmp_path, LEAKY_DIRECTORY_TEST)
    assert done.returncode == pytest.ExitCode.TESTS_FAILED, done.stdout + done.stderr
    (line,) = [line for line in done.stdout.splitlines() if "runtime directory" in line]
    assert line.endswith("(made during test_inner.py::test_leaks_a_runtime_directory)")
    assert not Path(line.split("runtime directory ", 1)[1].split(" (")[0]).exists()


BLOCKED_ON_A_FIFO = """
import os, tempfile
from concurrent.futures import ThreadPoolExecutor

def test_leaves_a_thread_opening_a_fifo():
    path = os.path.join(tempfile.mkdtemp(), "copy")
    os.mkfifo(path)
    ThreadPoolExecutor(1).submit(os.open, path, os.O_RDONLY)  # no writer ever comes
"""

BLOCKED_FOR_EVER = """
import threading

def test_leaves_a_thread_waiting_for_ever():
    threading.Thread(target=threading.Event().wait, name="for-ever").start()
"""


def run_inner_suite(tmp_path: Path, test: str, *options: str) -> subprocess.CompletedProcess[str]:
    """A suite with the suite's rules (``tests.suite_rules``) and the one test given, run
    with ``options``."""
    (tmp_path / "conftest.py").write_text(
        "from tests.suite_rules import pytest_configure, pytest_sessionfinish  # noqa: F401\n"
        "from tests.suite_rules import pytest_collection_modifyitems  # noqa: F401\n"
        "from tests.suite_rules import pytest_unconfigure  # noqa: F401\n"
    )
    (tmp_path / "test_inner.py").write_text(test)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *options, str(tmp_path)],
        cwd=tmp_path,
        env=dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parent.parent)),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_a_thread_blocked_opening_a_fifo_of_the_run_does_not_keep_it_from_exiting(
    tmp_path: Path,
) -> None:
    done = run_inner_suite(tmp_path, BLOCKED_ON_A_FIFO)
    assert done.returncode == pytest.ExitCode.OK, done.stdout + done.stderr
    assert "1 passed" in done.stdout


def test_a_thread_still_busy_at_the_end_is_reported_and_the_run_exits_failed(
    tmp_path: Path,
) -> None:
    done = run_inner_suite(tmp_path, BLOCKED_FOR_EVER)
    assert done.returncode == pytest.ExitCode.TESTS_FAILED, done.stdout + done.stderr
    assert "1 passed" in done.stdout
    assert "threads that would keep it from exiting" in done.stderr
    assert "for-ever" in done.stderr
