"""/proc read once for every module (schemux.processes), and the owner marks of both spellings."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from schemux.processes import (
    Owner,
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
        assert stat.state in ("R", "S")  # running until it sleeps
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


def test_both_spellings_of_an_owner_name_the_same_process() -> None:
    owner = this_process()
    assert owner == Owner(os.getpid(), read_stat(os.getpid()).start_ticks)
    assert owner.identity == f"{owner.pid}-{owner.start_ticks}"
    assert owner.mark == f"A {owner.pid} {owner.start_ticks}"
    assert Owner.from_identity(owner.identity) == owner
    assert Owner.from_value(f"if -F 0 '{owner.mark}'") == owner
    assert owner.alive()


@pytest.mark.parametrize("identity", ["", "0-1", "1-", "-1", "x-1", "1-2-3", "1 2", "01-2"])
def test_anything_else_is_no_owner(identity: str) -> None:
    assert Owner.from_identity(identity) is None
