"""FastMCP's wrapped results: the convention codegen's check recognises, and the text
the server sends for a wrapped value."""

from __future__ import annotations

import json
from typing import Any

from codegen.validation import document_problems, wraps_result
from schemux.serving.server import tool_result

WRAPPED = {
    "type": "object",
    "properties": {"result": {"type": "string"}},
    "required": ["result"],
    "x-fastmcp-wrap-result": True,
}


def document(output_schema: dict[str, Any]) -> dict[str, Any]:
    return {"name": "tool", "inputSchema": {"type": "object"}, "outputSchema": output_schema}


def test_the_wrapped_result_convention_is_recognised_and_checked() -> None:
    assert wraps_result(WRAPPED)
    assert document_problems(document(WRAPPED)) == []
    assert not wraps_result({**WRAPPED, "x-fastmcp-wrap-result": False})
    extra = {**WRAPPED, "properties": {"result": {}, "more": {}}}
    (problem,) = document_problems(document(extra))
    assert "x-fastmcp-wrap-result needs exactly one property, 'result', required" in problem
    assert document_problems(document({**WRAPPED, "required": []}))


def test_a_wrapped_value_is_the_text_as_fastmcp_sends_it() -> None:
    sent = tool_result({"result": "Keys sent to pane %1"}, wrapped=True)
    assert sent.structured_content == {"result": "Keys sent to pane %1"}
    assert [block.text for block in sent.content if block.type == "text"] == [
        "Keys sent to pane %1"
    ]
    listed = tool_result({"result": ["a", "b"]}, wrapped=True)
    assert [json.loads(b.text) for b in listed.content if b.type == "text"] == [["a", "b"]]
    plain = tool_result({"result": "x"})
    assert [json.loads(b.text) for b in plain.content if b.type == "text"] == [{"result": "x"}]
