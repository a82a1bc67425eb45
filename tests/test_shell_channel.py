"""The pipes between run_command calls and a shell's hooks (``schemux.shell.channel``),
with a hook played by a thread that does what the hooks do: open this process's pipes
through ``/proc``, write its line, read until its nonce comes back. The shells' own hooks
run in tests/test_shell_integration.py and tests/test_shell_matrix.py."""

from __future__ import annotations

import asyncio
import os
import random
import time
from pathlib import Path

import pytest

from schemux.hooks import HookedShell, armed_directory
from schemux.shell.channel import HookChannels, remove_abandoned_armed_files
from schemux.system.runtime_identity import own_identity
from tests.support import armed_by_a_killed_owner

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the channel reads its pipe through asyncio's add_reader


@pytest.fixture
def armed(tmp_path: Path) -> Path:
    directory = tmp_path / "armed"
    directory.mkdir(mode=0o700)
    return directory / "4242"


def hook(armed: Path, message: str) -> str:
    """What a shell's hook does: its line to the armed owner, then the first answer
    that carries its nonce (fields[1])."""
    owner, to, answers, _ = armed.read_text().split()
    with open(f"/proc/{owner}/fd/{to}", "w") as pipe:
        pipe.write(message + "\n")
    nonce = message.split()[1]
    try:
        with open(f"/proc/{owner}/fd/{answers}") as pipe:
            while True:
                answer = pipe.readline()
                if answer in ("", f"{nonce}\n"):  # its nonce, or the pipe's end
                    return answer.strip()
    except FileNotFoundError:  # the pipe was closed before it was opened: gone too
        return ""


async def test_a_line_to_an_armed_call_waits_for_its_answer(armed: Path) -> None:
    channels = HookChannels()
    channel = channels.channel(armed)
    channel.arm()
    hooked = asyncio.ensure_future(asyncio.to_thread(hook, armed, "C 17"))
    assert await channel.message(5) == "C 17"
    await asyncio.sleep(0.05)
    assert not hooked.done()  # held while the call reads the pane
    channel.answer("C 17")
    assert await asyncio.wait_for(hooked, 5) == "17"
    channels.close()


async def test_a_line_when_no_call_is_armed_is_answered_at_once(armed: Path) -> None:
    """A hook that read the armed file just before the call removed it goes on."""
    channels = HookChannels()
    channel = channels.channel(armed)
    channel.arm()
    mark = armed.read_text()
    channel.disarm()
    assert not armed.exists()
    armed.write_text(mark)  # as the hook read it a moment before
    assert await asyncio.wait_for(asyncio.to_thread(hook, armed, "D 9 0 1 -"), 5) == "9"
    assert await channel.message(0.05) is None
    channels.close()


async def test_no_line_is_lost_to_a_wait_that_times_out(armed: Path) -> None:
    """Lines that arrive as a wait for one ends are kept for the next wait."""
    channels = HookChannels()
    channel = channels.channel(armed)
    channel.arm()
    owner, to, _, _ = armed.read_text().split()

    def write_lines() -> None:
        with open(f"/proc/{owner}/fd/{to}", "w", buffering=1) as pipe:
            for number in range(200):
                pipe.write(f"C {number}\n")
                time.sleep(random.choice((0, 0.0002, 0.001)))

    writing = asyncio.ensure_future(asyncio.to_thread(write_lines))
    received: list[str] = []
    while len(received) < 200:
        line = await channel.message(0.0005)
        if line is not None:
            received.append(line)
        assert len(received) == 200 or not writing.done() or line is not None
    assert received == [f"C {number}" for number in range(200)]
    await writing
    channels.close()


async def test_disarming_answers_what_the_call_left_and_removes_only_its_own_file(
    armed: Path,
) -> None:
    channels = HookChannels()
    channel = channels.channel(armed)
    channel.arm()
    hooked = asyncio.ensure_future(asyncio.to_thread(hook, armed, "C 5"))
    await asyncio.sleep(0.1)  # its line is in, not taken
    channel.disarm()
    assert await asyncio.wait_for(hooked, 5) == "5"
    assert not armed.exists()
    channel.arm()
    armed.write_text("another call's file\n")  # another process armed the shell since
    channel.disarm()
    assert armed.read_text() == "another call's file\n"
    channels.close()


async def test_a_hook_waiting_when_the_channel_closes_goes_on(armed: Path) -> None:
    """Its answer never written (the call took its line), it sees the pipe's end: as
    when the process ends."""
    channels = HookChannels()
    channel = channels.channel(armed)
    channel.arm()
    hooked = asyncio.ensure_future(asyncio.to_thread(hook, armed, "C 3"))
    assert await channel.message(5) == "C 3"
    channels.close()
    assert await asyncio.wait_for(hooked, 5) == ""
    assert not armed.exists()


async def test_the_channel_of_a_shell_is_the_same_from_call_to_call(armed: Path) -> None:
    """A hook may open the answers' pipe after the call it told has ended: the pipes of
    one shell are never closed between calls, so it can never open the next call's."""
    channels = HookChannels()
    first = channels.channel(armed)
    first.arm()
    mark = armed.read_text()
    first.disarm()
    second = channels.channel(armed)
    second.arm()
    assert second is first
    assert armed.read_text() == mark
    channels.close()


