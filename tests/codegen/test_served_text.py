"""The served-text lint: what tools/list says names only what this server has, whatever
``--tools`` leaves out."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from typing import Any

import pytest

from codegen.importer import ImportFailed
from codegen.overlays import load_overlays, overlay_problems
from codegen.pipeline import make_plan
from codegen.served_text import Vocabulary, served_text_problems, text_problems, vocabulary
from schemux.generated.bindings import BINDINGS
from schemux.generated.tmux_fields import FORMAT_NAMES
from schemux.serving.instructions import instructions
from schemux.serving.selection import select
from tests.codegen.overlay_files import OVERLAYS, write_overlay
from tests.generated_data import TOOL_DOCUMENTS


@pytest.fixture(scope="module")
def vocab(repo_root: Path) -> Vocabulary:
    return vocabulary(repo_root, TOOL_DOCUMENTS, FORMAT_NAMES)


def test_the_upstream_texts_the_overlays_replace_are_flagged(vocab: Vocabulary) -> None:
    send_keys = TOOL_DOCUMENTS["send_keys"]["description"]
    found = text_problems("send_keys", "description", send_keys, vocab)
    for tool in (
        "send_keys_batch", "wait_for_channel", "capture_since", "run_command", "wait_for_text",
        "capture_pane",
    ):  # fmt: skip
        assert (
            f"send_keys: description: names the tool {tool!r} outside advice that needs it "
            "(a --tools selection without it would still name it)"
        ) in found
    run_command = TOOL_DOCUMENTS["run_command"]["inputSchema"]["properties"]
    assert text_problems(
        "run_command", "x", run_command["suppress_history"]["description"], vocab
    ) == [
        "run_command: x: names the environment variable 'LIBTMUX_SUPPRESS_HISTORY', which "
        "schemux does not read"
    ]
    assert (
        "run_command: x: names 'RunCommandResult', which is no class of this server's contracts"
        in text_problems("run_command", "x", run_command["timeout"]["description"], vocab)
    )


def test_the_companions_upstream_texts_are_flagged(vocab: Vocabulary) -> None:
    """What libtmux-mcp's texts for upstream 006-010 name that schemux does not have."""

    def problems(tool: str, pointer: str) -> list[str]:
        value: Any = TOOL_DOCUMENTS[tool]
        for part in pointer.strip("/").split("/"):
            value = value[part]
        return text_problems(tool, "x", str(value), vocab)

    capture_since = problems("capture_since", "/description")
    assert "capture_since: x: names 'ExpectedToolError', which is no class" in " ".join(
        capture_since
    )
    for pointer, constant in (
        ("/inputSchema/properties/max_lines/description", "CAPTURE_SINCE_DEFAULT_MAX_LINES"),
        ("/inputSchema/properties/max_bytes/description", "CAPTURE_SINCE_DEFAULT_MAX_BYTES"),
    ):
        assert problems("capture_since", pointer) == [
            f"capture_since: x: names the environment variable {constant!r}, which schemux "
            "does not read"
        ]
    snapshot_pane = " ".join(problems("snapshot_pane", "/description"))
    assert "names the tool 'get_pane_info' outside advice" in snapshot_pane
    assert "names the tool 'capture_pane' outside advice" in snapshot_pane
    assert "names 'PaneSnapshot', which is no class" in snapshot_pane
    wait_for_channel = " ".join(problems("wait_for_channel", "/description"))
    assert "names 'tests_done', which is no tool" in wait_for_channel
    for tool in ("send_keys", "wait_for_text"):
        assert f"names the tool {tool!r} outside advice" in wait_for_channel
    assert "names the tool 'wait_for_text' outside advice" in " ".join(
        problems("wait_for_channel", "/inputSchema/properties/timeout/description")
    )


def test_a_name_ending_a_sentence_or_called_is_still_read(vocab: Vocabulary) -> None:
    found = text_problems("send_keys", "x", "Prefer get_client_info. Or run_command(it).", vocab)
    assert [problem.split(": ", 2)[2][:30] for problem in found] == [
        "names 'get_client_info', which",
        "names the tool 'run_command' o",
    ]
    # a path, a module's attribute or a shell variable is no name this lint reads
    assert text_problems("send_keys", "x", "libtmux_mcp.tools, a/b_c, $my_var", vocab) == []


