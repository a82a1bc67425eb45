"""The audit log: a record of every tool call through real MCP clients (in memory and
over stdio), what it keeps of hostile and huge arguments, redaction, rotation, files it
cannot write, ``traceparent``, and ``schemux audit``'s reading of it."""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import pwd
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, cast

import anyio
import pytest
from mcp import Client
from mcp_types import Implementation, RequestParamsMeta

from schemux.audit.log import (
    BACKUPS,
    LIMITS,
    AuditFile,
    CallRecord,
    recorded_arguments,
    rotated,
    traceparent,
)
from schemux.audit.reader import LogTail, follow_lines, line, parse_since, visible
from schemux.config import (
    ENV_AUDIT_LOG,
    ENV_AUDIT_REDACT,
    ENV_NO_AUDIT,
    AuditSettings,
    Settings,
    audit_settings,
)
from schemux.domain.call import Call
from schemux.errors import ConfigError
from schemux.generated.argument_facts import REDACTED_ARGUMENTS
from schemux.generated.bindings import BINDINGS
from schemux.host_settings import SshTarget
from schemux.serving.binding import ToolBinding
from schemux.serving.server import build_server
from schemux.serving.state import ServingState
from tests.conftest import STDIO_WAIT_CEILING, stdio_parameters
from tests.contexts import client_of
from tests.support import (
    call,
    missing,
    new_pane,
    remove_server,
    tagged_socket_name,
    tmux,
    wait_until,
)
from tests.test_errors import bound

CLIENT = Implementation(name="audit-test", version="9.9")
OTHER_UID = 54321  # a file given to another user: no process of this run has this uid
TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
HOSTILE = [
    "line one\nline two\r\n",
    "\x1b[31mred\x1b[0m\x07\x08\x7f\x9b",
    "separators \u2028 \u2029 and \ufeff",
    '"}\n{"tool": "forged", "outcome": "ok"}',
    "\udcff lone surrogate",
]


def owner_of(uid: int) -> str:
    """How schemux names the owner ``uid``."""
    try:
        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except KeyError:
        return f"uid {uid}"


def settings_for(socket: str, log: Path, **audit: Any) -> Settings:
    return Settings(
        socket_name=socket, wait_ceiling=STDIO_WAIT_CEILING, audit=AuditSettings(log, **audit)
    )


@asynccontextmanager
async def audited(
    socket: str, log: Path, bindings: dict[str, ToolBinding] | None = None, **audit: Any
) -> AsyncIterator[Client]:
    """schemux in this process, auditing into ``log``; the audit is written out when
    this ends (the context closes, as on every exit path)."""
    context = ServingState(settings_for(socket, log, **audit))
    try:
        server = build_server(context, BINDINGS if bindings is None else bindings)
        async with Client(server, client_info=CLIENT) as client:
            yield client
    finally:
        await context.close()


def records(log: Path) -> list[dict[str, Any]]:
    """Every line of ``log``: each one JSON object on one line, ASCII only."""
    data = log.read_bytes()
    assert data.endswith(b"\n")
    found = []
    for raw in data.split(b"\n")[:-1]:
        raw.decode("ascii")
        record = json.loads(raw)
        assert isinstance(record, dict)
        found.append(record)
    return found


def text_bytes(result: Any) -> int:
    return sum(len(block.text.encode()) for block in result.content if block.type == "text")


# ---- every tool, through the in-memory client


@pytest.fixture
def killable_server() -> Iterator[str]:
    """A tmux server of its own, for kill_server to kill (removed if it did not)."""
    name = tagged_socket_name("audit-kill")
    tmux(name, "-f", "/dev/null", "new-session", "-d", "cat")
    try:
        yield name
    finally:
        remove_server(name)


