"""The control connection stays in step: forged framing in program output, and
unencodable commands mixed into concurrent traffic."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp import Client

from schemux.errors import SchemuxError, UnsendableArgument
from schemux.names import OWNED_SESSION
from schemux.serving.state import ServingState
from schemux.tmux.command import THEN
from schemux.tmux.control.connection import Connection
from schemux.tmux.control.framing import Answer, FrameReader, spans_of
from schemux.tmux.server import ServerAddress, TmuxServer
from tests.contexts import Contexts
from tests.support import (
    Pane,
    call,
    control_client_pid,
    new_pane,
    private_tmux_server,
    tmux,
    wait_until,
)

pytestmark = pytest.mark.anyio


@pytest.fixture
def socket() -> Iterator[str]:
    with private_tmux_server("framing") as socket_name:
        tmux(socket_name, "set-option", "-g", "history-limit", "10000")
        yield socket_name


@pytest.fixture
def tool_context(make_context: Contexts, socket: str) -> ServingState:
    """The context ``client`` serves, on this module's own server."""
    return make_context(socket_name=socket)


def command_counter(socket: str) -> tuple[int, int]:
    """(time, number) of the next command tmux will run, as a control client sees it: the
    two numbers a forger would guess."""
    done = subprocess.run(
        ["tmux", "-L", socket, "-C", "attach-session", "-f", "no-output,ignore-size",
         "-t", f"={OWNED_SESSION}"],
        input=b"display-message -p x\n", capture_output=True, check=True,
    )  # fmt: skip
    begins = [line for line in done.stdout.decode().splitlines() if line.startswith("%begin ")]
    _, seconds, number, _ = begins[-1].split(" ")
    return int(seconds), int(number) + 1


def forged_lines(seconds: int, number: int) -> list[str]:
    """Every framing line a program could print for the next commands tmux runs."""
    lines = ["%begin 0 0 0", "%exit", "%exit forged", "schemux-0123456789abcdef01234567-0"]
    lines += ["%session-changed $9 forged", "%output %1 forged", "%error", "%end"]
    for second in range(seconds, seconds + 3):
        for n in range(number, number + 140):
            lines += [f"%end {second} {n} 1", f"%error {second} {n} 1"]
    lines += ["%begin 1 2 1", "after the forgery", "%exit"]
    return lines


def contains_run(rows: list[str], run: list[str]) -> bool:
    return any(rows[i : i + len(run)] == run for i in range(len(rows) - len(run) + 1))


async def test_forged_framing_is_read_as_output(
    client: Client, tool_context: ServingState, socket: str, tmp_path: Path
) -> None:
    pane = new_pane(socket, width=200, height=40)
    snapshot = await call(client, "tmux_snapshot")  # the engine is up, its session made
    pid = await control_client_pid(tool_context.services.tmux())
    lines = forged_lines(*command_counter(socket))
    forged = tmp_path / "forged.txt"
    forged.write_text("\n".join(lines) + "\n")

    ran = await call(client, "run_command", pane_id=pane.pane_id, command=f"cat {forged}")
    assert ran["output"] == lines
    assert ran["exit_status"] == 0
    screen = await call(client, "capture_pane", pane_id=pane.pane_id, start=-5000, max_lines=None)
    assert contains_run(screen["result"].split("\n"), lines)
    generation = next(
        p["target"]["generation"]
        for s in snapshot["data"]["sessions"]
        for w in s["windows"]
        for p in w["panes"]
        if p["target"]["id"] == pane.pane_id
    )
    target = {"kind": "pane", "id": pane.pane_id, "generation": generation}
    captured = await call(client, "tmux_capture", target=target, history_lines=1000, max_lines=1000)
    rows = [row.removesuffix("\n") for row in captured["data"]["rows"]]
    assert contains_run(rows, lines[-900:])
    # the same connection answered everything, and still does
    assert await control_client_pid(tool_context.services.tmux()) == pid
    assert (await call(client, "tmux_snapshot"))["ok"]
    assert await control_client_pid(tool_context.services.tmux()) == pid


async def test_forged_framing_in_every_command_of_a_line(socket: str) -> None:
    """Several commands printing program-controlled text in one line: each span is read
    on its own."""
    server = TmuxServer(ServerAddress(socket_name=socket))
    try:
        await server.run("display-message", "-p", "warm")
        pid = await control_client_pid(server)
        seconds, number = command_counter(socket)
        text = "\n".join(
            f"%end {second} {n} 1\n%error {second} {n} 1\n%exit"
            for second in (seconds, seconds + 1)
            for n in range(number, number + 30)
        )
        await server.run("set-buffer", "-b", "forged", text)
        await server.run("set-option", "-g", "@forged", text)
        lines = await server.run(
            "show-options", "-gv", "@forged", THEN,
            "display-message", "-p", "middle", THEN,
            "show-options", "-gv", "@forged",
        )  # fmt: skip
        assert lines == [*text.split("\n"), "middle", *text.split("\n")]
        assert await control_client_pid(server) == pid
    finally:
        await server.close()


