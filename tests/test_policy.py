"""The policy file through real MCP clients on a real tmux server: rules that deny,
ask and allow, the write scope, a person watching a pane, approvals by elicitation
(a 2026-07-28 client's input_required round trip and a handshake client's
elicitation/create; accept, decline, cancel; a client that cannot elicit) and secrets
masked in results and the audit log. Nothing a refused or unanswered call asks for
reaches the pane."""

from __future__ import annotations

import base64
import json
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any, Literal

import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from schemux.config import AuditSettings
from schemux.domain.resource_uris import pane_uri
from schemux.generated.bindings import BINDINGS
from schemux.policy.file import load_policy
from schemux.serving.server import build_server
from schemux.serving.state import ServingState
from tests.conftest import STDIO_WAIT_CEILING
from tests.contexts import Contexts
from tests.http_serving import free_port, listening, serve_http
from tests.node import run_node
from tests.support import Pane, new_pane, screen, tmux, wait_until
from tests.test_tasks import RawStdio

RULES = """\
watched = "allow"

[[rules]]
pattern = '^rm\\s+-[a-zA-Z]*r'
action = "deny"

[[rules]]
pattern = '^touch .*asked-'
action = "ask"
"""

Answer = Literal["accept", "decline", "cancel"]


class Person:
    """The person behind an MCP client: answers each elicitation with ``answer`` and
    keeps what they were shown."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.shown: list[str] = []

    async def __call__(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestFormParams)
        self.shown.append(params.message)
        content: dict[str, str | int | float | bool | list[str] | None] | None = (
            {"approve": True} if self.answer == "accept" else None
        )
        return types.ElicitResult(action=self.answer, content=content)


@asynccontextmanager
async def governed(
    make_context: Contexts,
    socket: str,
    tmp_path: Path,
    rules: str = RULES,
    *,
    person: Person | None = None,
    mode: str = "auto",
    **settings: Any,
) -> AsyncIterator[tuple[Client, Path]]:
    """An MCP client of schemux under the policy ``rules``, whose person (if any)
    answers elicitations; and the audit log's path."""
    policy_file = tmp_path / "policy.toml"
    policy_file.write_text(rules)
    log = tmp_path / "audit.jsonl"
    context: ServingState = make_context(
        socket_name=socket,
        wait_ceiling=STDIO_WAIT_CEILING,
        policy=load_policy(str(policy_file)),
        audit=AuditSettings(log, mask=settings.get("mask_secrets", False)),
        **settings,
    )
    server = build_server(context, BINDINGS)
    async with Client(server, mode=mode, elicitation_callback=person) as client:
        yield client, log
    await context.audit.close()


