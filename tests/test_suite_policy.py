"""The suite's own rules: which failed tests run again, and how property tests draw
their examples (tests/suite_rules.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.suite_rules import spread_long_first
from tests.test_leftovers import run_inner_suite

FAILS_THE_FIRST_TIME = """
from pathlib import Path

import pytest


{mark}
def test_fails_the_first_time():
    tried = Path(__file__).with_name("tried")
    if not tried.exists():
        tried.touch()
        raise AssertionError("the first try's own reason")
"""


def test_a_test_marked_with_its_external_cause_runs_again_saying_why(tmp_path: Path) -> None:
    marked = FAILS_THE_FIRST_TIME.format(mark='@pytest.mark.flaky_external("a keep-alive\'s end")')
    done = run_inner_suite(tmp_path, marked, "-rR")
    assert done.returncode == pytest.ExitCode.OK, done.stdout + done.stderr
    assert "1 passed, 1 rerun" in done.stdout
    assert "RERUN test_inner.py::test_fails_the_first_time" in done.stdout
    assert "why test_inner.py::test_fails_the_first_time ran again" in done.stdout
    assert "external cause: a keep-alive's end" in done.stdout
    assert "AssertionError: the first try's own reason" in done.stdout


def test_an_unmarked_test_that_fails_once_fails_the_run(tmp_path: Path) -> None:
    done = run_inner_suite(tmp_path, FAILS_THE_FIRST_TIME.format(mark=""))
    assert done.returncode == pytest.ExitCode.TESTS_FAILED, done.stdout + done.stderr
    assert "1 failed" in done.stdout
    assert "rerun" not in done.stdout


@pytest.mark.parametrize(
    ("mark", "refusal"),
    [
        ("@pytest.mark.flaky(reruns=2)", "is marked flaky: mark it flaky_external(cause)"),
        ("@pytest.mark.flaky_external()", "flaky_external needs the external cause"),
        ('@pytest.mark.flaky_external(" ")', "flaky_external needs the external cause"),
    ],
)
def test_a_rerun_mark_without_its_cause_stops_the_run(
    tmp_path: Path, mark: str, refusal: str
) -> None:
    done = run_inner_suite(tmp_path, FAILS_THE_FIRST_TIME.format(mark=mark))
    assert done.returncode == pytest.ExitCode.USAGE_ERROR, done.stdout + done.stderr
    assert refusal in done.stderr
    assert not (tmp_path / "tried").exists()  # the test never ran


PRINTS_THE_PROFILE = """
from hypothesis import settings


def test_prints_the_profile():
    print("derandomize", settings.default.derandomize)
    print("database", settings.default.database)
"""


@pytest.fixture(params=["true", None], ids=["ci", "not-ci"])
def ci(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str | None:
    """``CI`` set as .ci/run sets it, or unset: the inner suites inherit it."""
    value: str | None = request.param
    if value is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", value)
    return value


def test_property_tests_keep_their_failures_or_in_ci_draw_one_fixed_set(
    tmp_path: Path, ci: str | None
) -> None:
    done = run_inner_suite(tmp_path, PRINTS_THE_PROFILE, "-s")
    assert done.returncode == pytest.ExitCode.OK, done.stdout + done.stderr
    examples = Path(__file__).resolve().parent.parent / ".hypothesis" / "examples"
    if ci:
        assert "derandomize True\ndatabase None\n" in done.stdout
    else:
        assert "derandomize False\n" in done.stdout
        assert f"database DirectoryBasedExampleDatabase({examples!r})" in done.stdout


def test_the_example_database_is_git_ignored() -> None:
    root = Path(__file__).resolve().parent.parent
    assert ".hypothesis/" in (root / ".gitignore").read_text().splitlines()


NEEDS_A_MISSING_TOOL = """
from tests.support import require_tool


def test_needs_a_missing_tool():
    require_tool("schemux-no-such-tool")
"""


def test_a_missing_tool_fails_the_test_in_ci_and_skips_it_elsewhere(
    tmp_path: Path, ci: str | None
) -> None:
    done = run_inner_suite(tmp_path, NEEDS_A_MISSING_TOOL, "-rs")
    if ci:
        assert done.returncode == pytest.ExitCode.TESTS_FAILED, done.stdout + done.stderr
        assert "1 failed" in done.stdout
        assert "schemux-no-such-tool is not installed (CI needs it: .ci/run" in done.stdout
    else:
        assert done.returncode == pytest.ExitCode.OK, done.stdout + done.stderr
        (skipped,) = [line for line in done.stdout.splitlines() if line.startswith("SKIPPED [1]")]
        assert skipped.endswith(": schemux-no-such-tool is not installed")


class Collected:
    """What ``spread_long_first`` asks of a collected test: its ``long`` mark."""

    def __init__(self, name: str, long: bool) -> None:
        self.name = name
        self.long = long

    def get_closest_marker(self, name: str) -> object | None:
        return "long" if name == "long" and self.long else None


@pytest.mark.parametrize(("tests", "workers"), [(23, 6), (24, 6), (7, 3), (5, 1)])
def test_long_tests_begin_the_batches_the_scheduler_deals(tests: int, workers: int) -> None:
    """Cut as pytest-xdist's work-stealing scheduler cuts the collection (``workers``
    consecutive batches, each the pending tests over the workers left), every batch
    begins with its share of the long tests, and every test is there once."""
    collected = [Collected(f"t{index}", long=index % 4 == 1) for index in range(tests)]
    long_count = sum(test.long for test in collected)
    ordered = spread_long_first(collected, workers)
    assert sorted(test.name for test in ordered) == sorted(test.name for test in collected)
    pending, batches = list(ordered), []
    for index in range(workers):
        size = len(pending) // (workers - index)
        batches.append(pending[:size])
        del pending[:size]
    shares = [sum(test.long for test in batch) for batch in batches]
    assert sum(shares) == long_count
    assert max(shares) - min(shares) <= 1
    for batch, share in zip(batches, shares, strict=True):
        assert all(test.long for test in batch[:share])
