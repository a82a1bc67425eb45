"""A served document as JSON Patch edits over its contract, and the runtime making them."""

from __future__ import annotations

import json
from typing import Any

import pytest

from codegen.document_edits import document_edits
from schemux.serving.binding import edited
from tests.generated_data import SERVED_DOCUMENTS, TOOL_DOCUMENTS

CONTRACT: dict[str, Any] = {
    "name": "t",
    "description": "Contract.",
    "inputSchema": {
        "properties": {
            "a/b": {"type": "string", "title": "slash"},
            "~x": {"type": "integer", "default": 1},
        },
        "oneOf": [{"required": ["a/b"]}, {"required": ["~x"]}],
        "enum": [True, 1],
    },
    "_meta": {"io.schemux/provenance": {"origin": "authored"}},
}


@pytest.mark.parametrize(
    ("served", "ops"),
    [
        ({k: v for k, v in CONTRACT.items() if k != "_meta"}, [("remove", "/_meta")]),
        ({**CONTRACT, "description": "Served."}, [("replace", "/description")]),
        ({**CONTRACT, "annotations": {"readOnlyHint": True}}, [("add", "/annotations")]),
        (
            json.loads(json.dumps(CONTRACT).replace('"title": "slash"', '"title": "/~"')),
            [("replace", "/inputSchema/properties/a~1b/title")],
        ),
        (
            json.loads(json.dumps(CONTRACT).replace('"default": 1', '"default": true')),
            [("replace", "/inputSchema/properties/~0x/default")],  # true is not 1
        ),
        (
            json.loads(json.dumps(CONTRACT).replace('["~x"]', '["a/b", "~x"]')),
            [("replace", "/inputSchema/oneOf/1/required")],  # a list of another length
        ),
        (
            json.loads(json.dumps(CONTRACT).replace("[true, 1]", "[1, true]")),
            [("replace", "/inputSchema/enum/0"), ("replace", "/inputSchema/enum/1")],
        ),
    ],
)
def test_edits_name_what_changed_and_make_the_served_document(
    served: dict[str, Any], ops: list[tuple[str, str]]
) -> None:
    before = json.dumps(CONTRACT)

    edits = document_edits(CONTRACT, served)
    made = edited(CONTRACT, edits)

    assert [(edit["op"], edit["path"]) for edit in edits] == ops
    assert json.dumps(made) == json.dumps(served)  # key order too
    assert json.dumps(CONTRACT) == before  # the contract is left as it was
    assert made["inputSchema"] is CONTRACT["inputSchema"] or ops[0][1].startswith("/inputSchema")


def test_no_edits_make_an_equal_copy() -> None:
    assert document_edits(CONTRACT, CONTRACT) == []
    made = edited(CONTRACT, [])
    assert made == CONTRACT
    assert made is not CONTRACT


@pytest.mark.parametrize("name", sorted(TOOL_DOCUMENTS))
def test_every_tool_s_served_document_is_its_contract_edited(name: str) -> None:
    contract, served = TOOL_DOCUMENTS[name], SERVED_DOCUMENTS[name]

    made = edited(contract, document_edits(contract, served))

    assert json.dumps(made) == json.dumps(served)
