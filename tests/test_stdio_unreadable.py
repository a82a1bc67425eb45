"""A stdio line the SDK cannot read as a JSON-RPC message gets the JSON-RPC error its spec
prescribes, with the request's id when one can be read, and the server serves on."""

from __future__ import annotations

import json
import select
import subprocess
from typing import Any

import pytest

from tests.test_exit_paths import serve_stdio

NOT_UNICODE = "contains U+D800 at index 0, a lone surrogate, which is not Unicode text"

UNREADABLE = [
    (
        r'{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"send_keys",'
        r'"arguments":{"keys":"\ud800","pane_id":"%0"}}}',
        11, -32602, f"Invalid params: params.arguments.keys {NOT_UNICODE}",
    ),
    (
        r'{"jsonrpc":"2.0","id":"twelve","method":"tools/list","params":{"cursor":"\ud800"}}',
        "twelve", -32602, f"Invalid params: params.cursor {NOT_UNICODE}",
    ),
    (
        r'{"jsonrpc":"2.0","id":13,"method":"\ud800"}',
        13, -32600, f"Invalid Request: method {NOT_UNICODE}",
    ),
    (
        r'{"jsonrpc":"2.0","id":"\ud800","method":"ping"}',
        None, -32600, f"Invalid Request: id {NOT_UNICODE}",
    ),
    (
        r'{"jsonrpc":"2.0","method":"x","params":{"\ud800":1}}',
        None, -32602, f"Invalid params: params['\\ud800'] {NOT_UNICODE}",
    ),
    ("{not json", None, -32700, "Parse error: the line is not JSON"),
    ('{"jsonrpc":"2.0","id":14}', None, -32600,
     "Invalid Request: the JSON is not a JSON-RPC 2.0 message"),
    ("[1, 2]", None, -32600, "Invalid Request: the JSON is not a JSON-RPC 2.0 message"),
]  # fmt: skip


def reply(process: subprocess.Popen[bytes]) -> dict[str, Any]:
    """The next line the server writes, within 5 s."""
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], 5)
    assert ready, "no answer within 5 s"
    answer: dict[str, Any] = json.loads(process.stdout.readline())
    return answer


def test_unreadable_lines_are_answered_and_the_server_serves_on(tmux_socket: str) -> None:
    process = serve_stdio(tmux_socket)
    assert process.stdin is not None
    try:
        for line, request_id, code, message in UNREADABLE:
            process.stdin.write(line.encode() + b"\n\n")  # a blank line is no message
            process.stdin.flush()
            answer = reply(process)
            assert answer == {
                "jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message},
            }, line  # fmt: skip
        process.stdin.write(b'{"jsonrpc":"2.0","id":15,"method":"ping"}\n')
        process.stdin.flush()
        assert reply(process) == {"jsonrpc": "2.0", "id": 15, "result": {}}
    finally:
        process.stdin.close()
        process.wait(timeout=10)
    assert process.returncode == 0


@pytest.mark.parametrize("line", [b"\n", b"  \n"])
def test_blank_lines_get_no_answer(tmux_socket: str, line: bytes) -> None:
    process = serve_stdio(tmux_socket)
    assert process.stdin is not None
    try:
        process.stdin.write(line + b'{"jsonrpc":"2.0","id":16,"method":"ping"}\n')
        process.stdin.flush()
        assert reply(process) == {"jsonrpc": "2.0", "id": 16, "result": {}}
    finally:
        process.stdin.close()
        process.wait(timeout=10)
