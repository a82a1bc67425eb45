"""Overlays: one authored file per tool over its contract, checked before anything is
generated, and the source of the runtime's per-tool tables."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from codegen.__main__ import main
from codegen.importer import ImportFailed
from codegen.models import model_source
from codegen.overlays import (
    HINTS,
    RESOURCE_KINDS,
    TARGET_KINDS,
    Overlay,
    checked,
    extended,
    load_overlays,
    overlaid,
    overlay_problems,
)
from codegen.pipeline import make_plan
from schemux.generated.argument_facts import (
    ARGUMENT_SYNONYMS,
    HOST_STAMPED_ARGUMENTS,
    REDACTED_ARGUMENTS,
    TARGET_ARGUMENTS,
)
from schemux.generated.bindings import BINDINGS
from schemux.generated.tool_facts import (
    EVERY_HOST_LISTS,
    FAMILIES,
    JOBS,
    NEVER_SENT,
    ON_REQUEST_FAMILIES,
    RECIPES,
    RESOURCE_READERS,
    USES,
)
from schemux.policy.rules import TYPING_TOOLS
from tests.codegen.overlay_files import OVERLAYS, write_overlay
from tests.generated_data import TOOL_DOCUMENTS


def test_every_served_tool_has_an_overlay_and_the_tables_are_theirs(repo_root: Path) -> None:
    overlays, problems = load_overlays(repo_root)
    assert problems == []
    assert overlay_problems(overlays, TOOL_DOCUMENTS, sorted(BINDINGS)) == []
    assert set(overlays.by_tool) == set(BINDINGS)
    in_order = sorted(overlays.by_tool.values(), key=lambda o: (o.order, o.tool))
    assert {
        family.name: tuple(o.tool for o in in_order if o.family == family.name)
        for family in overlays.families
    } == FAMILIES
    assert {family.name: family.job for family in overlays.families} == JOBS
    assert tuple(f.name for f in overlays.families if f.on_request) == ON_REQUEST_FAMILIES
    assert {o.tool: o.use for o in in_order} == USES
    assert NEVER_SENT == {
        "run_program": ("input",), "start_program": ("input",), "load_buffer": ("content",),
        "paste_text": ("text",),
    }  # fmt: skip
    assert {
        kind: tuple(sorted(o.tool for o in in_order if kind in o.resources))
        for kind in RESOURCE_KINDS
    } == RESOURCE_READERS
    assert all(RESOURCE_READERS.values())  # each kind is read by some tool
    assert {
        o.tool: o.every_host_list for o in in_order if o.every_host_list is not None
    } == EVERY_HOST_LISTS
    assert tuple((recipe.needs, recipe.text) for recipe in overlays.recipes) == RECIPES
    assert overlays.synonyms == ARGUMENT_SYNONYMS
    everyone = overlays.by_tool.values()
    assert {name for o in everyone for name in o.redacted} == REDACTED_ARGUMENTS
    assert {
        kind: tuple(sorted({name for o in everyone for name in o.targets.get(kind, ())}))
        for kind in TARGET_KINDS
    } == TARGET_ARGUMENTS
    assert {name for o in everyone for name in o.host_stamped} == HOST_STAMPED_ARGUMENTS
    for overlay in overlays.by_tool.values():
        assert all(why.strip() for why in overlay.why.values())  # every hint says why


def test_a_served_tool_without_an_overlay_stops_codegen_saying_what_to_write(
    repo: Path,
) -> None:
    (repo / OVERLAYS / "send_keys.toml").unlink()
    with pytest.raises(ImportFailed) as stopped:
        make_plan(repo)
    assert stopped.value.problems == [
        "send_keys is served (handlers/send_keys.py) but has no overlay: write "
        "schemas/overlays/send_keys.toml (CONTRIBUTING.md, 'Overlays')"
    ]


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (
            lambda text: text.replace('why = "it types into the pane: send-keys"\n', ""),
            "schemas/overlays/send_keys.toml: annotations/readOnlyHint: "
            "'why' is a required property",
        ),
        (
            lambda text: "color = 'blue'\n" + text,
            "schemas/overlays/send_keys.toml: (top): Additional properties are not allowed "
            "('color' was unexpected)",
        ),
        (
            lambda text: text.replace('family = "keys"', 'family = "chat"'),
            "schemas/overlays/send_keys.toml: family 'chat' is not in schemas/families.toml",
        ),
        (
            lambda text: text.replace(
                "[[advice]]", "[descriptions]\n'/inputSchema/x' = 'y'\n\n[[advice]]", 1
            ),
            "schemas/overlays/send_keys.toml: descriptions: /inputSchema/x is no schema of the "
            "contract",
        ),
        (
            lambda text: text.replace('family = "keys"', 'family = "keys"\nnever_sent = ["text"]'),
            "schemas/overlays/send_keys.toml: never_sent: 'text' is no top-level argument of "
            "the contract",
        ),
        (
            lambda text: text.replace('needs = ["run_command"]', 'needs = ["get_client_info"]'),
            "schemas/overlays/send_keys.toml: advice needs 'get_client_info', which has no "
            "contract in schemas/tools/",
        ),
        (
            lambda text: text + "[[",
            "schemas/overlays/send_keys.toml: invalid TOML: ",
        ),
        (
            lambda text: text.replace('redacted = ["keys"]', 'redacted = ["text"]'),
            "schemas/overlays/send_keys.toml: redacted: 'text' is no argument of the contract, "
            "at any depth",
        ),
        (
            lambda text: text.replace('pane = ["pane_id"]', 'pane = ["paneId"]'),
            "schemas/overlays/send_keys.toml: targets.pane: 'paneId' is no top-level argument "
            "of the contract",
        ),
        (
            lambda text: text.replace('family = "keys"', 'family = "keys"\nhost_stamped = ["x"]'),
            "schemas/overlays/send_keys.toml: host_stamped: 'x' is no top-level argument of "
            "the contract",
        ),
        (
            lambda text: text.replace('family = "keys"', 'family = "keys"\nevery_host_list = "x"'),
            "schemas/overlays/send_keys.toml: every_host_list: 'x' is in no result of the contract",
        ),
        (
            lambda text: text + '[checks."/inputSchema/properties/nowhere"]\nminimum = 0\n',
            "schemas/overlays/send_keys.toml: checks: /inputSchema/properties/nowhere is no "
            "schema of the contract",
        ),
        (
            lambda text: text + '[checks."/inputSchema/properties/keys"]\ntype = "integer"\n',
            "schemas/overlays/send_keys.toml: checks: /inputSchema/properties/keys has type "
            "already; a check only adds",
        ),
        (
            lambda text: text + '[checks."/inputSchema/properties/keys"]\nminLength = "x"\n',
            "schemas/overlays/send_keys.toml: checks make the inputSchema invalid: ",
        ),
        (
            lambda text: text + '[checks."/inputSchema/properties/enter"]\nconst = false\n',
            "schemas/overlays/send_keys.toml: checks: /inputSchema/properties/enter refuses "
            "the contract's own default",
        ),
        (
            lambda text: text + '[arguments.enter]\ntype = "boolean"\ndescription = "E."\n',
            "schemas/overlays/send_keys.toml: arguments: 'enter' is an argument of the "
            "contract already; an overlay only adds",
        ),
        (
            lambda text: text + '[arguments.hurry]\ntype = "boolean"\n',
            "schemas/overlays/send_keys.toml: arguments/hurry: 'description' is a required "
            "property",
        ),
        (
            lambda text: (
                text + '[arguments.hurry]\ntype = "boolean"\ndefault = 3\ndescription = "H."\n'
            ),
            "schemas/overlays/send_keys.toml: arguments: 'hurry' refuses its own default",
        ),
        (
            lambda text: text + '[arguments.hurry]\ntype = "nothing"\ndescription = "H."\n',
            "schemas/overlays/send_keys.toml: checks make the inputSchema invalid: ",
        ),
    ],
)
def test_a_broken_overlay_is_refused_naming_its_file_and_field(
    repo: Path, change: object, problem: str
) -> None:
    path = repo / OVERLAYS / "send_keys.toml"
    path.write_text(change(path.read_text("utf-8")), "utf-8")  # type: ignore[operator]
    overlays, problems = load_overlays(repo)
    problems = problems or overlay_problems(overlays, TOOL_DOCUMENTS, sorted(BINDINGS))
    assert len(problems) == 1, problems
    assert problems[0].startswith(problem)


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (
            lambda text: text.replace('needs = ["run_command"]', 'needs = ["get_client_info"]'),
            "schemas/families.toml: a recipe needs 'get_client_info', which has no contract in "
            "schemas/tools/",
        ),
        (
            lambda text: text + '[[recipe]]\nneeds = ["run_command"]\n',
            "schemas/families.toml: each [[recipe]] has needs (tool names) and a text, not ",
        ),
        (
            lambda text: text + '[[synonyms]]\nwords = ["cwd"]\n',
            "schemas/families.toml: each [[synonyms]] has words (two argument names or more)",
        ),
        (
            lambda text: text + '[[family]]\nname = "extra"\njob = "X"\non_request = "yes"\n',
            "schemas/families.toml: each [[family]] has a name and a job (and may say "
            "on_request = true), not ",
        ),
        (
            lambda text: text + '[[family]]\nname = "all"\njob = "Everything"\n',
            "schemas/families.toml: no family may be named 'all' (--tools all)",
        ),
    ],
)
def test_a_broken_recipe_is_refused(repo: Path, change: object, problem: str) -> None:
    path = repo / "schemas" / "families.toml"
    path.write_text(change(path.read_text("utf-8")), "utf-8")  # type: ignore[operator]
    overlays, problems = load_overlays(repo)
    problems = problems or overlay_problems(overlays, TOOL_DOCUMENTS, sorted(BINDINGS))
    assert len(problems) == 1, problems
    assert problems[0].startswith(problem)


def test_checks_are_added_to_the_contract_that_validates_calls_only(repo_root: Path) -> None:
    overlays, _ = load_overlays(repo_root)
    overlay = overlays.by_tool["run_command_on_hosts"]
    contract = TOOL_DOCUMENTS["run_command_on_hosts"]
    before = copy.deepcopy(contract)
    validating = checked(contract, overlay)
    assert contract == before
    assert validating["inputSchema"]["properties"]["timeout"]["exclusiveMinimum"] == 0
    assert validating["inputSchema"]["not"]["required"] == ["hosts", "group"]
    # what tools/list says has the overlay's texts, and none of its checks
    told = overlaid(contract, overlay)
    assert "exclusiveMinimum" not in told["inputSchema"]["properties"]["timeout"]
    assert "not" not in told["inputSchema"]
    assert checked(contract, None) == contract


def test_overlaid_changes_texts_and_hints_and_never_the_contract(repo_root: Path) -> None:
    overlays, _ = load_overlays(repo_root)
    contract = TOOL_DOCUMENTS["run_command"]
    before = copy.deepcopy(contract)
    told = overlaid(contract, overlays.by_tool["run_command"])
    assert contract == before
    assert "_meta" not in told
    assert "_meta" in contract
    assert "LIBTMUX_SUPPRESS_HISTORY" not in json.dumps(told)
    assert told["description"] == overlays.by_tool["run_command"].description
    properties = told["inputSchema"]["properties"]
    assert properties["timeout"]["description"].startswith("Maximum seconds to wait")
    assert {k: v for k, v in properties["timeout"].items() if k != "description"} == {
        k: v
        for k, v in contract["inputSchema"]["properties"]["timeout"].items()
        if k != "description"
    }
    assert told["annotations"] == {
        "destructiveHint": True,
        "idempotentHint": False,
        "openWorldHint": True,
        "readOnlyHint": False,
    }
    # a tool without an overlay is its contract without _meta
    assert overlaid(contract, None) == {k: v for k, v in contract.items() if k != "_meta"}


def test_a_changed_overlay_is_reported_once(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_overlay(
        repo,
        "capture_pane",
        (repo / OVERLAYS / "capture_pane.toml")
        .read_text("utf-8")
        .replace("Capture a tmux pane's screen", "Read a tmux pane's screen"),
    )
    assert main(["--root", str(repo)]) == 0
    assert capsys.readouterr().out.startswith(
        "Overlays (tools/list over the contracts):\n"
        "  capture_pane\n"
        "    compatible  tool.description: description changed\n"
    )
    assert main(["--root", str(repo)]) == 0
    assert capsys.readouterr().out == ""


def test_an_overlay_replaces_or_removes_a_schema_title() -> None:
    contract: dict[str, Any] = {
        "name": "t",
        "description": "T.",
        "inputSchema": {"type": "object", "title": "TArgs"},
        "outputSchema": {"type": "object", "title": "TResultModel"},
    }
    overlay = Overlay(
        tool="t",
        family="keys",
        use="try",
        order=1,
        never_sent=(),
        task=False,
        several_hosts=False,
        description=None,
        descriptions={},
        titles={"/outputSchema": "", "/inputSchema": "The arguments"},
        advice=(),
        annotations=dict.fromkeys(HINTS, False),
        why=dict.fromkeys(HINTS, "a test"),
    )
    told = overlaid(contract, overlay)
    assert told["outputSchema"] == {"type": "object"}
    assert told["inputSchema"] == {"type": "object", "title": "The arguments"}
    assert contract["outputSchema"]["title"] == "TResultModel"


FORCE = {"type": "boolean", "default": False, "description": "Go on though a person watches."}


def test_an_overlays_own_argument_is_in_the_validating_contract_the_models_and_tools_list() -> None:
    contract: dict[str, Any] = {
        "name": "type_here",
        "description": "T.",
        "inputSchema": {
            "type": "object",
            "properties": {"keys": {"type": "string"}},
            "required": ["keys"],
            "additionalProperties": False,
        },
        "outputSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}},
    }
    before = copy.deepcopy(contract)
    overlay = Overlay(
        tool="type_here",
        family="keys",
        use="type",
        order=1,
        never_sent=(),
        task=False,
        several_hosts=False,
        description=None,
        descriptions={},
        titles={},
        advice=(),
        annotations=dict.fromkeys(HINTS, False),
        why=dict.fromkeys(HINTS, "a test"),
        arguments={"force": FORCE},
    )
    validating = checked(contract, overlay)
    assert contract == before  # the contract itself is left as it is
    assert validating["inputSchema"]["properties"] == {"keys": {"type": "string"}, "force": FORCE}
    assert validating["inputSchema"]["required"] == ["keys"]
    validator = Draft202012Validator(validating["inputSchema"])
    assert validator.is_valid({"keys": "x", "force": True})
    assert not validator.is_valid({"keys": "x", "force": "yes"})
    assert not validator.is_valid({"keys": "x", "forced": True})
    assert overlaid(contract, overlay)["inputSchema"]["properties"]["force"] == FORCE
    source = model_source(extended(contract, overlay))
    namespace: dict[str, Any] = {}
    exec(compile(source, "type_here.py", "exec"), namespace)
    model = namespace["TypeHereInput"]
    model.model_rebuild(_types_namespace=namespace)
    assert model.model_fields["force"].annotation is bool
    assert model(keys="x").force is False
    assert model.model_validate({"keys": "x", "force": True}).force is True
    # deterministic: the same inputs give the same text
    assert model_source(extended(contract, overlay)) == source
    assert extended(contract, None) == contract


def test_force_is_served_validated_and_modelled_for_the_tools_that_type_into_panes(
    repo_root: Path,
) -> None:
    overlays, _ = load_overlays(repo_root)
    with_force = {
        name for name, overlay in overlays.by_tool.items() if "force" in overlay.arguments
    }
    assert with_force == TYPING_TOOLS
    for name in sorted(with_force):
        binding = BINDINGS[name]
        assert "force" not in TOOL_DOCUMENTS[name]["inputSchema"]["properties"]  # upstream's
        assert "force" in binding.declared_arguments
        for mode in ("compact", "exact", "openai-strict"):
            served = binding.served_document(mode)["inputSchema"]["properties"]
            assert served["force"]["type"] in ("boolean", ["boolean", "null"]), (name, mode)
        assert not binding.input_validator.is_valid({"force": "yes"})
        model = getattr(
            __import__(f"schemux.generated.models.{name}", fromlist=["_"]), binding.input_model
        )
        assert model.model_fields["force"].default is False
