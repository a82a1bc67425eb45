"""How a benchmark ends (bench/common.py): a missed bar makes its exit status non-zero, and
a call that returned an error stops it, named, instead of being timed."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp import Client
from mcp_types import CallToolResult, TextContent

from bench import audit
from bench.common import Bar, CallFailed, check_result, publish, run, succeeded
from schemux.config import AuditSettings, Settings
from schemux.generated.bindings import BINDINGS
from schemux.serving.state import ServingState
from tests.contexts import client_of


def result(text: str, *, error: bool, structured: object = None) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        is_error=error,
        structured_content=structured,
    )


@pytest.mark.parametrize(
    ("bars", "status"),
    [
        ([], 0),
        ([Bar("ratio", 1.0, 1.2)], 0),
        ([Bar("ratio", 1.2, 1.2)], 0),  # at the limit is met
        ([Bar("ratio", 1.3, 1.2)], 1),
        ([Bar("ratio", 1.0, 1.2), Bar("rate", 0.4, 0.5, at_least=True)], 1),
        ([Bar("rate", 0.6, 0.5, at_least=True)], 0),
        ([Bar("anchor", None, 0.3)], 0),  # not measured: skipped, not missed
        ([Bar("anchor", None, 0.3), Bar("ratio", 2.0, 1.2)], 1),
    ],
)
def test_a_missed_bar_makes_the_exit_status_non_zero(
    bars: list[Bar], status: int, capsys: pytest.CaptureFixture[str]
) -> None:
    assert publish("figures", {}, None, bars) == status
    printed = capsys.readouterr()
    assert printed.out == "figures\n"
    missed = [bar.name for bar in bars if bar.verdict == "MISS"]
    assert (f"missed: {'; '.join(missed)}\n" if missed else "") == printed.err


def test_verdicts_are_printed_as_the_tables_print_them() -> None:
    line = Bar("ratio", 1.3, 1.2).line(10)
    assert line == "  MISS  ratio     " + " " * 9 + "1.30x  (target <= 1.2x)"
    assert Bar("rate", 0.6, 0.5, at_least=True).verdict == "PASS"
    assert (
        Bar("anchor", None, 0.3).line(10)
        == "  SKIP  anchor    " + " " * 11 + "n/a  (target <= 0.3x)"
    )


def test_an_error_result_raises_naming_the_call_and_its_message() -> None:
    with pytest.raises(CallFailed, match=r"^tmux_snapshot failed: no server running on x$"):
        succeeded("tmux_snapshot", result("no server running on x", error=True))
    with pytest.raises(CallFailed, match=r"^pane %1: run_command failed: it broke$"):
        check_result("pane %1", result("it broke", error=True))


def test_a_result_that_succeeded_gives_its_structured_content() -> None:
    assert succeeded("x", result("ok", error=False, structured={"a": 1})) == {"a": 1}
    assert succeeded("x", result("ok", error=False)) == {}
    check_result("pane", result("", error=False, structured={"exit_status": 0}))
    with pytest.raises(CallFailed, match="exit_status is not 0"):
        check_result("pane", result("", error=False, structured={"exit_status": 1}))


def test_run_exits_with_the_status_of_main() -> None:
    for status in (0, 1):
        with pytest.raises(SystemExit) as ended:
            run(lambda status=status: status)  # type: ignore[misc]
        assert ended.value.code == status


def fails(*failures: Exception) -> int:
    if len(failures) == 1:
        raise failures[0]
    raise ExceptionGroup("task group", list(failures))


@pytest.mark.parametrize(
    "failures",
    [
        [CallFailed("capture_pane failed: gone")],
        [ExceptionGroup("inner", [CallFailed("capture_pane failed: gone")])],
        [CallFailed("capture_pane failed: gone"), CallFailed("read failed: also")],
    ],
)
def test_a_failed_call_exits_2_saying_which_call_failed(
    failures: list[Exception], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as ended:
        run(lambda: fails(*failures))
    assert ended.value.code == 2
    said = capsys.readouterr().err
    assert ": FAILED: capture_pane failed: gone\n" in said
    assert ("read failed: also" in said) == (len(failures) == 2)


def test_other_errors_are_not_taken_for_a_failed_call() -> None:
    with pytest.raises(ExceptionGroup):
        run(lambda: fails(CallFailed("a failed: x"), ValueError("a bug")))
    with pytest.raises(ValueError, match="a bug"):
        run(lambda: fails(ValueError("a bug")))


@pytest.mark.tmux
def test_audit_fails_when_its_calls_fail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """bench/audit.py against servers whose tmux socket is in a directory that does not
    exist: every tmux_snapshot returns an error, which the bench must not time and judge
    "met" (it did: on / off 0.9x, "met")."""

    @asynccontextmanager
    async def unreachable(socket: str, log: Path | None) -> AsyncIterator[Client]:
        absent = str(tmp_path / "absent" / "socket")
        context = ServingState(Settings(socket_path=absent, audit=AuditSettings(log)))
        try:
            async with client_of(context, BINDINGS) as client:
                yield client
        finally:
            await context.close()

    monkeypatch.setattr(audit, "served", unreachable)
    with pytest.raises(SystemExit) as ended:
        run(lambda: audit.main(["--rounds", "1", "--calls", "2"]))
    assert ended.value.code == 2
    said = capsys.readouterr()
    assert "FAILED: tmux_snapshot failed: " in said.err
    assert "could not start a server" in said.err
    assert "bar" not in said.out