async def test_every_tool_is_recorded(
    anyio_backend: str, main_tmux_socket: str, tmp_path: Path, killable_server: str
) -> None:
    pane = new_pane(main_tmux_socket)
    log = tmp_path / "audit.jsonl"
    made: list[tuple[str, dict[str, Any], Any]] = []
    async with audited(main_tmux_socket, log) as client:

        async def made_call(tool: str, **arguments: Any) -> dict[str, Any]:
            result = await client.call_tool(tool, arguments)
            assert not result.is_error, result.content
            made.append((tool, arguments, result))
            assert result.structured_content is not None
            return dict(result.structured_content)

        started = await made_call("start_program", argv=["sleep", "30"])
        program = started["programId"]
        await made_call("read_program", programId=program, timeoutMs=0)
        await made_call("stop_program", programId=program)
        await made_call("run_program", argv=["echo", "ran"])
        await made_call("run_command", command="echo audit-marker", pane_id=pane.pane_id)
        await made_call("run_shell_command", command="echo shell", paneId=pane.pane_id)
        await made_call("adopt_pane", pane_id=pane.pane_id)
        # the marker is on the screen already, not new: the wait runs to its timeout
        await made_call(
            "wait_for_text", patterns=["audit-marker"], pane_id=pane.pane_id, timeout=0.2
        )
        await made_call("send_keys", keys="# typed", pane_id=pane.pane_id, enter=False)
        await made_call("capture_pane", pane_id=pane.pane_id)
        await made_call("tmux_capture", target=pane.reference())
        await made_call("tmux_snapshot")
        await made_call("capture_since", pane_id=pane.pane_id)
        await made_call("snapshot_pane", pane_id=pane.pane_id)
        await made_call("send_keys_batch", operations=[{"keys": "# a", "pane_id": pane.pane_id}])
        await made_call("signal_channel", channel=f"audit-{pane.session_name}")
        await made_call("wait_for_channel", channel=f"audit-{pane.session_name}", timeout=5)
        await made_call("run_command_on_hosts", command="echo fanned")  # the one host
        await made_call("list_sessions", filters={"session_id": pane.session_id})
        await made_call("list_windows", session_id=pane.session_id)
        await made_call("list_panes", window_id=pane.window_id)
        await made_call("get_server_info")
        await made_call("list_servers")
        await made_call("picture_pane", pane_id=pane.pane_id, format="svg")
        await made_call("get_session_info", session_id=pane.session_id)
        await made_call("get_window_info", window_id=pane.window_id)
        await made_call("get_pane_info", pane_id=pane.pane_id)
        await made_call("find_pane_by_position", corner="top-left", window_id=pane.window_id)
        await made_call("display_message", format_string="#{pane_width}", pane_id=pane.pane_id)
        await made_call("show_option", option="remain-on-exit", scope="pane", target=pane.pane_id)
        await made_call("show_environment", session_id=pane.session_id)
        await made_call("show_hooks", scope="pane", target=pane.pane_id)
        await made_call("show_hook", hook_name="pane-exited", scope="pane", target=pane.pane_id)
        await made_call("search_panes", pattern="audit-marker", session_id=pane.session_id)
        session = await made_call("create_session", session_name=f"audit-{pane.session_name}")
        await made_call("create_window", session_id=session["session_id"])
        split = await made_call("split_window", pane_id=pane.pane_id, shell="exec sleep 30")
        await made_call("rename_session", session_id=session["session_id"], new_name="audited")
        await made_call("rename_window", window_id=pane.window_id, new_name="audited")
        await made_call("select_window", window_id=pane.window_id)
        await made_call("select_pane", pane_id=pane.pane_id)
        await made_call("select_layout", window_id=pane.window_id, layout="tiled")
        await made_call("resize_pane", pane_id=pane.pane_id, zoom=False)
        await made_call("resize_window", window_id=pane.window_id, width=100)
        await made_call("move_window", session_id=session["session_id"], destination_index="5")
        await made_call("swap_pane", source_pane_id=pane.pane_id, target_pane_id=split["pane_id"])
        await made_call("set_pane_title", pane_id=pane.pane_id, title="audited")
        await made_call("respawn_pane", pane_id=pane.pane_id)
        await made_call("enter_copy_mode", pane_id=pane.pane_id)
        await made_call("exit_copy_mode", pane_id=pane.pane_id)
        await made_call("clear_pane", pane_id=pane.pane_id)
        await made_call("set_option", option="@audit", value="1", scope="pane", target=pane.pane_id)
        await made_call("set_environment", name="AUDIT_SET", value="1", session_id=pane.session_id)
        staged = await made_call("load_buffer", content="# staged", logical_name="audit")
        await made_call("show_buffer", buffer_name=staged["buffer_name"])
        await made_call("paste_buffer", buffer_name=staged["buffer_name"], pane_id=pane.pane_id)
        await made_call("delete_buffer", buffer_name=staged["buffer_name"])
        await made_call("paste_text", text="# pasted", pane_id=pane.pane_id)
        await made_call("pipe_pane", pane_id=pane.pane_id, output_path="/dev/null")
        await made_call("pipe_pane", pane_id=pane.pane_id)
        operations = [{"tool": "get_pane_info", "arguments": {"pane_id": pane.pane_id}}]
        await made_call("call_read_tools_batch", operations=operations)
        await made_call("kill_pane", pane_id=split["pane_id"])
        window = await made_call("create_window", session_id=session["session_id"])
        await made_call("kill_window", window_id=window["window_id"])
        await made_call("kill_session", session_id=session["session_id"])
        await made_call("kill_server", socket_name=killable_server)
    tmux(main_tmux_socket, "kill-session", "-t", session["session_id"], check=False)
    assert {tool for tool, _, _ in made} == set(BINDINGS)  # a new tool needs its line here
    found = records(log)
    assert [record["tool"] for record in found] == [tool for tool, _, _ in made]
    sessions = {record["session"] for record in found}
    assert len(sessions) == 1  # one client, one MCP session
    for record, (_, arguments, result) in zip(found, made, strict=True):
        assert record["outcome"] == "ok", record
        assert record["arguments"] == arguments
        assert record["client"] == {"name": "audit-test", "version": "9.9"}
        assert record["host"] == "local"
        assert record["pid"] == os.getpid()
        assert record["bytes"] == text_bytes(result)
        assert record["duration_ms"] >= 0
        assert "traceparent" not in record
        when = datetime.fromisoformat(record["time"])
        assert abs(datetime.now().astimezone() - when) < timedelta(minutes=5)
        if {"paneId", "pane_id", "target", "operations"} & set(arguments):
            assert record["pane"] == arguments.get("pane_id", pane.pane_id), record
    by_tool = {record["tool"]: record for record in found}
    for tool in ("start_program", "read_program", "stop_program"):
        assert by_tool[tool]["program"] == program
        assert by_tool[tool]["pane"] == started["paneId"]  # the program's own pane
    assert by_tool["run_program"]["program"].startswith("p")
    for tool in ("tmux_snapshot", "signal_channel", "wait_for_channel", "list_sessions"):
        assert "pane" not in by_tool[tool]
    assert by_tool["find_pane_by_position"]["pane"] == pane.pane_id  # the pane it found


async def test_a_call_without_a_target_records_the_pane_it_resolved(
    anyio_backend: str, main_tmux_socket: str, tmp_path: Path
) -> None:
    pane = new_pane(main_tmux_socket)
    log = tmp_path / "audit.jsonl"
    async with audited(main_tmux_socket, log) as client:
        await call(client, "run_command", command="true", session_name=pane.session_name)
    [record] = records(log)
    assert record["pane"] == pane.pane_id
    assert record["arguments"] == {"command": "true", "session_name": pane.session_name}


