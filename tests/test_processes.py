"""/proc read once for every module (schemux.system.processes); both spellings of owner marks."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from schemux.system.processes import (
    Owner,
    load_stretch,
    machine_tag,
    process_name,
    read_stat,
    start_ticks,
    stat_of,
    this_process,
)
from tests.support import wait_until


def test_a_name_with_parentheses_and_spaces_is_read_past(tmp_path: Path) -> None:
    sleep = shutil.which("sleep")
    assert sleep is not None
    link = tmp_path / "x) 1 2 (y"  # what a naive split of /proc/PID/stat would misread
    link.symlink_to(sleep)
    process = subprocess.Popen([str(link), "30"])
    try:
        wait_until(lambda: process_name(process.pid) == "x) 1 2 (y")
        stat = read_stat(process.pid)
        assert stat.ppid == os.getpid()
        # alive: running, asleep, or in the disk sleep of loading its program under load
        assert stat.state in ("R", "S", "D")
        assert stat.pgrp == os.getpgrp()
        assert stat.start_ticks == start_ticks(process.pid)
        assert Owner(process.pid, stat.start_ticks).alive()
        assert not Owner(process.pid, stat.start_ticks + 1).alive()  # another process's time
    finally:
        process.kill()
        process.wait()
    assert stat_of(process.pid) is None
    assert start_ticks(process.pid) is None
    assert not Owner(process.pid, stat.start_ticks).alive()


def test_every_spelling_of_an_owner_names_the_same_process() -> None:
    owner = this_process()
    start = read_stat(os.getpid()).start_ticks
    assert owner == Owner(os.getpid(), start, machine_tag())
    assert owner.identity == f"{owner.pid}-{owner.start_ticks}"
    assert owner.tag == f"{owner.identity}-{machine_tag()}"
    assert owner.mark == f"A {owner.pid} {owner.start_ticks} {machine_tag()}"
    assert Owner.from_identity(owner.tag) == owner
    assert Owner.from_value(f"if -F 0 '{owner.mark}'") == owner
    assert owner.alive()
    assert owner.may_run(remote=False)
    assert owner.may_run(remote=True)


def test_marks_of_before_the_machine_still_read() -> None:
    """Marks that tmux servers hold from an older schemux: no machine, judged as before."""
    old = Owner(os.getpid(), read_stat(os.getpid()).start_ticks)
    assert Owner.from_identity(old.identity) == old
    assert Owner.from_value(f"if -F 0 '{old.mark}'\"") == old
    gone = Owner(2**22 + 7, 1)
    assert not gone.may_run(remote=False)  # this machine's server: its /proc tells
    assert gone.may_run(remote=True)  # another host's: it may run there


def test_the_machine_tag_is_steady_and_says_nothing_of_the_machine() -> None:
    tag = machine_tag()
    assert len(tag) == 16
    assert all(char in "0123456789abcdef" for char in tag)
    machine_id = Path("/etc/machine-id")
    if machine_id.exists():
        assert machine_id.read_text().strip()[:8] not in tag


@pytest.mark.parametrize(
    "identity",
    [
        "",
        "0-1",
        "1-",
        "-1",
        "x-1",
        "1-2-3",
        "1 2",
        "01-2",
        "1-2-0123456789abcde",
        "1-2-0123456789ABCDEF",
    ],
)
def test_anything_else_is_no_owner(identity: str) -> None:
    assert Owner.from_identity(identity) is None


@pytest.mark.parametrize(
    ("load", "cores", "stretch"), [(0.3, 2, 1.0), (4.0, 2, 2.0), (9.0, 2, 4.5), (500.0, 2, 6.0)]
)
def test_the_load_stretch_is_the_load_per_core_from_1_to_6(
    monkeypatch: pytest.MonkeyPatch, load: float, cores: int, stretch: float
) -> None:
    monkeypatch.setattr(os, "getloadavg", lambda: (load, load, load))
    monkeypatch.setattr(os, "cpu_count", lambda: cores)
    assert load_stretch() == stretch


def test_without_a_load_average_the_stretch_is_1(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_load() -> tuple[float, float, float]:
        raise OSError("no load average")

    monkeypatch.setattr(os, "getloadavg", no_load)
    assert load_stretch() == 1.0