def records(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def marker_file() -> Path:
    return Path(tempfile.gettempdir()) / f"asked-{uuid.uuid4().hex[:8]}"


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


@pytest.mark.parametrize(
    "command",
    [
        "sudo rm -rf {victim}",
        "bash -c 'rm -rf {victim}'",
        "true && rm -rf {victim}",
        # hostile: tmux syntax, a format, an escape, a bidi override, quotes
        "echo \\; a#{{pane_id}} b#(id) \x1b[2J \u202e '\"' ; rm -rf {victim}",
    ],
)
async def test_a_denied_command_never_runs(
    anyio_backend: str, make_context: Contexts, main_tmux_socket: str, tmp_path: Path, command: str
) -> None:
    victim = tmp_path / "victim"
    victim.mkdir()
    pane = new_pane(main_tmux_socket)
    before = screen(pane)
    async with governed(make_context, main_tmux_socket, tmp_path) as (client, log):
        typed = command.format(victim=victim)
        result = await client.call_tool("run_command", {"command": typed, "pane_id": pane.pane_id})
        assert result.is_error
        assert "line 3" in text_of(result)
        assert "nothing was run" in text_of(result)
        sent = await client.call_tool("send_keys", {"keys": typed, "pane_id": pane.pane_id})
        assert sent.is_error
        batch = {"operations": [{"keys": "ls", "pane_id": pane.pane_id}, {"keys": typed}]}
        assert (await client.call_tool("send_keys_batch", batch)).is_error
        program = await client.call_tool("run_program", {"argv": ["rm", "-rf", str(victim)]})
        assert program.is_error
    assert victim.exists()
    assert screen(pane) == before  # not even the batch's first, allowed, operation
    decisions = [record.get("policy") for record in records(log)]
    assert decisions == [{"action": "deny", "rule_line": 3}] * 4


async def test_every_spelling_of_a_recursive_rm_meets_one_rule(
    anyio_backend: str, make_context: Contexts, main_tmux_socket: str, tmp_path: Path
) -> None:
    """Split, reordered, long and abbreviated flags meet a rule written for the flag
    form (SECURITY.md's); a program's argv too. An rm that is not recursive runs."""
    victim = tmp_path / "victim"
    (victim / "inner").mkdir(parents=True)
    loose = victim / "loose"
    loose.write_text("x")
    pane = new_pane(main_tmux_socket)
    rules = "[[rules]]\npattern = '^rm\\s+-[a-zA-Z]*[rR]'\naction = \"deny\"\n"
    spellings = [
        "rm -f -r {victim}",
        "rm {victim} -rf",
        "rm --force --recursive {victim}",
        "rm --rec {victim}",
        "sudo rm -f -R {victim}",
        "bash -c 'rm -f -r {victim}'",
        "true && rm -f --recursive {victim}",
    ]
    async with governed(make_context, main_tmux_socket, tmp_path, rules) as (client, _):
        for spelling in spellings:
            command = spelling.format(victim=victim)
            result = await client.call_tool(
                "run_command", {"command": command, "pane_id": pane.pane_id}
            )
            assert result.is_error, command
            assert "refused by the policy" in text_of(result)
        program = await client.call_tool("run_program", {"argv": ["rm", "-f", "-r", str(victim)]})
        assert program.is_error
        assert victim.is_dir()
        kept = await client.call_tool(
            "run_command", {"command": f"rm -f {loose}", "pane_id": pane.pane_id}
        )
        assert not kept.is_error, text_of(kept)
    assert not loose.exists()
    assert (victim / "inner").is_dir()


@pytest.mark.parametrize("mode", ["auto", "legacy"])
@pytest.mark.parametrize("answer", ["accept", "decline", "cancel"])
async def test_an_ask_runs_only_after_the_person_accepts(
    anyio_backend: str,
    make_context: Contexts,
    main_tmux_socket: str,
    tmp_path: Path,
    answer: Answer,
    mode: str,
) -> None:
    pane = new_pane(main_tmux_socket)
    target = marker_file()
    person = Person(answer)
    async with governed(make_context, main_tmux_socket, tmp_path, person=person, mode=mode) as (
        client,
        log,
    ):
        result = await client.call_tool(
            "run_command", {"command": f"touch {target}", "pane_id": pane.pane_id}
        )
    try:
        assert len(person.shown) == 1
        assert f"touch {target}" in person.shown[0]
        assert "run_command" in person.shown[0]
        assert target.exists() == (answer == "accept")
        assert result.is_error == (answer != "accept"), text_of(result)
        decided = [record["policy"] for record in records(log) if "policy" in record]
        assert decided[-1]["answer"] == answer
    finally:
        target.unlink(missing_ok=True)


async def test_a_client_that_cannot_elicit_is_told_how_to_allow(
    anyio_backend: str, make_context: Contexts, main_tmux_socket: str, tmp_path: Path
) -> None:
    pane = new_pane(main_tmux_socket)
    before = screen(pane)
    target = marker_file()
    async with governed(make_context, main_tmux_socket, tmp_path) as (client, log):
        result = await client.call_tool(
            "run_command", {"command": f"touch {target}", "pane_id": pane.pane_id}
        )
    assert result.is_error
    assert not target.exists()
    assert screen(pane) == before
    said = text_of(result)
    assert "approval" in said
    assert '"allow"' in said
    assert "cannot ask" in said
    assert records(log)[-1]["policy"] == {"action": "ask", "rule_line": 7, "answer": "not asked"}


async def test_an_approval_is_for_the_exact_arguments_asked(
    anyio_backend: str, make_context: Contexts, main_tmux_socket: str, tmp_path: Path
) -> None:
    """A retry whose arguments differ from those approved is asked again: an answer
    given for one command never runs another."""
    pane = new_pane(main_tmux_socket)
    target = marker_file()
    async with governed(make_context, main_tmux_socket, tmp_path, person=Person("accept")) as (
        client,
        _,
    ):
        first = await client.session.call_tool(
            "run_command",
            {"command": f"touch {target}", "pane_id": pane.pane_id},
            allow_input_required=True,
        )
        assert isinstance(first, types.InputRequiredResult)
        accepted: dict[str, types.InputResponse] = {
            "schemux_approval": types.ElicitResult(action="accept", content={"approve": True})
        }
        other = marker_file()
        # the SDK's boundary refuses state minted for other arguments (its request
        # binding); schemux's own state names the arguments' digest as well
        with pytest.raises(MCPError, match="requestState"):
            await client.session.call_tool(
                "run_command",
                {"command": f"touch {other}", "pane_id": pane.pane_id},
                input_responses=accepted,
                request_state=first.request_state,
                allow_input_required=True,
            )
        forged = await client.session.call_tool(
            "run_command",
            {"command": f"touch {other}", "pane_id": pane.pane_id},
            input_responses=accepted,
            allow_input_required=True,
        )
    assert isinstance(forged, types.InputRequiredResult)  # no state: asked again
    assert not target.exists()
    assert not other.exists()


async def test_a_pane_outside_the_write_scope_is_refused_with_nothing_typed(
    anyio_backend: str, make_context: Contexts, main_tmux_socket: str, tmp_path: Path
) -> None:
    pane = new_pane(main_tmux_socket)
    before = screen(pane)
    rules = 'write_scope = "owned"\nwatched = "allow"\n'
    async with governed(make_context, main_tmux_socket, tmp_path, rules) as (client, log):
        attempts: list[tuple[str, dict[str, Any]]] = [
            ("run_command", {"command": "echo typed-1", "pane_id": pane.pane_id}),
            ("send_keys", {"keys": "echo typed-2", "pane_id": pane.pane_id}),
            ("send_keys_batch", {"operations": [{"keys": "x", "pane_id": pane.pane_id}]}),
            ("paste_text", {"text": "echo typed-3", "pane_id": pane.pane_id}),
            ("adopt_pane", {"pane_id": pane.pane_id}),
        ]
        for tool, arguments in attempts:
            result = await client.call_tool(tool, arguments)
            assert result.is_error, tool
            assert "write_scope 'owned'" in text_of(result)
            assert "'all'" in text_of(result)
        made = await client.call_tool(
            "create_session", {"session_name": f"p{uuid.uuid4().hex[:6]}"}
        )
        assert not made.is_error, text_of(made)
        assert made.structured_content is not None
        session = made.structured_content
        owned_pane = tmux(
            main_tmux_socket, "list-panes", "-t", session["session_id"], "-F", "#{pane_id}"
        ).strip()
        try:
            ran = await client.call_tool(
                "run_command", {"command": "echo in-scope", "pane_id": owned_pane}
            )
            assert not ran.is_error, text_of(ran)
        finally:
            tmux(main_tmux_socket, "kill-session", "-t", session["session_id"])
    assert screen(pane) == before
    assert all(record["outcome"] == "policy_denied" for record in records(log)[:5])


async def test_an_approval_or_an_allow_rule_never_widens_the_write_scope(
    anyio_backend: str, make_context: Contexts, main_tmux_socket: str, tmp_path: Path
) -> None:
    pane = new_pane(main_tmux_socket)
    before = screen(pane)
    target = marker_file()
    rules = RULES.replace('watched = "allow"', 'write_scope = "agent"')
    rules += "\n[[rules]]\npattern = '^echo'\naction = \"allow\"\n"
    async with governed(
        make_context, main_tmux_socket, tmp_path, rules, person=Person("accept")
    ) as (client, _):
        for command in (f"touch {target}", "echo allowed"):
            result = await client.call_tool(
                "run_command", {"command": command, "pane_id": pane.pane_id}
            )
            assert result.is_error
            assert "write_scope 'agent'" in text_of(result)
    assert not target.exists()
    assert screen(pane) == before


@contextmanager
def watched_pane(main_tmux_socket: str, other_tmux_socket: str) -> Iterator[Pane]:
    """A pane of the main server that a person watches: a terminal attached to it (a tmux
    client running in another server's pane), gone when the block ends."""
    pane = new_pane(main_tmux_socket)
    watcher = new_pane(
        other_tmux_socket,
        command=f"env -u TMUX tmux -L {main_tmux_socket} attach -t ={pane.session_name}",
    )
    try:  # the attach is the watcher's own process: until the client shows the pane
        wait_until(
            lambda: pane.pane_id in tmux(main_tmux_socket, "list-clients", "-F", "#{pane_id}")
        )
        yield pane
    finally:
        tmux(other_tmux_socket, "kill-session", "-t", watcher.session_id)


async def test_a_watched_pane_is_asked_about(
    anyio_backend: str,
    make_context: Contexts,
    main_tmux_socket: str,
    other_tmux_socket: str,
    tmp_path: Path,
) -> None:
    """A terminal attached to the pane makes typing there an ask; declined, nothing is
    typed."""
    with watched_pane(main_tmux_socket, other_tmux_socket) as pane:
        person = Person("decline")
        async with governed(make_context, main_tmux_socket, tmp_path, "", person=person) as (
            client,
            log,
        ):
            result = await client.call_tool(
                "send_keys", {"keys": "echo watched-typed", "pane_id": pane.pane_id}
            )
        assert result.is_error
        assert "declined" in text_of(result)
        assert person.shown
        assert "watching" in person.shown[0]
        assert "watched-typed" not in screen(pane)
        # the first round asked (input_required), the retry carried the answer
        decided = [record["policy"] for record in records(log)]
        assert decided == [
            {"action": "ask", "reason": "watched"},
            {"action": "ask", "answer": "decline"},
        ]


async def test_force_skips_the_watched_pane_ask_and_nothing_else(
    anyio_backend: str,
    make_context: Contexts,
    main_tmux_socket: str,
    other_tmux_socket: str,
    tmp_path: Path,
) -> None:
    """``force`` says the caller knows a person watches: typing there needs no ask. A
    rule's ask is still asked (and declined, nothing runs), a deny still denies, and a
    call without force is still asked about the same pane."""
    victim = tmp_path / "victim"
    victim.mkdir()
    asked = marker_file()
    rules = RULES.replace('watched = "allow"\n', "")  # watched = "ask", the default
    person = Person("decline")
    with watched_pane(main_tmux_socket, other_tmux_socket) as pane:
        async with governed(make_context, main_tmux_socket, tmp_path, rules, person=person) as (
            client,
            log,
        ):
            forced = await client.call_tool(
                "send_keys", {"keys": "echo forced-typed", "pane_id": pane.pane_id, "force": True}
            )
            assert not forced.is_error, text_of(forced)
            assert person.shown == []
            wait_until(lambda: "forced-typed" in screen(pane))
            ran = await client.call_tool(
                "run_command",
                {"command": "echo run-forced", "pane_id": pane.pane_id, "force": True},
            )
            assert not ran.is_error, text_of(ran)
            assert person.shown == []
            unforced = await client.call_tool(
                "send_keys", {"keys": "echo unforced-typed", "pane_id": pane.pane_id}
            )
            assert unforced.is_error
            assert len(person.shown) == 1
            assert "watching" in person.shown[0]
            rule_asks = await client.call_tool(
                "send_keys", {"keys": f"touch {asked}", "pane_id": pane.pane_id, "force": True}
            )
            assert rule_asks.is_error
            assert "declined" in text_of(rule_asks)
            assert len(person.shown) == 2
            assert "the rule at line" in person.shown[1]
            denied = await client.call_tool(
                "send_keys", {"keys": f"rm -rf {victim}", "pane_id": pane.pane_id, "force": True}
            )
            assert denied.is_error
            assert "refused by the policy" in text_of(denied)
            assert len(person.shown) == 2
        assert "unforced-typed" not in screen(pane)
        # watched = "deny" is the person's standing word: force does not move it
        (tmp_path / "deny").mkdir()
        refusing = 'watched = "deny"\n'
        async with governed(make_context, main_tmux_socket, tmp_path / "deny", refusing) as (
            client,
            _,
        ):
            refused = await client.call_tool(
                "send_keys", {"keys": "echo denied-typed", "pane_id": pane.pane_id, "force": True}
            )
            assert refused.is_error
            assert "watched = 'deny'" in text_of(refused)
        assert "denied-typed" not in screen(pane)
    assert not asked.exists()
    assert victim.is_dir()
    lines = records(log)
    assert [line["arguments"].get("force") for line in lines] == [
        True, True, None, None, True, True, True
    ]  # fmt: skip
    assert [line["policy"] for line in lines] == [
        {"action": "allow", "reason": "force"},
        {"action": "allow", "reason": "force"},
        {"action": "ask", "reason": "watched"},
        {"action": "ask", "answer": "decline"},
        {"action": "ask", "rule_line": 6},
        {"action": "ask", "answer": "decline"},
        {"action": "deny", "rule_line": 2},
    ]


@pytest.mark.parametrize(
    "hostile",
    ["true", "yes; rm -rf ~", 1, 0, None, [True], {"force": True}, "#{pane_id}"],
)
async def test_force_is_a_boolean_or_refused_with_nothing_typed(
    anyio_backend: str, make_context: Contexts, main_tmux_socket: str, tmp_path: Path, hostile: Any
) -> None:
    pane = new_pane(main_tmux_socket)
    before = screen(pane)
    async with governed(make_context, main_tmux_socket, tmp_path, "") as (client, _):
        for tool, arguments in (
            ("send_keys", {"keys": "echo typed", "pane_id": pane.pane_id}),
            ("run_command", {"command": "echo typed", "pane_id": pane.pane_id}),
            ("send_keys_batch", {"operations": [{"keys": "x", "pane_id": pane.pane_id}]}),
        ):
            result = await client.call_tool(tool, {**arguments, "force": hostile})
            assert result.is_error, tool
            assert "Invalid arguments" in text_of(result)
            assert "boolean" in text_of(result)
    assert screen(pane) == before


async def test_force_never_widens_the_write_scope(
    anyio_backend: str, make_context: Contexts, main_tmux_socket: str, tmp_path: Path
) -> None:
    pane = new_pane(main_tmux_socket)
    before = screen(pane)
    async with governed(make_context, main_tmux_socket, tmp_path, 'write_scope = "agent"\n') as (
        client,
        _,
    ):
        result = await client.call_tool(
            "send_keys", {"keys": "echo typed", "pane_id": pane.pane_id, "force": True}
        )
        assert result.is_error
        assert "write_scope 'agent'" in text_of(result)
    assert screen(pane) == before


AWS_KEY = "AKIAIOSFODNN7EXAMPLE"
GITHUB_TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


async def test_printed_secrets_never_reach_the_client_or_the_audit_log(
    anyio_backend: str, make_context: Contexts, main_tmux_socket: str, tmp_path: Path
) -> None:
    pane = new_pane(main_tmux_socket)
    # the command names the secrets too: the audit log records it
    command = f"printf '%s\\n' 'AWS_ACCESS_KEY_ID={AWS_KEY}' 'GH={GITHUB_TOKEN}'"
    async with governed(make_context, main_tmux_socket, tmp_path, "", mask_secrets=True) as (
        client,
        log,
    ):
        result = await client.call_tool(
            "run_command", {"command": command, "pane_id": pane.pane_id}
        )
        captured = await client.call_tool("capture_pane", {"pane_id": pane.pane_id})
        read = await client.read_resource(pane_uri("local", pane.pane_id))
        # a picture's text: SVG keeps every character as text, so what it draws shows
        pictured = await client.call_tool(
            "picture_pane", {"pane_id": pane.pane_id, "format": "svg"}
        )
    [image] = [block for block in pictured.content if isinstance(block, types.ImageContent)]
    svg = base64.b64decode(image.data).decode()
    assert "AWS_ACCESS_KEY_ID=" + "*" * len(AWS_KEY) in svg.replace("&#42;", "*")
    assert AWS_KEY not in svg
    assert GITHUB_TOKEN not in svg
    [content] = read.contents
    assert isinstance(content, types.TextResourceContents)
    assert AWS_KEY not in content.text
    assert GITHUB_TOKEN not in content.text
    assert "[masked GitHub Token: 40 chars]" in content.text
    for answer in (result, captured):
        seen = text_of(answer) + json.dumps(answer.structured_content)
        assert AWS_KEY not in seen
        assert GITHUB_TOKEN not in seen
        assert "[masked AWS Access Key: 20 chars]" in seen
        assert "[masked GitHub Token: 40 chars]" in seen
    assert "schemux masked 2 secret(s)" in text_of(result)
    logged = log.read_text()
    assert AWS_KEY not in logged
    assert GITHUB_TOKEN not in logged
    assert records(log)[0]["masked"] == 2


# an ask in a call run as a task (the io.modelcontextprotocol/tasks extension): the task
# says input_required with the question, and tasks/update carries the answer


def policy_file(tmp_path: Path, rules: str = RULES) -> str:
    path = tmp_path / "policy.toml"
    path.write_text(rules)
    return str(path)


def answer_of(action: Answer) -> dict[str, Any]:
    """An ElicitResult as a client sends it: accept with the form's approve ticked."""
    return (
        {"action": action, "content": {"approve": True}}
        if action == "accept"
        else {"action": action}
    )


@pytest.mark.parametrize("answer", ["accept", "decline", "cancel"])
def test_an_ask_in_a_task_waits_for_the_answer_tasks_update_carries(
    tmux_socket: str, tmp_path: Path, node_scripts: Path, answer: Answer
) -> None:
    marker = marker_file()
    pane = new_pane(tmux_socket)
    log = tmp_path / "audit.jsonl"
    options = ("--policy", policy_file(tmp_path), "--audit-log", str(log))
    server = RawStdio(tmux_socket, *options, elicitation=True)
    try:
        created = server.call(
            "run_command", {"command": f"touch {marker}", "pane_id": pane.pane_id}
        )
        task_id = created["taskId"]
        asking = server.ended(task_id)
        assert asking["status"] == "input_required"
        request = asking["inputRequests"]["schemux_approval"]
        assert request["method"] == "elicitation/create"
        assert request["params"]["mode"] == "form"
        assert f"touch {marker}" in request["params"]["message"]
        assert "the rule at line 7" in request["params"]["message"]
        assert not marker.exists()
        # an answer to no request it asked changes nothing: the task still asks
        update = {"taskId": task_id, "inputResponses": {"other": answer_of("accept")}}
        assert "result" in server.request("tasks/update", update)
        still = server.request("tasks/get", {"taskId": task_id})["result"]
        assert still["status"] == "input_required"
        update = {"taskId": task_id, "inputResponses": {"schemux_approval": answer_of(answer)}}
        updated = server.request("tasks/update", update)["result"]
        # checked by the extension's TypeScript package (its zod schemas of the wire)
        messages = [("GetTaskResultV2Schema", asking), ("UpdateTaskResultV2Schema", updated)]
        run_node(node_scripts, "tasks_schemas.mjs", given=json.dumps(messages))
        ended = server.ended(task_id)
        assert ended["status"] == "completed", ended
        result = ended["result"]
        if answer == "accept":
            assert not result.get("isError"), result
            assert marker.exists()
        else:
            assert result["isError"]
            said = "declined" if answer == "decline" else "dismissed the question"
            assert said in result["content"][0]["text"]
            assert not marker.exists()
    finally:
        server.close()
        marker.unlink(missing_ok=True)
    (line,) = records(log)  # the task's call, recorded once with the person's answer
    assert line["policy"] == {"action": "ask", "rule_line": 7, "answer": answer}


def test_a_task_cancelled_while_it_asks_runs_nothing(tmux_socket: str, tmp_path: Path) -> None:
    marker = marker_file()
    pane = new_pane(tmux_socket)
    server = RawStdio(tmux_socket, "--policy", policy_file(tmp_path), elicitation=True)
    try:
        created = server.call(
            "run_command", {"command": f"touch {marker}", "pane_id": pane.pane_id}
        )
        assert server.ended(created["taskId"])["status"] == "input_required"
        assert "result" in server.request("tasks/cancel", {"taskId": created["taskId"]})
        cancelled = server.request("tasks/get", {"taskId": created["taskId"]})["result"]
        assert cancelled["status"] == "cancelled"
        assert "inputRequests" not in cancelled
        update = {
            "taskId": created["taskId"],
            "inputResponses": {"schemux_approval": answer_of("accept")},
        }
        assert "result" in server.request("tasks/update", update)
    finally:
        server.close()
    assert not marker.exists()


def test_a_task_whose_client_cannot_elicit_is_refused_saying_how_to_allow(
    tmux_socket: str, tmp_path: Path
) -> None:
    marker = marker_file()
    pane = new_pane(tmux_socket)
    server = RawStdio(tmux_socket, "--policy", policy_file(tmp_path))
    try:
        created = server.call(
            "run_command", {"command": f"touch {marker}", "pane_id": pane.pane_id}
        )
        ended = server.ended(created["taskId"])
        assert ended["status"] == "completed"
        assert ended["result"]["isError"]
        assert "cannot ask" in ended["result"]["content"][0]["text"]
    finally:
        server.close()
    assert not marker.exists()


@pytest.mark.parametrize("answer", ["accept", "decline"])
def test_the_extensions_typescript_requester_answers_an_ask_through_its_task(
    tmux_socket: str, tmp_path: Path, node_scripts: Path, answer: Answer
) -> None:
    marker = marker_file()
    port = free_port()
    process = serve_http(tmux_socket, port, "--policy", policy_file(tmp_path))
    try:
        wait_until(lambda: listening(port), timeout=20)
        url = f"http://127.0.0.1:{port}/mcp"
        output = run_node(node_scripts, "tasks_asker.mjs", url, f"touch {marker}", answer)
        told = json.loads(output.splitlines()[-1])
        assert len(told["shown"]) == 1
        assert told["shown"][0]["kind"] == "elicitation"
        assert told["shown"][0]["delivery"] == "task-update"
        assert f"touch {marker}" in told["shown"][0]["message"]
        assert told["isError"] is (answer != "accept")
        assert marker.exists() is (answer == "accept")
    finally:
        process.terminate()
        process.wait(timeout=10)
        marker.unlink(missing_ok=True)