async def test_refusals_and_failures_record_their_code(
    anyio_backend: str, main_tmux_socket: str, tmp_path: Path
) -> None:
    log = tmp_path / "audit.jsonl"
    pane = new_pane(main_tmux_socket)
    stale = {**pane.reference(), "generation": "0" * 32}

    async def broken(context: Call, arguments: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError("boom")

    bindings = dict(BINDINGS)
    bindings["tmux_snapshot"] = bound("tmux_snapshot", broken)
    async with audited(main_tmux_socket, log, bindings=bindings) as client:
        refusals: list[tuple[str, dict[str, Any]]] = [
            ("run_command", {"command": 5}),  # against the inputSchema
            ("run_command", {"command": "echo \x00"}),  # text tmux cannot take
            ("read_program", {"programId": "p000000000000"}),  # a SchemuxError
            ("run_command", {"command": "true", "pane_id": "%999999"}),  # no such pane
            ("run_program", {"argv": ["true"], "startDirectory": "/no/such/dir"}),  # refused
            ("tmux_capture", {"target": stale}),  # the tmux_* family's envelope
            ("tmux_snapshot", {}),  # an unexpected exception
        ]
        for tool, arguments in refusals:
            assert (await client.call_tool(tool, arguments)).is_error
        with pytest.raises(Exception, match="Unknown tool"):
            await client.call_tool("no_such_tool", {"x": 1})
    outcomes = [(record["tool"], record["outcome"]) for record in records(log)]
    assert outcomes == [
        ("run_command", "invalid_arguments"),
        ("run_command", "invalid_arguments"),
        ("read_program", "not_found"),
        ("run_command", "not_found"),
        ("run_program", "refused"),
        ("tmux_capture", "stale_reference"),
        ("tmux_snapshot", "internal_error"),
        ("no_such_tool", "unknown_tool"),
    ]
    assert records(log)[2]["program"] == "p000000000000"  # the id it named


async def test_a_cancelled_call_is_recorded_as_cancelled(
    anyio_backend: str, main_tmux_socket: str, tmp_path: Path
) -> None:
    pane = new_pane(main_tmux_socket)
    log = tmp_path / "audit.jsonl"
    async with audited(main_tmux_socket, log) as client:
        with anyio.move_on_after(1.0):
            await client.call_tool("run_command", {"command": "sleep 30", "pane_id": pane.pane_id})
        # the server's handler ends after the client's cancellation reaches it
        with anyio.fail_after(10):
            while not log.exists() or not log.read_bytes():  # noqa: ASYNC110 (a file)
                await anyio.sleep(0.05)
    [record] = records(log)
    assert record["outcome"] == "cancelled"
    assert record["duration_ms"] >= 900


async def test_closing_writes_out_what_is_queued(
    anyio_backend: str, main_tmux_socket: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The context's close (every exit path's) waits for the writer: a slow disk's
    records are in the file once it returns."""
    log = tmp_path / "audit.jsonl"
    append = AuditFile.append

    def slow_append(self: AuditFile, lines: list[bytes]) -> None:
        time.sleep(0.3)
        append(self, lines)

    monkeypatch.setattr(AuditFile, "append", slow_append)
    async with audited(main_tmux_socket, log) as client:
        for _ in range(3):
            await call(client, "tmux_snapshot")
    assert len(records(log)) == 3


# ---- what a record keeps of the arguments


async def test_hostile_values_stay_one_line_of_json(
    anyio_backend: str, main_tmux_socket: str, tmp_path: Path
) -> None:
    pane = new_pane(main_tmux_socket)
    log = tmp_path / "audit.jsonl"
    huge = "x" * 1_000_000
    async with audited(main_tmux_socket, log) as client:
        for value in [*HOSTILE, huge]:
            await client.call_tool("send_keys", {"keys": value, "pane_id": pane.pane_id})
        await client.call_tool("run_program", {"argv": ["true", *HOSTILE] * 40})
        await client.call_tool(
            "run_command", {"command": "true", "pane_id": {"a": [[[[[[[[[1]]]]]]]]]}}
        )
    found = records(log)
    assert len(found) == len(HOSTILE) + 3
    for record, value in zip(found, HOSTILE, strict=False):
        assert record["arguments"]["keys"] == value  # kept exactly, escaped in the line
        assert record["tool"] == "send_keys"
    kept = found[len(HOSTILE)]
    assert kept["cut"] == ["keys"]
    assert kept["arguments"]["keys"]["head"] == "x" * LIMITS.text
    assert kept["arguments"]["keys"]["length"] == len(huge)
    assert kept["arguments"]["keys"]["sha256"] == hashlib.sha256(huge.encode()).hexdigest()
    many = found[-2]["arguments"]["argv"]
    assert len(many) == LIMITS.items
    assert "argv" in found[-2]["cut"]
    assert found[-1]["outcome"] == "invalid_arguments"
    assert found[-1]["cut"] == ["pane_id.a[0][0][0][0][0][0]"]  # nested 8 deep
    assert all(len(raw) < 64 * 1024 for raw in log.read_bytes().split(b"\n"))


def test_the_text_kept_of_one_call_is_bounded() -> None:
    arguments = {f"field{number}": "y" * 900 for number in range(40)}
    recorded = recorded_arguments(arguments, redact=False)
    kept = sum(len(value) for value in recorded["arguments"].values() if isinstance(value, str))
    assert kept <= LIMITS.total
    assert recorded["cut"]  # the fields beyond the budget, by length and hash
    last = recorded["arguments"]["field39"]
    assert last == {"length": 900, "sha256": hashlib.sha256(b"y" * 900).hexdigest()}
    many = recorded_arguments({"a": [[0] * 64] * 64, "b": 1}, redact=False)
    kept = many["arguments"]["a"]
    # every value counts: the arguments, a, its rows and their numbers
    assert 2 + len(kept) + sum(len(row) for row in kept) == LIMITS.values
    assert many["cut"] == [f"a[{len(kept) - 1}]", "a", "(arguments)"]
    assert "b" not in many["arguments"]  # no value left for it
    keys = recorded_arguments({"k" * 500: 1, **{str(n): n for n in range(100)}}, redact=False)
    assert "k" * LIMITS.key in keys["arguments"]
    assert keys["cut"] == ["k" * LIMITS.key, "(arguments)"]
    assert len(keys["arguments"]) == LIMITS.items


@pytest.mark.parametrize("value", HOSTILE)
def test_a_record_line_is_one_line_of_ascii_json(value: str) -> None:
    record = CallRecord(value, {"command": value, value: [value]})
    raw = record.line("local", 1, redact=False)
    assert raw.count(b"\n") == 1
    assert raw.endswith(b"\n")
    assert json.loads(raw)["arguments"]["command"] == value


async def test_redaction_keeps_length_and_hash_only(
    anyio_backend: str, main_tmux_socket: str, tmp_path: Path
) -> None:
    pane = new_pane(main_tmux_socket)
    log = tmp_path / "audit.jsonl"
    secret = "export TOKEN=hunter2-é"
    async with audited(main_tmux_socket, log, redact=True) as client:
        await call(client, "run_command", command=secret, pane_id=pane.pane_id)
        await call(client, "send_keys", keys=secret, pane_id=pane.pane_id, enter=False)
        await call(client, "run_program", argv=["echo", secret], input=secret)
        operations = [{"keys": secret, "pane_id": pane.pane_id, "enter": False}]
        await call(client, "send_keys_batch", operations=operations)
        shell = f"exec sleep 30 # {secret}"
        await call(
            client, "split_window", pane_id=pane.pane_id, shell=shell, environment={"T": secret}
        )
        await call(client, "set_environment", name="AUDIT_TOKEN", value=secret,
                   session_id=pane.session_id)  # fmt: skip
        staged = await call(client, "load_buffer", content=secret)
        await call(client, "delete_buffer", buffer_name=staged["buffer_name"])
        await call(client, "paste_text", text=f"# {secret}", pane_id=pane.pane_id)
    digest = {"length": len(secret), "sha256": hashlib.sha256(secret.encode()).hexdigest()}
    found = records(log)
    assert secret not in log.read_text("ascii")
    assert "hunter2" not in log.read_text("ascii")
    assert found[0]["arguments"] == {"command": digest, "pane_id": pane.pane_id}
    assert found[0]["redacted"] == ["command"]
    assert found[1]["arguments"]["keys"] == digest
    assert found[1]["arguments"]["enter"] is False
    assert found[2]["arguments"]["input"] == digest
    assert found[2]["arguments"]["argv"][1] == digest
    assert sorted(found[2]["redacted"]) == ["argv[0]", "argv[1]", "input"]
    assert found[3]["arguments"]["operations"][0]["keys"] == digest  # at any depth
    assert found[3]["redacted"] == ["operations[0].keys"]
    assert found[4]["arguments"]["environment"] == {"T": digest}  # the names are kept
    assert found[4]["arguments"]["shell"]["length"] == len(shell)
    assert found[5]["arguments"] == {
        "name": "AUDIT_TOKEN", "value": digest, "session_id": pane.session_id,
    }  # fmt: skip
    assert found[6]["arguments"] == {"content": digest}
    assert found[8]["redacted"] == ["text"]
    # the names are data, the overlays': one place says what is hidden
    assert {
        "command", "keys", "input", "argv", "environment", "shell", "value", "content", "text"
    } == REDACTED_ARGUMENTS  # fmt: skip


async def test_traceparent_is_recorded_when_well_formed(
    anyio_backend: str, main_tmux_socket: str, tmp_path: Path
) -> None:
    log = tmp_path / "audit.jsonl"
    async with audited(main_tmux_socket, log) as client:
        for sent in (TRACEPARENT, "00-x\n-forged"):
            meta = cast(RequestParamsMeta, {"traceparent": sent})  # a key of W3C's, not MCP's
            await client.call_tool("tmux_snapshot", {}, meta=meta)
        await client.call_tool("tmux_snapshot", {})
    found = records(log)
    assert found[0]["traceparent"] == TRACEPARENT
    assert "traceparent" not in found[1]
    assert "traceparent" not in found[2]
    assert traceparent({"traceparent": TRACEPARENT.upper()}) is None  # W3C: lower-case hex


# ---- the file: permissions, rotation, failures


async def test_the_file_and_directories_are_private(
    anyio_backend: str, main_tmux_socket: str, tmp_path: Path
) -> None:
    log = tmp_path / "state" / "deeper" / "audit.jsonl"
    async with audited(main_tmux_socket, log) as client:
        await call(client, "tmux_snapshot")
    assert log.stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "state").stat().st_mode & 0o777 == 0o700
    assert log.parent.stat().st_mode & 0o777 == 0o700


def test_a_file_made_with_wider_permissions_is_narrowed(tmp_path: Path) -> None:
    log = tmp_path / "audit.jsonl"
    log.write_text("")
    log.chmod(0o644)
    AuditFile(log, AuditSettings(log)).append([b"{}\n"])
    assert log.stat().st_mode & 0o777 == 0o600


def another_users(path: Path) -> Path:
    """``path``, a file of another user's that anyone may write (0666)."""
    if os.geteuid() != 0:
        missing("giving a file to another user needs root")
    path.write_text("")
    os.chown(path, OTHER_UID, OTHER_UID)
    path.chmod(0o666)
    return path


def test_an_audit_file_not_the_users_is_refused_at_start(
    main_tmux_socket: str, tmp_path: Path
) -> None:
    """One another user owns (and reads) was appended to without a word; a symbolic
    link would make schemux write where its maker chose."""
    theirs = another_users(tmp_path / "theirs.jsonl")
    link = tmp_path / "link.jsonl"
    link.symlink_to(tmp_path / "pointed.jsonl")
    for log, said in [
        (theirs, f"owned by {owner_of(OTHER_UID)}, not by you"),
        (link, "a symbolic link"),
    ]:
        done = schemux("call", "-L", main_tmux_socket, "--audit-log", str(log), "tmux_snapshot")
        assert done.returncode == 2
        assert done.stdout == ""
        assert done.stderr == (
            f"schemux: the audit log {log}: it is {said}: remove it, or name another file "
            f"(--audit-log, {ENV_AUDIT_LOG})\n"
        )
    assert theirs.read_bytes() == b""
    assert not (tmp_path / "pointed.jsonl").exists()


def test_a_file_that_became_another_users_is_not_written(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A file replaced after the start (a rotation, or another user's doing): the writer
    checks each file it opens."""
    log = another_users(tmp_path / "audit.jsonl")
    with caplog.at_level(logging.WARNING, logger="schemux"):
        AuditFile(log, AuditSettings(log)).append([b'{"n": 1}\n'])
    assert log.read_bytes() == b""
    assert f"owned by {owner_of(OTHER_UID)}, not by you" in caplog.text
    assert log.stat().st_mode & 0o777 == 0o666  # another user's file is left as it is


def test_rotation_keeps_every_line_within_the_cap(tmp_path: Path) -> None:
    log = tmp_path / "audit.jsonl"
    audit_file = AuditFile(log, AuditSettings(log, max_bytes=1000))
    lines = [json.dumps({"n": n, "pad": "p" * 80}).encode() + b"\n" for n in range(60)]
    for raw in lines:
        audit_file.append([raw])
    files = [rotated(log, number) for number in range(BACKUPS, 0, -1)] + [log]
    assert not rotated(log, BACKUPS + 1).exists()
    kept = b"".join(path.read_bytes() for path in files)
    assert kept == b"".join(lines[-len(kept.splitlines()) :])  # the newest, in order
    assert all(path.stat().st_size <= 1000 for path in files)
    assert all(path.stat().st_mode & 0o777 == 0o600 for path in files)


def test_two_writers_share_one_file_and_its_rotation(tmp_path: Path) -> None:
    """Two schemux processes on one log (two AuditFiles, each with its own descriptors,
    as two processes have): no line torn or lost while they rotate it under each other."""
    log = tmp_path / "audit.jsonl"
    writers = [AuditFile(log, AuditSettings(log, max_bytes=200_000)) for _ in range(2)]

    def write(number: int) -> None:
        for n in range(500):
            writers[number].append(
                [json.dumps({"w": number, "n": n, "p": "z" * 200}).encode() + b"\n"]
            )

    threads = [threading.Thread(target=write, args=(number,)) for number in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    files = [rotated(log, number) for number in range(BACKUPS, 0, -1)] + [log]
    found = [
        json.loads(raw) for path in files if path.exists() for raw in path.read_bytes().splitlines()
    ]
    assert len(found) == 1000  # 1000 lines of 230 bytes fit in five files of 200 kB
    for number in range(2):
        assert [record["n"] for record in found if record["w"] == number] == list(range(500))


@pytest.mark.parametrize("case", ["full disk", "not a directory", "read-only directory"])
async def test_an_unwritable_log_is_one_warning_and_calls_go_on(
    anyio_backend: str,
    main_tmux_socket: str,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    case: str,
) -> None:
    if case == "full disk":
        log = Path("/dev/full")  # every write fails with ENOSPC
        device_mode = log.stat().st_mode
    elif case == "not a directory":
        (tmp_path / "file").write_text("")
        log = tmp_path / "file" / "audit.jsonl"
    else:
        if os.geteuid() == 0:
            pytest.skip("root writes into a read-only directory: the other cases stand in")
        (tmp_path / "locked").mkdir(mode=0o500)
        log = tmp_path / "locked" / "audit.jsonl"
    pane = new_pane(main_tmux_socket)
    with caplog.at_level(logging.WARNING, logger="schemux"):
        async with audited(main_tmux_socket, log) as client:
            for number in range(3):
                result = await call(
                    client, "run_command", command=f"echo {number}", pane_id=pane.pane_id
                )
                assert result["output"] == [str(number)]
    warnings = [r.getMessage() for r in caplog.records if "audit log" in r.getMessage()]
    assert len(warnings) == 1, warnings
    assert str(log) in warnings[0]
    assert "tool calls go on" in warnings[0]
    if case == "full disk":
        assert Path("/dev/full").stat().st_mode == device_mode  # a device is left as it is


def test_a_log_that_becomes_writable_again_records_the_gap(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "gone").write_text("")  # a file where the directory should be
    log = tmp_path / "gone" / "audit.jsonl"
    audit_file = AuditFile(log, AuditSettings(log))
    audit_file.append([b'{"n": 1}\n'])
    audit_file.append([b'{"n": 2}\n'])
    (tmp_path / "gone").unlink()
    (tmp_path / "gone").mkdir()
    with caplog.at_level(logging.WARNING, logger="schemux"):
        audit_file.append([b'{"n": 3}\n'])
    gap, last = records(log)
    assert gap["gap"] == 2
    assert last == {"n": 3}
    assert "2 calls lost" in caplog.text


# Run in a process of its own (a file size limit, a mount namespace are the process's):
# one record written, the file system filled, a long record that fits only in part, the
# space freed, one more record. The file's bytes are the output.
FILLED_UP = """
import os, resource, signal, sys
from pathlib import Path
from schemux.audit.log import AuditFile
from schemux.config import AuditSettings

how, log = sys.argv[1], Path(sys.argv[2])
audit_file = AuditFile(log, AuditSettings(log))
audit_file.append([b'{"n": 1}\\n'])
if how == "file size limit":
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write beyond it fails with EFBIG
    resource.setrlimit(resource.RLIMIT_FSIZE, (log.stat().st_size + 100, resource.RLIM_INFINITY))
else:  # a tmpfs: the filler takes every page but the one the log's last line is in
    with open(log.parent / "filler", "wb", buffering=0) as filler:
        try:
            while True:
                filler.write(b"f" * 1024)
        except OSError:
            pass
audit_file.append([b'{"n": 2, "pad": "' + b"p" * 20000 + b'"}\\n'])
if how == "file size limit":
    resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
else:
    (log.parent / "filler").unlink()
audit_file.append([b'{"n": 3}\\n'])
sys.stdout.buffer.write(log.read_bytes())
"""


@pytest.mark.parametrize("how", ["full file system", "file size limit"])
def test_a_write_that_fails_part_way_leaves_no_partial_line(tmp_path: Path, how: str) -> None:
    """A record written in part (the disk filled up in the middle of it) was followed by
    the gap line on the same line, and ``schemux audit`` skipped both: the part is
    taken back, and the gap line stands on its own."""
    script = [sys.executable, "-c", FILLED_UP, how]
    if how == "full file system":
        if subprocess.run(["unshare", "-m", "true"], capture_output=True, check=False).returncode:
            missing("no mount namespace here (unshare -m needs CAP_SYS_ADMIN)")
        mount = 'mount -t tmpfs -o size=64k tmpfs "$1" && shift && exec "$@"'
        script = ["unshare", "-m", "sh", "-c", mount, "sh", str(tmp_path), *script]
    done = subprocess.run(
        [*script, str(tmp_path / "audit.jsonl")], capture_output=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr.decode()
    kept = done.stdout
    assert kept.endswith(b"\n")
    first, gap, last = (json.loads(raw) for raw in kept.split(b"\n")[:-1])
    assert (first, last) == ({"n": 1}, {"n": 3})
    assert gap["gap"] == 1
    assert "1 calls not recorded" in line(gap)


def test_a_partial_line_left_before_is_ended_first(tmp_path: Path) -> None:
    """A line cut short by something else (a crash, a disk that filled under a writer
    that could not take its part back): the next record still begins a line."""
    log = tmp_path / "audit.jsonl"
    log.write_bytes(b'{"n": 1}\n{"n": 2, "pa')
    AuditFile(log, AuditSettings(log)).append([b'{"n": 3}\n'])
    assert log.read_bytes().split(b"\n")[2] == b'{"n": 3}'


async def test_no_thread_to_write_with_fails_no_call(
    anyio_backend: str, main_tmux_socket: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process at its thread limit: the calls go on; the records lost are counted in
    the gap line written once a writer starts."""
    log = tmp_path / "audit.jsonl"

    start = threading.Thread.start

    def no_writer(thread: threading.Thread) -> None:
        if thread.name == "schemux-audit":  # other threads (anyio's workers) start
            raise RuntimeError("can't start new thread")
        start(thread)

    async with audited(main_tmux_socket, log) as client:
        monkeypatch.setattr(threading.Thread, "start", no_writer)
        for _ in range(2):
            await call(client, "tmux_snapshot")
        monkeypatch.undo()
        await call(client, "tmux_snapshot")
    gap, written = records(log)
    assert gap["gap"] == 2
    assert written["tool"] == "tmux_snapshot"


# ---- settings


def test_audit_settings_from_options_and_environment(tmp_path: Path) -> None:
    home = {"HOME": "/home/someone"}
    assert audit_settings(home).path == Path("/home/someone/.local/state/schemux/audit.jsonl")
    state = {**home, "XDG_STATE_HOME": str(tmp_path)}
    assert audit_settings(state).path == tmp_path / "schemux" / "audit.jsonl"
    relative = {**home, "XDG_STATE_HOME": "relative/state"}  # ignored, as XDG says
    assert audit_settings(relative).path == Path("/home/someone/.local/state/schemux/audit.jsonl")
    assert audit_settings({**state, ENV_NO_AUDIT: "1"}).path is None
    assert audit_settings(state, no_audit=True, audit_log="x").path is None
    assert audit_settings(state, audit_log="here.jsonl").path == Path.cwd() / "here.jsonl"
    named = {**state, ENV_AUDIT_LOG: "/var/x.jsonl", ENV_AUDIT_REDACT: "1"}
    assert audit_settings(named) == AuditSettings(Path("/var/x.jsonl"), redact=True)
    assert audit_settings(state, redact=True).redact
    with pytest.raises(ConfigError, match="must name a file"):
        audit_settings(state, audit_log="somewhere/")
    with pytest.raises(ConfigError, match=ENV_NO_AUDIT):
        audit_settings({**state, ENV_NO_AUDIT: "maybe"})


# ---- over stdio, end to end


def audit_records(process_log: Path) -> list[dict[str, Any]]:
    return records(process_log) if process_log.exists() else []


async def test_stdio_records_calls_and_writes_them_out_at_eof(
    anyio_backend: str, main_tmux_socket: str, tmp_path: Path
) -> None:
    pane = new_pane(main_tmux_socket)
    log = tmp_path / "audit.jsonl"
    parameters = stdio_parameters("-L", main_tmux_socket, "--audit-log", str(log))
    async with Client(parameters, client_info=CLIENT) as client:
        await call(client, "run_command", command="echo over-stdio", pane_id=pane.pane_id)
        await client.call_tool("run_command", {"command": 1})
        async with anyio.create_task_group() as group:
            # in flight when stdin ends: the server records it as it closes
            group.start_soon(
                client.call_tool, "run_command", {"command": "sleep 30", "pane_id": pane.pane_id}
            )
            await anyio.sleep(1.0)
            group.cancel_scope.cancel()
    wait_until(lambda: len(audit_records(log)) == 3, timeout=10)
    first, refused, in_flight = audit_records(log)
    assert first["client"] == {"name": "audit-test", "version": "9.9"}
    assert first["session"].startswith("stdio-")
    assert first["session"] == refused["session"] == in_flight["session"]
    assert first["pid"] != os.getpid()
    assert (first["outcome"], refused["outcome"]) == ("ok", "invalid_arguments")
    assert in_flight["outcome"] == "cancelled"


async def test_the_tests_stdio_servers_audit_into_the_runs_state(
    anyio_backend: str, main_tmux_socket: str
) -> None:
    """Every schemux the suite starts writes where the run says (never ~/.local/state)."""
    marker = f"state-{os.getpid()}-{time.monotonic_ns()}"
    async with Client(stdio_parameters("-L", main_tmux_socket)) as client:
        await client.call_tool("run_command", {"command": 7, "pane_id": marker})
    state = Path(os.environ["XDG_STATE_HOME"])
    assert not state.is_relative_to(Path.home())
    log = state / "schemux" / "audit.jsonl"
    wait_until(lambda: marker in log.read_text("ascii"), timeout=10)


def schemux(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "schemux", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=60,
        check=False,
    )


def serving(*command: str) -> subprocess.Popen[bytes]:
    """A ``schemux serve`` over stdio, spoken to as raw JSON-RPC (``answers``)."""
    return subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )


def answers(process: subprocess.Popen[bytes], calls: list[dict[str, Any]]) -> list[Any]:
    """The results of ``calls`` (``tools/call`` params), after the handshake."""
    assert process.stdin is not None
    assert process.stdout is not None
    initialize = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    }
    requests = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": initialize},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]
    requests += [
        {"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": params}
        for number, params in enumerate(calls, 1)
    ]
    for request in requests:
        process.stdin.write(json.dumps(request).encode() + b"\n")
        process.stdin.flush()
    found = sorted(
        (json.loads(process.stdout.readline()) for _ in range(len(calls) + 1)),
        key=lambda answer: int(answer["id"]),
    )  # the calls run at once, and end in any order
    assert [answer["id"] for answer in found] == list(range(len(calls) + 1))
    return [answer["result"] for answer in found[1:]]


def test_sigterm_writes_out_the_log(main_tmux_socket: str, tmp_path: Path) -> None:
    log = tmp_path / "audit.jsonl"
    process = serving(
        sys.executable, "-m", "schemux", "serve", "-L", main_tmux_socket, "--audit-log", str(log)
    )
    try:
        meta = {"traceparent": TRACEPARENT}
        answers(process, [{"name": "tmux_snapshot", "arguments": {}, "_meta": meta}])
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=15) == 0
    finally:
        process.kill()
        process.wait()
    [record] = records(log)
    assert record["client"] == {"name": "raw", "version": "1"}
    assert record["traceparent"] == TRACEPARENT
    assert record["outcome"] == "ok"