def test_what_schemux_has_passes(vocab: Vocabulary) -> None:
    text = (
        "SCHEMUX_WAIT_CEILING caps timeout; GIT_PAGER is cat; pane_current_command and "
        "server_unavailable; RunCommandInput; the keys on %1; ``cmd; echo __WAIT_$RANDOM__``"
    )
    assert text_problems("run_command", "x", text, vocab) == []
    assert text_problems("send_keys", "x", "then wait_for_text", vocab, ["wait_for_text"]) == []


def test_codegen_stops_on_text_an_overlay_no_longer_replaces(repo: Path) -> None:
    path = repo / OVERLAYS / "send_keys.toml"
    text = path.read_text("utf-8")
    start = text.index('description = """')
    end = text.index('"""', start + len('description = """')) + 3
    path.write_text(text[:start] + text[end:], "utf-8")  # upstream's description is served
    with pytest.raises(ImportFailed) as stopped:
        make_plan(repo)
    problems = stopped.value.problems
    assert all(problem.startswith("served text: send_keys: description: ") for problem in problems)
    assert any("'capture_since'" in problem for problem in problems)


def test_advice_may_name_a_companion_once_its_contract_exists(repo: Path) -> None:
    """After a merge brings get_client_info's contract, send_keys's advice may need it."""
    path = repo / OVERLAYS / "send_keys.toml"
    path.write_text(
        path.read_text("utf-8")
        + '\n[[advice]]\nneeds = ["get_client_info"]\n'
        + 'text = "For the pane state, use ``get_client_info``."\n',
        "utf-8",
    )
    overlays, problems = load_overlays(repo)
    assert problems == []
    assert overlay_problems(overlays, TOOL_DOCUMENTS, sorted(BINDINGS)) == [
        "schemas/overlays/send_keys.toml: advice needs 'get_client_info', which has no "
        "contract in schemas/tools/"
    ]
    contract = {
        "name": "get_client_info",
        "description": "Read a pane's state.",
        "inputSchema": {"type": "object", "properties": {"pane_id": {"type": "string"}}},
        "outputSchema": {"type": "object", "properties": {"pane_pid": {"type": "integer"}}},
        "_meta": {"io.schemux/provenance": {"origin": "authored"}},
    }
    (repo / "schemas" / "tools" / "get_client_info.json").write_text(json.dumps(contract), "utf-8")
    write_overlay(repo, "get_client_info")
    documents = {**TOOL_DOCUMENTS, "get_client_info": contract}
    overlays, _ = load_overlays(repo)
    assert overlay_problems(overlays, documents, sorted(BINDINGS)) == []
    vocab = vocabulary(repo, documents, FORMAT_NAMES)
    texts = {"send_keys": [("description", "Send keys.")]}
    assert served_text_problems(texts, overlays, vocab) == []


def tool_names(text: str) -> set[str]:
    return {word for word in re.findall(r"[a-z_]+", text) if word in TOOL_DOCUMENTS}


FAMILY_SETS = [
    list(chosen)
    for size in range(1, 5)
    for chosen in itertools.combinations(["commands", "programs", "keys", "capture"], size)
]


@pytest.mark.parametrize("requested", FAMILY_SETS + [[tool] for tool in sorted(BINDINGS)])
@pytest.mark.parametrize("mode", ["projected", "exact", "openai-strict"])
def test_no_selection_serves_a_tool_name_it_does_not_serve(requested: list[str], mode: str) -> None:
    served = select(BINDINGS, requested, several_hosts=True)
    for name, binding in served.items():
        document = json.dumps(binding.served_document(mode, served))  # type: ignore[arg-type]
        assert tool_names(document) <= set(served), (name, tool_names(document) - set(served))
    assert tool_names(instructions(served)) <= set(served)
