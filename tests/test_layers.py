"""The layers of ARCHITECTURE.md ("Layers") hold, every module is in one, and no import
cycle is anywhere (issue 19, item 4).

The layers are import-linter's contract in pyproject.toml (``[tool.importlinter]``), which
nox's ``layers`` session checks with ``lint-imports``; here the same contract is checked
against the import graph as grimp reads it from the source (function-level and
``TYPE_CHECKING`` imports included), and against imports added to that graph, so that a
contract that could not fail would show.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import grimp
import pytest
from importlinter.contracts.layers import LayersContract

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"
CONFIG = tomllib.loads(PYPROJECT.read_text())["tool"]["importlinter"]
LAYERS = next(contract for contract in CONFIG["contracts"] if contract["id"] == "layers")

# packages whose modules sit in different layers (each of them is placed); their own
# __init__ is in none
SPLIT_PACKAGES = frozenset({"schemux", "schemux.generated", "schemux.programs"})


@pytest.fixture
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("schemux", cache_dir=None)


def layers_contract() -> LayersContract:
    # as lint-imports reads its options: booleans as the words an ini file would hold
    options = {
        key: str(value).lower() if isinstance(value, bool) else value
        for key, value in LAYERS.items()
        if key not in ("id", "name", "type")
    }
    return LayersContract(
        name=LAYERS["name"],
        session_options={"root_packages": CONFIG["root_packages"]},
        contract_options=options,
    )


def layer_modules() -> list[set[str]]:
    """Each layer's module names, top layer first."""
    return [{f"schemux.{tail.strip()}" for tail in layer.split(":")} for layer in LAYERS["layers"]]


def cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    imports = {
        module: sorted(graph.find_modules_directly_imported_by(module)) for module in graph.modules
    }
    order: dict[str, int] = {}
    lowest: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:
        order[module] = lowest[module] = len(order)
        stack.append(module)
        for imported in imports[module]:
            if imported not in order:
                visit(imported)
                lowest[module] = min(lowest[module], lowest[imported])
            elif imported in stack:
                lowest[module] = min(lowest[module], order[imported])
        if lowest[module] == order[module]:
            component = []
            while (member := stack.pop()) != module:
                component.append(member)
            if component:
                found.append(sorted([module, *component]))

    for module in sorted(imports):
        if module not in order:
            visit(module)
    return found


def test_the_layers_hold(graph: grimp.ImportGraph) -> None:
    check = layers_contract().check(graph, verbose=False)
    assert check.kept, check.metadata


@pytest.mark.parametrize(
    ("importer", "imported"),
    [
        ("schemux.config", "schemux.tmux.server"),  # settings reading the tmux access
        ("schemux.tmux.server", "schemux.shell.commands"),  # tmux access reading the domain
        ("schemux.domain.services", "schemux.handlers.run_command"),  # the domain reading a handler
        ("schemux.handlers.send_keys", "schemux.serving.server"),  # a handler reading the serving
        ("schemux.serving.server", "schemux.cli.main"),  # the serving reading the entry
        ("schemux.tmux.format", "schemux.generated.bindings"),  # data of the serving
    ],
)
def test_an_import_against_the_layers_breaks_them(
    graph: grimp.ImportGraph, importer: str, imported: str
) -> None:
    graph.add_import(importer=importer, imported=imported, line_number=1, line_contents="import")
    assert not layers_contract().check(graph, verbose=False).kept


def test_every_module_is_in_one_layer(graph: grimp.ImportGraph) -> None:
    layers = layer_modules()
    for module in sorted(graph.modules - SPLIT_PACKAGES):
        holding = [
            index
            for index, layer in enumerate(layers)
            if any(module == name or module.startswith(f"{name}.") for name in layer)
        ]
        assert len(holding) == 1, f"{module} is in {len(holding)} layers"


def test_no_import_cycle(graph: grimp.ImportGraph) -> None:
    assert cycles(graph) == []


def test_a_new_cycle_is_found(graph: grimp.ImportGraph) -> None:
    graph.add_import(
        importer="schemux.names", imported="schemux.config", line_number=1, line_contents="import"
    )
    assert cycles(graph) == [["schemux.config", "schemux.names"]]


ROOT = PYPROJECT.parent
MAX_TOP_MODULES = 15  # issue 33: the packages are the architecture, not a flat room
MAX_MODULE_LINES = 600


def hand_written_modules() -> list[Path]:
    """The modules a person writes: the runtime and the handlers (``generated/`` is
    codegen's)."""
    runtime = [
        path
        for path in (ROOT / "schemux").rglob("*.py")
        if not {"generated", "handlers"} & set(path.relative_to(ROOT / "schemux").parts)
    ]
    return sorted([*runtime, *(ROOT / "handlers").glob("*.py")])


def test_the_tree_shows_its_packages() -> None:
    """At most fifteen modules directly in ``schemux/``, and no hand-written module over
    600 lines: a module that outgrows that has two jobs to split."""
    top = sorted(path.name for path in (ROOT / "schemux").glob("*.py"))
    assert len(top) <= MAX_TOP_MODULES, top
    modules = hand_written_modules()
    assert len(modules) > 200  # the walk found the tree
    long = {
        str(path.relative_to(ROOT)): lines
        for path in modules
        if (lines := len(path.read_text().splitlines())) > MAX_MODULE_LINES
    }
    assert long == {}
