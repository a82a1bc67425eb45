"""Throwaway users for the tests that run schemux, or its host's side, as another user:
made with ``useradd`` (a fresh home from /etc/skel), and afterwards their processes ended
and the user and its home removed."""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from tests.process_table import processes
from tests.support import missing


def cannot_make_users(*tools: str) -> str | None:
    """Why this run cannot make throwaway users and use ``tools`` with them, or None."""
    if os.geteuid() != 0:
        return "making throwaway users (useradd) needs root"
    for tool in ("useradd", "userdel", *tools):
        if shutil.which(tool) is None:
            return f"{tool} is not installed"
    return None


@contextmanager
def throwaway_user(shell: str, *tools: str) -> Iterator[pwd.struct_passwd]:
    """A new user whose login shell is ``shell``; the test is skipped when this run
    cannot make one or lacks one of ``tools``."""
    problem = cannot_make_users(*tools)
    if problem is not None:
        missing(problem)
    name = f"sx{uuid.uuid4().hex[:10]}"
    subprocess.run(
        ["useradd", "--create-home", "--shell", shell, "--comment", "schemux test", name],
        check=True, capture_output=True,
    )  # fmt: skip
    user = pwd.getpwnam(name)
    try:
        yield user
    finally:
        end_processes_of(user.pw_uid)
        removed = subprocess.run(
            ["userdel", "--remove", name], capture_output=True, text=True, check=False
        )
        assert getpwnam_or_none(name) is None, f"userdel {name}: {removed.stderr}"


def user_processes(uid: int) -> list[int]:
    return [process.pid for process in processes() if process.uid() == uid]


def end_processes_of(uid: int) -> None:
    """SIGKILL to every process of ``uid`` (only ever a throwaway user's), until none is
    left: userdel refuses a user that still runs one."""
    deadline = time.monotonic() + 5
    while (left := user_processes(uid)) and time.monotonic() < deadline:
        for pid in left:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.05)


def getpwnam_or_none(name: str) -> pwd.struct_passwd | None:
    try:
        return pwd.getpwnam(name)
    except KeyError:
        return None