async def test_an_arm_links_the_mark_written_once_and_writes_into_no_one_elses_file(
    armed: Path,
) -> None:
    """Each arm is a hard link to the mark the channel wrote at its first (a new file a
    call took 0.2-0.4 ms on an ext4 disk); an armed file another process left is
    replaced, its own file untouched; closing leaves no file of the channel's."""
    channels = HookChannels()
    channel = channels.channel(armed)
    channel.arm()
    mark = armed.read_text()
    assert os.stat(armed).st_nlink == 2  # the armed file and the channel's mark
    channel.disarm()
    marks = list(armed.parent.iterdir())
    assert len(marks) == 1
    assert marks[0].read_text() == mark
    armed.write_text("another process's armed file\n")
    theirs = armed.with_name("theirs")
    os.link(armed, theirs)  # their file, as they see it
    channel.arm()
    assert armed.read_text() == mark
    assert theirs.read_text() == "another process's armed file\n"
    theirs.unlink()
    channel.disarm()
    channel.arm()
    assert armed.read_text() == mark
    channels.close()
    assert list(armed.parent.iterdir()) == []


async def test_two_channels_of_one_process_to_one_shell_each_arm_it_for_themselves(
    armed: Path,
) -> None:
    """Two host names reaching one tmux server make two channels to its shells in one
    process: each call's arm names its own channel's pipes (failed before: both linked
    the one mark the later channel wrote, so the first's calls heard nothing)."""
    first, second = HookChannels(), HookChannels()
    one, other = first.channel(armed), second.channel(armed)
    one.arm()
    marked_one = armed.read_text()
    one.disarm()
    other.arm()
    assert armed.read_text() != marked_one
    other.disarm()
    one.arm()
    assert armed.read_text() == marked_one
    hooked = asyncio.ensure_future(asyncio.to_thread(hook, armed, "C 11"))
    assert await one.message(5) == "C 11"
    one.answer("C 11")
    assert await asyncio.wait_for(hooked, 5) == "11"
    first.close()
    second.close()
    assert list(armed.parent.iterdir()) == []


async def test_where_no_hard_link_can_be_made_the_armed_file_is_written_whole(
    armed: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file system without hard links (EPERM) still arms the shell, as before links."""

    def refuse(*_: object) -> None:
        raise PermissionError(1, "Operation not permitted")

    channels = HookChannels()
    channel = channels.channel(armed)
    monkeypatch.setattr(os, "link", refuse)
    channel.arm()
    owner, *_ = armed.read_text().split()
    assert owner == str(os.getpid())
    assert os.stat(armed).st_nlink == 1
    channel.disarm()
    assert not armed.exists()
    channels.close()


def test_a_directory_other_than_the_users_armed_directory_arms_nothing() -> None:
    """The hooks' report is a pane option a program in the pane can set: a directory it
    names is taken only in the form schemux makes."""
    directory = armed_directory({"TMUX_TMPDIR": "/tmp"})
    shell = HookedShell.parse(f"bash 123 1 - {directory}")
    assert shell is not None
    assert shell.armed == directory / "123"
    for forged in (
        "/etc",
        "relative/armed",
        f"{directory}/../../etc/armed",
        f"/tmp/schemux-shells-{os.getuid() + 1}/armed",
        f"{directory} extra",
    ):
        assert HookedShell.parse(f"bash 123 1 - {forged}") is None, forged
    assert HookedShell.parse("bash 123 1 -") is None  # hooks of an older schemux
    assert HookedShell.parse(f"bash -1 1 - {directory}") is None


def test_armed_files_of_killed_owners_are_removed(armed: Path) -> None:
    live = armed.with_name("77")
    live.write_text(f"{os.getpid()} 5 6 {own_identity()}\n")
    unknown = armed.with_name("78")
    unknown.write_text("not an armed file\n")
    assert remove_abandoned_armed_files(armed.parent) == []
    armed_by_a_killed_owner(armed)
    removed = remove_abandoned_armed_files(armed.parent)
    assert armed in removed
    assert len(removed) == 2
    assert sorted(path.name for path in armed.parent.iterdir()) == ["77", "78"]
    assert live.exists()
    assert unknown.exists()


async def test_what_waits_is_answered_and_tells_whether_the_command_ended(armed: Path) -> None:
    """A cancelled call answers the lines it did not take: an end among them means there
    is no command left to interrupt. Not armed, nothing is taken for a call."""
    channels = HookChannels()
    channel = channels.channel(armed)
    assert channel.answer_waiting() is False
    channel.arm()
    hooked = asyncio.ensure_future(asyncio.to_thread(hook, armed, "D 7 0 1 -"))
    await asyncio.sleep(0.1)  # the line has come, untaken
    assert channel.answer_waiting() is True
    assert await asyncio.wait_for(hooked, 5) == "7"
    assert channel.answer_waiting() is False
    channel.disarm()
    assert channel.answer_waiting() is False
    assert await channel.message(0.01) is None  # still not armed: no line is kept
    channels.close()
