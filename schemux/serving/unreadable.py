"""An answer for every stdio line the MCP SDK could not read as a JSON-RPC message.

The SDK's stdio transport hands the server an exception for such a line, which the
server only logs: the client then waits out its own timeout. A lone surrogate escape
(``"\\ud800"``) is the common case: JSON's grammar spells one, but it is no Unicode text,
and the SDK's parser refuses the whole line. Each such line gets the JSON-RPC error its
spec prescribes: ``-32700`` (parse error, id null) for text that is not JSON at all; for
JSON that is no valid message, the request's own id when one can be read (so the client's
call ends at once), with ``-32602`` when the fault lies in its params and ``-32600``
otherwise; id null when no id can be read. The error names where the fault is and never
repeats the text. A blank line is no message, and gets no answer.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
from anyio.abc import ObjectReceiveStream, ObjectSendStream
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from schemux.errors import PREVIEW_CHARACTERS, shorten

_SURROGATE = re.compile("[\ud800-\udfff]")

Item = SessionMessage | Exception


@asynccontextmanager
async def answering_unreadable(
    read_stream: ObjectReceiveStream[Item], write_stream: ObjectSendStream[SessionMessage]
) -> AsyncIterator[ObjectReceiveStream[Item]]:
    """``read_stream`` without its exceptions: each is answered on ``write_stream``."""
    readable_in, readable = anyio.create_memory_object_stream[Item](0)

    async def forward() -> None:
        async with readable_in:
            async for item in read_stream:
                if isinstance(item, Exception):
                    reply = error_reply(item)
                    if reply is not None:
                        await write_stream.send(SessionMessage(reply))
                else:
                    await readable_in.send(item)

    async with anyio.create_task_group() as group:
        group.start_soon(forward)
        yield readable
        group.cancel_scope.cancel()


def error_reply(error: Exception) -> types.JSONRPCError | None:
    """The JSON-RPC error for a line the transport failed to read with ``error``; None
    for a blank line, which is no message at all."""
    if _blank_line(error):
        return None
    message = _message_of(error)
    if message is None:
        return _reply(None, types.PARSE_ERROR, "Parse error: the line is not JSON")
    request_id = message.get("id") if isinstance(message, dict) else None
    if not _readable_id(request_id) or not isinstance(message, dict) or "method" not in message:
        request_id = None  # no request, or no id the client could match
    fault = _lone_surrogate(message)
    if fault is None:
        return _reply(
            request_id,
            types.INVALID_REQUEST,
            "Invalid Request: the JSON is not a JSON-RPC 2.0 message",
        )
    path, found = fault
    code = types.INVALID_PARAMS if path.startswith("params") else types.INVALID_REQUEST
    kind = "Invalid params" if code == types.INVALID_PARAMS else "Invalid Request"
    return _reply(request_id, code, f"{kind}: {path or '(message)'} {found}")


def _message_of(error: Exception) -> Any | None:
    """The JSON value of the line, as Python's parser reads it (lone surrogates kept), or
    None when the line is not JSON; from the SDK's validation error, which holds the line
    (invalid for its parser) or the parsed value (no valid message)."""
    if not isinstance(error, ValidationError):
        return None
    details = error.errors()
    for detail in details:
        if detail["type"] == "json_invalid" and isinstance(detail["input"], str):
            try:
                return json.loads(detail["input"])
            except ValueError:
                return None
    for detail in details:  # the union's member errors: some hold the whole message
        if isinstance(detail["input"], dict):
            return detail["input"]
    return details[0]["input"] if details else None


def _blank_line(error: Exception) -> bool:
    if not isinstance(error, ValidationError):
        return False
    line = error.errors()[0]["input"] if error.errors() else None
    return isinstance(line, str) and not line.strip()


def _readable_id(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, str) and not _SURROGATE.search(value))


def _lone_surrogate(value: Any, path: str = "") -> tuple[str, str] | None:
    """Where the first lone surrogate is (a path such as ``params.arguments.keys``), and
    what it is; None when the value holds none."""
    for where, text in _texts(value, path):
        surrogate = _SURROGATE.search(text)
        if surrogate is not None:
            return where, (
                f"contains U+{ord(surrogate.group()):04X} at index {surrogate.start()}, "
                "a lone surrogate, which is not Unicode text"
            )
    return None


def _texts(value: Any, path: str) -> Iterator[tuple[str, str]]:
    """Every string in ``value`` (member names too), with its path."""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            name = _name(key)
            yield f"{path}[{name}]" if path else f"[{name}]", key  # the member's name
            yield from _texts(item, f"{path}.{name}" if path else name)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _texts(item, f"{path}[{index}]")


def _name(key: str) -> str:
    """A member's name for a path: as it is, or escaped and cut short when it is long or
    not plain text."""
    if len(key) > PREVIEW_CHARACTERS or not key.isprintable() or _SURROGATE.search(key):
        return shorten(ascii(key), PREVIEW_CHARACTERS)
    return key


def _reply(request_id: int | str | None, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(
        jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message)
    )
