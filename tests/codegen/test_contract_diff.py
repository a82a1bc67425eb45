"""The contract diff: a pure function of two tool documents."""

from __future__ import annotations

import copy
from typing import Any

from codegen.contract_diff import Change, diff_tool, diff_tools, format_report

TOOL: dict[str, Any] = {
    "name": "probe",
    "description": "Probe a pane.",
    "inputSchema": {
        "type": "object",
        "properties": {
            "pane_id": {"type": "string"},
            "lines": {"anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}]},
            "mode": {"type": "string", "enum": ["fast", "slow"]},
        },
        "required": ["pane_id"],
        "additionalProperties": False,
    },
    "outputSchema": {
        "type": "object",
        "properties": {
            "status": {"type": "string", "enum": ["ok", "gone"]},
            "elapsed": {"type": "number"},
            "rows": {"type": "array", "items": {"type": "string"}, "maxItems": 10},
            "target": {
                "oneOf": [
                    {
                        "type": "object",
                        "properties": {"kind": {"const": "pane"}, "id": {"type": "string"}},
                        "required": ["kind", "id"],
                    }
                ]
            },
        },
        "required": ["status", "elapsed", "rows"],
    },
    "annotations": {"readOnlyHint": True},
}


def changed(edit: Any) -> list[tuple[str, str, bool]]:
    """(where, what, breaking) of each change that ``edit`` makes to a copy of TOOL."""
    new = copy.deepcopy(TOOL)
    edit(new)
    return [(c.where, c.what, c.breaking) for c in diff_tool("probe", TOOL, new)]


def test_identical_documents_have_no_changes() -> None:
    assert diff_tool("probe", TOOL, copy.deepcopy(TOOL)) == []


def test_new_required_input_breaks_and_new_optional_input_does_not() -> None:
    def edit(tool: dict[str, Any]) -> None:
        tool["inputSchema"]["properties"]["shell"] = {"type": "string"}
        tool["inputSchema"]["properties"]["quiet"] = {"type": "boolean"}
        tool["inputSchema"]["required"].append("shell")

    assert changed(edit) == [
        ("input.quiet", "new optional input", False),
        ("input.shell", "new required input", True),
    ]


def test_input_that_became_required_breaks_and_optional_is_compatible() -> None:
    def edit(tool: dict[str, Any]) -> None:
        tool["inputSchema"]["required"] = ["mode"]

    assert changed(edit) == [
        ("input.mode", "now required", True),
        ("input.pane_id", "no longer required", False),
    ]


def test_removed_output_field_and_output_no_longer_required_break() -> None:
    def edit(tool: dict[str, Any]) -> None:
        del tool["outputSchema"]["properties"]["rows"]
        tool["outputSchema"]["required"] = ["status"]

    assert changed(edit) == [
        ("output.elapsed", "no longer required", True),
        ("output.rows", "output field removed", True),
    ]


def test_new_output_field_and_newly_required_output_are_compatible() -> None:
    def edit(tool: dict[str, Any]) -> None:
        tool["outputSchema"]["properties"]["pane"] = {"type": "string"}
        tool["outputSchema"]["required"].append("target")

    assert changed(edit) == [
        ("output.pane", "new output field", False),
        ("output.target", "now required", False),
    ]


def test_changed_types() -> None:
    def edit(tool: dict[str, Any]) -> None:
        tool["outputSchema"]["properties"]["elapsed"]["type"] = "string"
        tool["inputSchema"]["properties"]["pane_id"]["type"] = "integer"

    assert changed(edit) == [
        ("input.pane_id", "type changed: string -> integer", True),
        ("output.elapsed", "type changed: number -> string", True),
    ]


def test_widened_input_type_is_compatible_narrowed_output_type_is_not() -> None:
    def edit(tool: dict[str, Any]) -> None:
        # anyOf [integer, null] is read as integer|null; number covers integer.
        tool["inputSchema"]["properties"]["lines"]["anyOf"][0]["type"] = "number"
        tool["outputSchema"]["properties"]["elapsed"]["type"] = "integer"

    assert changed(edit) == [
        ("input.lines", "type widened: integer|null -> null|number", False),
        ("output.elapsed", "type changed: number -> integer", True),
    ]


def test_enum_changes() -> None:
    def edit(tool: dict[str, Any]) -> None:
        tool["inputSchema"]["properties"]["mode"]["enum"] = ["fast", "slow", "auto"]
        tool["inputSchema"]["properties"]["pane_id"]["enum"] = ["%1"]
        tool["outputSchema"]["properties"]["status"]["enum"] = ["ok", "stopped"]

    assert changed(edit) == [
        ("input.mode", 'new values "auto"', False),
        ("input.pane_id", 'now restricted to "%1"', True),
        ("output.status", 'new values "stopped"', True),
        ("output.status", 'values removed "gone"', True),
    ]


def test_bounds_break_inputs_when_tighter_and_outputs_when_looser() -> None:
    def edit(tool: dict[str, Any]) -> None:
        tool["inputSchema"]["properties"]["lines"]["anyOf"][0]["minimum"] = 5
        tool["outputSchema"]["properties"]["rows"]["maxItems"] = 20

    assert changed(edit) == [
        ("input.lines", "minimum 1 -> 5", True),
        ("output.rows", "maxItems 10 -> 20", True),
    ]


def test_nested_variant_fields_and_array_items_are_walked() -> None:
    def edit(tool: dict[str, Any]) -> None:
        variants = tool["outputSchema"]["properties"]["target"]["oneOf"]
        variants[0]["properties"]["kind"]["const"] = "window"
        variants[0]["properties"]["generation"] = {"type": "string"}
        variants.append({"type": "object", "properties": {"kind": {"const": "session"}}})
        tool["outputSchema"]["properties"]["rows"]["items"]["type"] = "integer"

    assert changed(edit) == [
        ("output.rows[]", "type changed: string -> integer", True),
        ("output.target.oneOf[0].generation", "new output field", False),
        ("output.target.oneOf[0].kind", 'new values "window"', True),
        ("output.target.oneOf[0].kind", 'values removed "pane"', True),
        ("output.target.oneOf[1]", "variant added", True),
    ]


def test_input_variants_added_are_compatible_removed_break() -> None:
    def edit(tool: dict[str, Any]) -> None:
        tool["inputSchema"]["properties"]["mode"] = {"oneOf": [{"type": "string"}]}

    widened = changed(edit)
    new = copy.deepcopy(TOOL)
    edit(new)
    new["inputSchema"]["properties"]["mode"]["oneOf"].append({"type": "integer"})

    assert ("input.mode.oneOf[0]", "variant added", False) in widened
    assert [(c.where, c.what, c.breaking) for c in diff_tool("probe", new, TOOL)][-1] == (
        "input.mode.oneOf[1]",
        "variant removed",
        True,
    )


def test_documentation_changes_are_compatible() -> None:
    def edit(tool: dict[str, Any]) -> None:
        tool["description"] = "Probe a pane, gently."
        tool["annotations"]["readOnlyHint"] = False
        tool["inputSchema"]["properties"]["pane_id"]["description"] = "The pane."

    assert changed(edit) == [
        ("tool.description", "description changed", False),
        ("tool.annotations.readOnlyHint", "true -> false", False),
        ("input.pane_id", "description changed", False),
    ]


def test_closing_an_input_object_or_opening_an_output_object_breaks() -> None:
    opened_input = copy.deepcopy(TOOL)
    del opened_input["inputSchema"]["additionalProperties"]
    closed_output = copy.deepcopy(TOOL)
    closed_output["outputSchema"]["additionalProperties"] = False

    assert diff_tool("probe", opened_input, TOOL) == [
        Change("probe", "input", "no other properties allowed", breaking=True)
    ]
    assert diff_tool("probe", closed_output, TOOL) == [
        Change("probe", "output", "other properties allowed", breaking=True)
    ]
    assert diff_tool("probe", TOOL, opened_input)[0].breaking is False
    assert diff_tool("probe", TOOL, closed_output)[0].breaking is False


def test_new_and_removed_tools() -> None:
    other = {**copy.deepcopy(TOOL), "name": "other"}

    changes = diff_tools({"probe": TOOL}, {"other": other})

    assert changes == [
        Change("other", "tool", "new tool", breaking=False),
        Change("probe", "tool", "tool removed", breaking=True),
    ]


def test_report_groups_changes_by_tool() -> None:
    report = format_report(
        [
            Change("other", "tool", "new tool", breaking=False),
            Change("probe", "input.shell", "new required input", breaking=True),
            Change("probe", "output.pane", "new output field", breaking=False),
        ]
    )

    assert report == (
        "Contract changes:\n"
        "  other\n"
        "    compatible  tool: new tool\n"
        "  probe\n"
        "    BREAKING    input.shell: new required input\n"
        "    compatible  output.pane: new output field\n"
    )
    assert format_report([]) == ""