def test_a_read_only_file_system_is_one_warning_on_stderr(
    main_tmux_socket: str, tmp_path: Path
) -> None:
    """The log's directory mounted read-only (a mount namespace of the server's own):
    what root cannot write either."""
    if subprocess.run(["unshare", "-m", "true"], capture_output=True, check=False).returncode:
        missing("no mount namespace here (unshare -m needs CAP_SYS_ADMIN)")
    directory = tmp_path / "read-only"
    directory.mkdir()
    read_only = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"'
    panes = [new_pane(main_tmux_socket) for _ in range(3)]  # the calls run at once
    process = serving(
        "unshare", "-m", "sh", "-c", read_only, "sh", str(directory),
        sys.executable, "-m", "schemux", "serve", "-L", main_tmux_socket,
        "--audit-log", str(directory / "audit.jsonl"),
    )  # fmt: skip
    try:
        calls = [
            {"name": "run_command", "arguments": {"command": f"echo {n}", "pane_id": pane.pane_id}}
            for n, pane in enumerate(panes)
        ]
        for number, result in enumerate(answers(process, calls)):
            assert not result.get("isError"), result
            assert result["structuredContent"]["output"] == [str(number)]
        assert process.stdin is not None
        process.stdin.close()
        assert process.wait(timeout=15) == 0
        assert process.stderr is not None
        stderr = process.stderr.read().decode()
    finally:
        process.kill()
        process.wait()
    warnings = [text for text in stderr.splitlines() if "audit log" in text]
    assert len(warnings) == 1, stderr
    assert "Read-only file system" in warnings[0]
    assert not (directory / "audit.jsonl").exists()