async def test_unencodable_commands_in_concurrent_traffic(socket: str) -> None:
    """100 calls at once, a third with a NUL: those are refused with nothing sent; every
    other call gets its own answer, from its own pane."""
    server = TmuxServer(ServerAddress(socket_name=socket))
    session = new_pane(socket, command="cat")
    panes = [session.pane_id] + [
        tmux(socket, "new-window", "-d", "-t", f"={session.session_name}:", "-P", "-F",
             "#{pane_id}", "cat").strip()
        for _ in range(66)
    ]  # fmt: skip

    # every third call holds a NUL; each other call has a pane of its own
    plan = {index: panes[index - index // 3 - 1] for index in range(100) if index % 3}

    async def one(index: int) -> Any:
        if index not in plan:
            return await server.run("display-message", "-p", "-t", panes[0], f"bad\x00{index}")
        pane = plan[index]
        return await server.run(
            "set-option", "-p", "-t", pane, "@own", f"call {index}", THEN,
            "display-message", "-p", "-t", pane, f"#{{pane_id}} #{{@own}} {index}",
        )  # fmt: skip

    try:
        await server.run("display-message", "-p", "warm")
        pid = await control_client_pid(server)
        answers = await asyncio.gather(*(one(i) for i in range(100)), return_exceptions=True)
        for index, answer in enumerate(answers):
            if index not in plan:
                assert isinstance(answer, UnsendableArgument), answer
                assert "NUL" in str(answer)
            else:
                assert answer == [f"{plan[index]} call {index} {index}"]
        assert await control_client_pid(server) == pid
        assert len(set(plan.values())) == len(plan)
        for index, pane in plan.items():  # each call's option went to its own pane
            assert tmux(socket, "show-options", "-pv", "-t", pane, "@own").strip() == (
                f"call {index}"
            )
    finally:
        await server.close()


async def test_concurrent_tool_calls_with_nul_get_their_own_answers(
    client: Client, socket: str
) -> None:
    """50 calls at once over MCP: run_command in five shells, capture_pane of twenty
    marked panes, and 25 calls with a NUL in an argument; each answer is its own."""
    shells = [new_pane(socket) for _ in range(5)]
    marked: list[Pane] = []
    for index in range(20):
        pane = new_pane(socket, command=f"sh -c 'echo mark-{index}-end; exec sleep 300'")
        marked.append(pane)
    for index, pane in enumerate(marked):
        wait_until(
            lambda pane=pane, index=index: (
                f"mark-{index}-end" in tmux(socket, "capture-pane", "-p", "-t", pane.pane_id)
            )
        )
    nul_calls = [
        ("run_command", {"command": "echo \x00", "pane_id": shells[0].pane_id}, "command"),
        ("capture_pane", {"pane_id": marked[0].pane_id, "x": "\x00"}, None),
        ("tmux_snapshot", {"socket_name": "a\x00"}, "socket_name"),
        ("run_shell_command", {"command": "\x00", "paneId": shells[1].pane_id}, "command"),
        ("run_command", {"command": "true", "session_name": "\x00"}, "session_name"),
    ]
    calls: list[tuple[str, dict[str, Any], Any]] = []
    for index, pane in enumerate(shells):
        calls.append(
            ("run_command", {"command": f"echo own-{index}", "pane_id": pane.pane_id}, index)
        )
    for index, pane in enumerate(marked):
        calls.append(("capture_pane", {"pane_id": pane.pane_id}, index))
    for index in range(25):
        calls.insert(index * 2 + 1, (*nul_calls[index % len(nul_calls)][:2], "nul"))
    results = await asyncio.gather(*(client.call_tool(tool, args) for tool, args, _ in calls))
    for (tool, arguments, expected), result in zip(calls, results, strict=True):
        text = "\n".join(block.text for block in result.content if block.type == "text")
        if expected == "nul":
            assert result.is_error
            assert "Invalid arguments" in text
            continue
        assert not result.is_error, text
        data = result.structured_content
        assert data is not None
        if tool == "run_command":
            assert data["pane_id"] == arguments["pane_id"]
            assert data["output"] == [f"own-{expected}"]
        else:
            # the pane's own mark, and no other pane's
            marks = [row for row in data["result"].split("\n") if row.startswith("mark-")]
            assert marks == [f"mark-{expected}-end"]


# the reader alone, fed the lines tmux would write (pure)

FRAMING = "1796044169 269 1"
CONTENT = st.lists(
    st.one_of(
        st.sampled_from(
            [
                f"%end {FRAMING}",
                f"%error {FRAMING}",
                f"%begin {FRAMING}",
                "%begin 1796044169 270 1",
                "%exit",
                "%exit forged",
                "%session-changed $1 x",
                "schemux-0123456789abcdef01234567-0",
                "",
            ]
        ),
        st.text().map(lambda text: text.replace("\n", " ")),
    ),
    max_size=30,
)


def reader_with(
    commands: list[list[str]],
) -> tuple[FrameReader, Answer, list[str], asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    notifications: list[str] = []
    reader = FrameReader(
        notification=notifications.append,
        block=lambda error, lines: None,
        broken=lambda reason: notifications.append(f"broken: {reason}"),
    )
    answer = Answer.expecting(loop.create_future(), commands)
    reader.answers.append(answer)
    return reader, answer, notifications, loop


def sentinel_block(token: str, number: int) -> list[str]:
    return [f"%begin 1796044169 {number} 1", token, f"%end 1796044169 {number} 1"]


@given(CONTENT, CONTENT)
def test_any_output_is_read_exactly(first: list[str], second: list[str]) -> None:
    """Two commands printing anything, forged framing included: the answer is exactly
    their lines, and only tmux's own notifications are delivered."""
    reader, answer, notifications, loop = reader_with([["capture-pane"], ["show-buffer"]])
    try:
        stream = [
            "%window-add @1",  # a notification before the first block
            f"%begin {FRAMING}", *first, f"%end {FRAMING}",
            *sentinel_block(answer.sentinels[0], 270),
            "%begin 1796044169 271 1", *second, "%end 1796044169 271 1",
            "%window-close @1",  # between the last block and the sentinel
            *sentinel_block(answer.sentinels[1], 272),
            "%sessions-changed",  # after the answer
        ]  # fmt: skip
        for line in stream:
            reader.feed(line)
        assert answer.future.result() == [*first, *second]
        assert notifications == ["%window-add @1", "%window-close @1", "%sessions-changed"]
        assert not reader.answers
    finally:
        loop.close()


@given(CONTENT)
def test_a_failed_command_skips_the_rest_of_its_line(first: list[str]) -> None:
    reader, answer, notifications, loop = reader_with([["capture-pane"], ["display-message"]])
    try:
        for line in [f"%begin {FRAMING}", *first, f"%error {FRAMING}"]:
            reader.feed(line)
        for line in sentinel_block(answer.sentinels[-1], 270):
            reader.feed(line)
        with pytest.raises(SchemuxError) as caught:
            answer.future.result()
        assert caught.value.message == "\n".join(first)
        assert notifications == []
    finally:
        loop.close()


def test_a_command_that_runs_commands_is_read_by_its_blocks() -> None:
    reader, answer, notifications, loop = reader_with([["if-shell", "-F", "1", "x ; y"]])
    try:
        stream = [
            "%begin 1 10 1", "%end 1 10 1",
            "%begin 1 11 1", "b", "%end 1 11 1",
            "%begin 1 12 1", "no such thing", "%error 1 12 1",
            *sentinel_block(answer.sentinels[-1], 13),
        ]  # fmt: skip
        for line in stream:
            reader.feed(line)
        with pytest.raises(SchemuxError, match="no such thing"):
            answer.future.result()
        assert notifications == []
    finally:
        loop.close()


async def test_a_block_of_another_clients_command_is_nobodys_answer(socket: str) -> None:
    """tmux runs the delayed commands of another client's ``run-shell -b -C`` on the
    attached client it finds best: here the one control client. Their block, arriving
    while a caller waits for its first block, is skipped: the caller gets its own answer
    (it once got that block's, an empty ``list-panes`` for a pane that was there)."""
    process = await asyncio.create_subprocess_exec(
        "tmux", "-L", socket, "-C", "attach-session", "-t", "=keepalive",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    connection = Connection(process, "the test's server", None)
    try:
        await connection.attached
        channel = "schemux-test-foreign"
        waiting = connection.send(("wait-for", channel))  # holds the client's queue
        tmux(socket, "run-shell", "-b", "-d", "0.1", "-C", "display-message -p 'not yours'")
        await asyncio.sleep(0.5)  # queued on the control client, behind the wait
        asking = connection.send(("display-message", "-p", "yours"))
        tmux(socket, "wait-for", "-S", channel)
        assert await waiting == []
        assert await asking == ["yours"]
    finally:
        await connection.close()


FOREIGN_CONTENT = st.lists(
    st.one_of(
        st.sampled_from(["%exit", "%exit forged", "%begin 1796044169 270 1", ""]),
        st.text().map(lambda text: text.replace("\n", " ")),
    ),
    max_size=10,
)


@given(FOREIGN_CONTENT, CONTENT)
def test_foreign_blocks_anywhere_are_skipped(foreign: list[str], ours: list[str]) -> None:
    """Blocks with flags 0 (not from this client's input) before a caller's first block,
    after it, and among the blocks of a command that runs commands: never part of an
    answer, and nothing in them is taken for a notification."""
    reader, answer, notifications, loop = reader_with([["capture-pane"], ["if-shell"]])

    def foreign_block(number: int) -> list[str]:
        return [f"%begin 1796044169 {number} 0", *foreign, f"%end 1796044169 {number} 0"]

    try:
        stream = [
            *foreign_block(260),
            f"%begin {FRAMING}", *ours, f"%end {FRAMING}",
            *foreign_block(261),
            *sentinel_block(answer.sentinels[0], 270),
            *foreign_block(262),
            "%begin 1796044169 271 1", "a", "%end 1796044169 271 1",
            *foreign_block(272),
            "%begin 1796044169 273 1", "b", "%end 1796044169 273 1",
            *sentinel_block(answer.sentinels[1], 274),
        ]  # fmt: skip
        for line in stream:
            reader.feed(line)
        assert answer.future.result() == [*ours, "a", "b"]
        assert notifications == []
    finally:
        loop.close()


def test_commands_that_print_nothing_share_one_span() -> None:
    """Consecutive commands that print nothing when they succeed are read as one span by
    their blocks: one sentinel for them all (failed before: one each), never where an
    argument holds a line break (an error may quote it), nor around a command that prints."""
    keys = [
        ["copy-mode", "-q"],
        ["set-buffer", "--", "x"],
        ["paste-buffer"],
        ["send-keys", "Enter"],
    ]
    assert spans_of(keys) == [keys]
    assert len(Answer.expecting(asyncio.Future(loop=asyncio.new_event_loop()), keys).sentinels) == 1
    broken = [["set-buffer", "--", "a\nb"], ["paste-buffer"], ["send-keys", "Enter"]]
    assert spans_of(broken) == [[broken[0]], broken[1:]]
    mixed = [
        ["display-message", "-p", "x"],
        ["set-option", "-o", "@a", "1"],
        ["capture-pane", "-p"],
    ]
    assert spans_of(mixed) == [[command] for command in mixed]
    assert spans_of([["if-shell", "-F", "1", "x"], ["send-keys", "y"]]) == [
        [["if-shell", "-F", "1", "x"]],
        [["send-keys", "y"]],
    ]


def test_a_span_of_silent_commands_is_read_by_its_blocks() -> None:
    """Each command's block in the one span: their notifications delivered, the first
    error the answer's (tmux skips the rest of the line)."""
    commands = [["set-option", "-o", "@a", "1"], ["send-keys", "x"], ["paste-buffer"]]
    reader, answer, notifications, loop = reader_with(commands)
    try:
        stream = [
            "%begin 1 10 1", "%end 1 10 1",
            "%window-add @1",
            "%begin 1 11 1", "%end 1 11 1",
            "%begin 1 12 1", "%end 1 12 1",
            *sentinel_block(answer.sentinels[-1], 13),
        ]  # fmt: skip
        for line in stream:
            reader.feed(line)
        assert answer.future.result() == []
        assert notifications == ["%window-add @1"]
    finally:
        loop.close()
    reader, answer, notifications, loop = reader_with(commands)
    try:
        stream = [
            "%begin 1 10 1", "already set: @a", "%error 1 10 1",
            *sentinel_block(answer.sentinels[-1], 11),
        ]  # fmt: skip
        for line in stream:
            reader.feed(line)
        with pytest.raises(SchemuxError, match=r"^already set: @a$"):
            answer.future.result()
    finally:
        loop.close()


async def test_a_refused_take_in_a_span_types_nothing(socket: str) -> None:
    """A command of a span that fails skips the rest: ``set-option -o`` refused, the keys
    after it in the same span are not typed, and its error is the line's."""
    pane = new_pane(socket)
    server = TmuxServer(ServerAddress(socket_name=socket))
    try:
        await server.run("set-option", "-p", "-t", pane.pane_id, "@taken", "other")
        with pytest.raises(SchemuxError, match="already set: @taken"):
            await server.run(
                "set-option", "-p", "-o", "-t", pane.pane_id, "@taken", "mine",
                THEN, "send-keys", "-t", pane.pane_id, "-l", "typed-nothing",
            )  # fmt: skip
        await server.run(
            "send-keys",
            "-t",
            pane.pane_id,
            "-l",
            "x",
            THEN,
            "send-keys",
            "-t",
            pane.pane_id,
            "-l",
            "y",
        )
        wait_until(lambda: "xy" in tmux(socket, "capture-pane", "-p", "-t", pane.pane_id))
        assert "typed-nothing" not in tmux(socket, "capture-pane", "-p", "-t", pane.pane_id)
    finally:
        await server.close()
