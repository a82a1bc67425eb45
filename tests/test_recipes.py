"""The recipes the server's instructions give, each driven as they say through the
in-memory MCP client against real tmux: a Python REPL answered in 4 calls (and as a
program in 1), a 20-step build followed with read_program, a failed command's and a
failed program's cause found; and the tools the descriptions of send_keys and
wait_for_text send an agent to are served."""

from __future__ import annotations

import re
import uuid

import pytest
from mcp import Client

from tests.generated_data import TOOL_DOCUMENTS
from tests.support import call, new_pane, tmux, wait_until

pytestmark = pytest.mark.anyio


async def test_the_instructions_give_the_recipes(memory_client: Client) -> None:
    guide = memory_client.instructions or ""
    assert "Recipes:\n- Answer a REPL in 4 calls: capture_since" in guide
    assert "- Follow a build: start_program, then read_program" in guide
    assert "- Why a command failed: run_command's exit_status and output" in guide
    assert (
        'run_program argv ["python3", "-i", "-q"] with input "6*7\\n" and separateStderr' in guide
    )


async def test_the_tools_send_keys_and_wait_for_text_name_are_served(
    memory_client: Client,
) -> None:
    listed = {tool.name: tool for tool in (await memory_client.list_tools()).tools}
    for name in ("send_keys", "wait_for_text"):
        description = listed[name].description or ""
        named = set(re.findall(r"``([a-z_]+)``", description))
        tools = named & set(TOOL_DOCUMENTS)  # codegen's lint refuses any other name
        assert tools, description
        assert tools <= set(listed), f"{name} names unserved tools: {tools - set(listed)}"


async def test_answer_a_python_repl_in_four_calls(memory_client: Client, tmux_socket: str) -> None:
    pane = new_pane(tmux_socket, command="env -u PYTHONSTARTUP python3 -q -i")
    wait_until(lambda: ">>>" in tmux(tmux_socket, "capture-pane", "-p", "-t", pane.pane_id))
    # the line the instructions give, on a channel of this test's own
    guide = memory_client.instructions or ""
    (given,) = re.findall(r"ends by signalling, in Python `([^`]+)`", guide)
    channel = f"answer-{uuid.uuid4().hex[:8]}"
    line = given.replace("answer-1", channel)
    assert channel in line

    first = await call(memory_client, "capture_since", pane_id=pane.pane_id)  # 1
    await call(memory_client, "send_keys", keys=line, pane_id=pane.pane_id)  # 2
    await call(memory_client, "wait_for_channel", channel=channel, timeout=10)  # 3
    answer = await call(memory_client, "capture_since", cursor=first["cursor"])  # 4

    assert answer["lines"][:2] == [f">>> {line}", "42"]


async def test_a_repl_as_a_program_in_one_call(memory_client: Client) -> None:
    result = await call(
        memory_client,
        "run_program",
        argv=["python3", "-i", "-q"],
        input="6*7\n",
        separateStderr=True,
    )
    assert result["exitStatus"] == 0
    assert result["output"].split() == ["42"]


async def test_follow_a_20_step_build_with_read_program(memory_client: Client) -> None:
    script = 'for i in $(seq 1 20); do echo "step $i/20"; sleep 0.1; done; echo built'
    started = await call(memory_client, "start_program", argv=["sh", "-c", script])
    texts: list[str] = []
    cursor = None
    while True:
        arguments = {"programId": started["programId"], "timeoutMs": 10_000}
        if cursor is not None:
            arguments["cursor"] = cursor
        read = await call(memory_client, "read_program", **arguments)
        texts.append(read["text"])
        cursor = read["cursor"]
        if read["ended"]:
            break
    assert "".join(texts).split("\n") == [f"step {i}/20" for i in range(1, 21)] + ["built", ""]
    assert read["outcome"] == "completed"
    assert read["exitStatus"] == 0
    assert len(texts) <= 22, texts  # at most one read per line written, and the end
    assert all(texts[:-1])
    await call(memory_client, "stop_program", programId=started["programId"])


async def test_why_a_command_failed(memory_client: Client, tmux_socket: str) -> None:
    pane = new_pane(tmux_socket)
    result = await call(
        memory_client, "run_command", command="ls /no/such/place", pane_id=pane.pane_id
    )
    assert result["exit_status"] == 2
    assert len(result["output"]) == 1
    assert "/no/such/place" in result["output"][0]
    assert "No such file or directory" in result["output"][0]


async def test_why_a_program_failed(memory_client: Client) -> None:
    result = await call(
        memory_client,
        "run_program",
        argv=["sh", "-c", "echo working; echo 'fatal: no config' >&2; exit 3"],
        separateStderr=True,
    )
    assert result["exitStatus"] == 3
    assert "working" in result["output"]
    assert "fatal: no config" in result["stderr"]