def test_log_options_send_the_servers_warnings_to_a_file(
    main_tmux_socket: str, tmp_path: Path
) -> None:
    server_log = tmp_path / "server.log"
    done = schemux(
        "call", "-L", main_tmux_socket, "--audit-log", "/dev/full",
        "--log-file", str(server_log), "--log-level", "info", "tmux_snapshot",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "audit log" not in done.stderr
    assert "the audit log /dev/full cannot be written" in server_log.read_text()
    assert server_log.stat().st_mode & 0o777 == 0o600
    bad = schemux("call", "--log-level", "loud", "tmux_snapshot")
    assert bad.returncode == 2
    from_environment = schemux("call", "tmux_snapshot", env={"SCHEMUX_LOG_LEVEL": "loud"})
    assert from_environment.returncode == 2
    assert "SCHEMUX_LOG_LEVEL) 'loud' is none of debug, info, warning, error" in (
        from_environment.stderr
    )
    unwritable = schemux("call", "--log-file", str(tmp_path / "no" / "dir"), "tmux_snapshot")
    assert unwritable.returncode == 2
    assert unwritable.stderr.startswith("schemux: cannot open the log file")


@pytest.mark.parametrize("case", ["wider mode", "symbolic link", "another user's"])
def test_the_log_file_is_the_users_own_and_private(
    main_tmux_socket: str, tmp_path: Path, case: str
) -> None:
    """--log-file followed a symbolic link, and kept a wider mode or another owner."""
    server_log = tmp_path / "server.log"
    if case == "wider mode":
        server_log.write_text("")
        server_log.chmod(0o644)
    elif case == "symbolic link":
        server_log.symlink_to(tmp_path / "pointed.log")
    else:
        another_users(server_log)
    done = schemux(
        "call", "-L", main_tmux_socket, "--no-audit", "--log-file", str(server_log),
        "tmux_snapshot",
    )  # fmt: skip
    if case == "wider mode":
        assert done.returncode == 0, done.stderr
        assert server_log.stat().st_mode & 0o777 == 0o600
        return
    said = (
        "a symbolic link"
        if case == "symbolic link"
        else f"owned by {owner_of(OTHER_UID)}, not by you"
    )
    assert done.returncode == 2
    assert done.stderr == (
        f"schemux: cannot open the log file (--log-file, SCHEMUX_LOG_FILE) {str(server_log)!r}: "
        f"it is {said}: remove it, or name another file\n"
    )
    assert not (tmp_path / "pointed.log").exists()


# ---- schemux audit


def written(log: Path, *entries: dict[str, Any]) -> None:
    with log.open("a") as opened:
        for entry in entries:
            opened.write(json.dumps(entry) + "\n")


def entry(minutes_ago: float, tool: str = "run_command", **fields: Any) -> dict[str, Any]:
    when = datetime.now().astimezone() - timedelta(minutes=minutes_ago)
    return {
        "time": when.isoformat(timespec="milliseconds"),
        "tool": tool,
        "host": "local",
        "pane": "%7",
        "arguments": {"command": f"echo {tool} {minutes_ago}"},
        "outcome": "ok",
        "duration_ms": 12.5,
        "bytes": 3,
        **fields,
    }


def test_audit_prints_one_line_per_call_since_a_time(tmp_path: Path) -> None:
    log = tmp_path / "audit.jsonl"
    written(rotated(log, 1), entry(600, command="old"))
    written(
        log,
        entry(90),
        entry(30, arguments={"command": "printf '\x1b[2J'\nrm -rf /tmp/x " + "y" * 200}),
        entry(5, "send_keys", outcome="invalid_arguments", arguments={"keys": "q"}),
        entry(1, "run_program", program="p1", arguments={"argv": ["ls", "a b"]}),
    )
    done = schemux("audit", "--audit-log", str(log))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 5
    assert "echo run_command 600" in lines[0]  # rotated files first
    hostile = lines[2]
    assert "\x1b" not in done.stdout
    assert "printf '\\x1b[2J'\\nrm -rf /tmp/x yyy" in hostile
    assert hostile.endswith("…")
    assert hostile.split()[3:6] == ["%7", "ok", "12"]
    assert lines[3].split()[4] == "invalid_arguments"
    assert lines[3].endswith("q")
    assert "p1 %7" in lines[4]
    assert lines[4].endswith("ls 'a b'")
    recent = schemux("audit", "--audit-log", str(log), "--since", "10m").stdout.splitlines()
    assert [text.split()[2] for text in recent] == ["send_keys", "run_program"]
    assert len(schemux("audit", "--audit-log", str(log), "--since", "2h").stdout.splitlines()) == 4
    nothing = schemux("audit", "--audit-log", str(tmp_path / "none.jsonl"))
    assert nothing.returncode == 0
    assert nothing.stdout == ""
    assert (
        nothing.stderr
        == f"schemux: no audit log at {tmp_path / 'none.jsonl'} (no call recorded there yet)\n"
    )
    bad = schemux("audit", "--since", "soon")
    assert bad.returncode == 2
    assert "--since" in bad.stderr


def test_audit_shows_redacted_cut_and_gap_records() -> None:
    redacted = {"length": 42, "sha256": "ab" * 32}
    assert "[redacted: 42 characters, sha256 abababababab]" in line(
        entry(1, arguments={"command": redacted})
    )
    cut = {"head": "yes | head", "length": 5000, "sha256": "cd" * 32}
    assert "yes | head…(5000 characters)" in line(entry(1, arguments={"command": cut}))
    gap = {"time": "2026-12-01T10:00:00.000Z", "gap": 3}
    assert "3 calls not recorded" in line(gap)
    batch = {"operations": [{"keys": "ls", "pane_id": "%1"}, {"keys": "q\x1b"}]}
    assert line(entry(1, "send_keys_batch", arguments=batch)).endswith("ls | q\\x1b")
    assert line(entry(1, "signal_channel", arguments={"channel": "done"})).endswith("done")
    remote = line(entry(1, host="me@box", arguments={"command": "x", "socket_name": "work"}))
    assert "me@box: %7 -L work" in remote


# an OSC title, an OSC 52 clipboard write, a screen clear: what the agent could append
TERMINAL_WRITES = "\x1b]0;owned\x07\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J\x9b\u2028"


@pytest.mark.parametrize(
    "record",
    [
        {"time": "2026-12-01T10:00:00.000Z", "gap": TERMINAL_WRITES},
        {"time": "2026-12-01T10:00:00.000Z", "gap": [TERMINAL_WRITES]},
        *(
            entry(1, **{name: TERMINAL_WRITES})
            for name in ("tool", "host", "pane", "program", "outcome", "duration_ms")
        ),
        entry(1, arguments={"command": TERMINAL_WRITES, "socket_name": TERMINAL_WRITES}),
        entry(1, arguments={"argv": [TERMINAL_WRITES]}),
        entry(1, arguments={"patterns": {TERMINAL_WRITES: TERMINAL_WRITES}}),
        {**entry(1), "tool": {"nested": TERMINAL_WRITES}},  # a field of another type
    ],
)
def test_audit_escapes_every_field_it_prints(record: dict[str, Any]) -> None:
    """Whatever a line of the log holds, in a field known or not, reaches the reader's
    terminal with its control characters escaped."""
    shown = line(record)
    assert shown.isprintable(), shown


def test_audit_prints_an_appended_gap_line_escaped(tmp_path: Path) -> None:
    log = tmp_path / "audit.jsonl"
    written(log, entry(2), {"time": entry(1)["time"], "gap": TERMINAL_WRITES})
    done = schemux("audit", "--audit-log", str(log))
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout
    assert "\\x1b]52;c;cm0gLXJmIH4=\\x07" in done.stdout
    assert done.stdout.splitlines()[1].endswith("calls not recorded: the audit log was unwritable")


def test_since_takes_durations_days_and_iso_times() -> None:
    now = datetime(2026, 12, 1, 15, 0).astimezone()
    assert parse_since("10m", now) == now - timedelta(minutes=10)
    assert parse_since("1h30m", now) == now - timedelta(minutes=90)
    assert parse_since("2d", now) == now - timedelta(days=2)
    assert parse_since("today", now) == now.replace(hour=0)
    assert parse_since("yesterday", now) == now.replace(hour=0) - timedelta(days=1)
    assert parse_since("2026-11-30T08:00:00Z", now) == datetime.fromisoformat(
        "2026-11-30T08:00:00+00:00"
    )
    assert parse_since("2026-11-30", now) == datetime(2026, 11, 30).astimezone()
    for wrong in ("", "m10", "10x", "yesterday-ish"):
        with pytest.raises(ConfigError):
            parse_since(wrong, now)


def test_visible_escapes_every_control_character() -> None:
    shown = visible("".join(chr(code) for code in range(0x20)) + "\x7f\x9b\u2028ok é")
    assert shown.isprintable()
    assert shown.endswith("ok é")


def test_follow_reads_across_rotation(tmp_path: Path) -> None:
    log = tmp_path / "audit.jsonl"
    audit_file = AuditFile(log, AuditSettings(log, max_bytes=300))
    seen: list[bytes] = []

    def reader() -> None:
        for raw in follow_lines(log, poll=0.02):
            seen.append(raw)
            if len(seen) == 20:
                return

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    lines = [json.dumps({"n": n, "pad": "q" * 60}).encode() + b"\n" for n in range(20)]
    # the reader follows before the file rotates: a reader started late on a loaded
    # machine found the first lines rotated away already (a follow begins where it opens)
    audit_file.append([lines[0]])
    wait_until(lambda: len(seen) == 1)
    for raw in lines[1:]:
        audit_file.append([raw])
        time.sleep(0.01)
    thread.join(timeout=10)
    assert seen == lines
    assert rotated(log, 1).exists()  # it did rotate under the reader


def test_follow_reads_again_a_line_taken_back(tmp_path: Path) -> None:
    """A writer whose disk filled up takes its part of a line back: a reader that saw the
    part reads on from the end of the last whole line, not from where the part ended."""
    log = tmp_path / "audit.jsonl"
    log.write_bytes(b'{"n": 1}\n{"n": 2, "pad": "ppp')
    following = follow_lines(log, poll=0.02)
    assert next(following) == b'{"n": 1}\n'
    with log.open("r+b") as opened:
        opened.truncate(len(b'{"n": 1}\n'))
        opened.seek(0, os.SEEK_END)
        opened.write(b'{"gap": 1}\n{"n": 3}\n')
    seen: list[bytes] = []
    reader = threading.Thread(
        target=lambda: seen.extend(next(following) for _ in range(2)), daemon=True
    )
    reader.start()
    reader.join(timeout=10)  # a reader past the end of the file waits for ever
    assert seen == [b'{"gap": 1}\n', b'{"n": 3}\n']


def test_audit_follow_prints_new_calls(tmp_path: Path) -> None:
    log = tmp_path / "audit.jsonl"
    written(log, entry(3))
    process = subprocess.Popen(
        [sys.executable, "-m", "schemux", "audit", "--follow", "--audit-log", str(log)],
        stdout=subprocess.PIPE,
        text=True,
        # as a person's terminal starts it: a run started in the background by a
        # non-interactive shell ignores SIGINT, and Python keeps an ignored SIGINT ignored
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert process.stdout is not None
    try:
        assert "echo run_command 3" in process.stdout.readline()
        log.rename(rotated(log, 1))  # rotated by a server
        written(log, entry(0, "send_keys", arguments={"keys": "after rotation"}))
        assert process.stdout.readline().rstrip().endswith("after rotation")
    finally:
        process.send_signal(signal.SIGINT)
        try:
            ended = process.wait(timeout=10)
        finally:
            if process.poll() is None:  # never left running when the test fails
                process.kill()
                process.wait()
    assert ended == 0


async def test_http_records_each_mcp_session(
    anyio_backend: str, main_tmux_socket: str, tmp_path: Path
) -> None:
    from tests.test_http import serve

    log = tmp_path / "audit.jsonl"
    served = await serve(main_tmux_socket, "--audit-log", str(log))
    try:
        for _ in range(2):
            async with Client(served.url, mode="legacy", client_info=CLIENT) as client:
                await call(client, "tmux_snapshot")
                await call(client, "tmux_snapshot")
        async with Client(served.url, client_info=CLIENT) as client:  # 2026-07-28: stateless
            await call(client, "tmux_snapshot")
            await call(client, "tmux_snapshot")
    finally:
        served.process.terminate()
        await served.process.wait()
    found = records(log)
    assert [record["client"] for record in found] == [{"name": "audit-test", "version": "9.9"}] * 6
    sessions = [record["session"] for record in found]
    assert sessions[0] == sessions[1]  # one id per MCP session
    assert sessions[2] == sessions[3]
    assert sessions[0] != sessions[2]
    assert None not in sessions
    # no session in the stateless protocol: its calls are grouped by their connection
    assert re.fullmatch(r"http-127\.0\.0\.1:[0-9]+", sessions[4])
    assert sessions[4] == sessions[5]


async def test_over_ssh_the_host_is_the_destination(
    anyio_backend: str, remote_tmux_socket: str, ssh_target: SshTarget, tmp_path: Path
) -> None:
    log = tmp_path / "audit.jsonl"
    settings = Settings(socket_name=remote_tmux_socket, ssh=ssh_target, audit=AuditSettings(log))
    context = ServingState(settings)
    try:
        async with client_of(context, BINDINGS, client_info=CLIENT) as client:
            ran = await call(client, "run_program", argv=["echo", "remote"])
    finally:
        await context.close()
    [record] = records(log)
    assert record["host"] == ssh_target.destination
    assert ran["output"] == "remote"
    assert record["program"].startswith("p")
    shown = line(record)
    assert f"{ssh_target.destination}: {record['program']} {record['pane']}" in shown


async def test_http_warnings_go_to_the_log_file(
    anyio_backend: str, main_tmux_socket: str, tmp_path: Path
) -> None:
    """uvicorn's own warnings (a request that is no HTTP) follow --log-file too."""
    from tests.test_http import serve

    server_log = tmp_path / "server.log"
    served = await serve(main_tmux_socket, "--log-file", str(server_log))
    try:
        async with await anyio.connect_tcp("127.0.0.1", served.port) as stream:
            await stream.send(b"NOT HTTP AT ALL\r\n\r\n")
            with anyio.move_on_after(5):
                await stream.receive()
        with anyio.fail_after(10):
            while "Invalid HTTP request" not in server_log.read_text():  # noqa: ASYNC110 (a file)
                await anyio.sleep(0.05)
    finally:
        served.process.terminate()
        await served.process.wait()
    assert served.process.stderr is not None
    stderr = b""
    with contextlib.suppress(anyio.EndOfStream):
        while True:
            stderr += await served.process.stderr.receive()
    assert b"Invalid HTTP request" not in stderr
    assert "schemux[" in server_log.read_text()  # in the file's format, with the pid


def test_a_log_tail_reads_the_log_again_only_once_it_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The page looks at the audit log every second: a look at a log that did not change
    since the last is one stat, no open and no read; a line appended is read at the next."""
    log = tmp_path / "audit.jsonl"
    log.write_text(json.dumps({"tool": "first", "outcome": "ok"}) + "\n")
    tail = LogTail(log)
    assert [record["tool"] for record in tail.read()] == ["first"]
    opened: list[Path] = []
    real_open = Path.open

    def counted(path: Path, *args: Any, **kwargs: Any) -> Any:
        opened.append(path)
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(Path, "open", counted)
    assert tail.read() == []
    assert tail.read() == []
    assert opened == []
    with log.open("a") as appending:
        appending.write(json.dumps({"tool": "second", "outcome": "ok"}) + "\n")
    assert [record["tool"] for record in tail.read()] == ["second"]
    assert tail.read() == []
