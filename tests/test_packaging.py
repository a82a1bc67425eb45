"""What an installed schemux holds: every package of the tree, not only in an editable
install (a package missing from pyproject's list imports from the source tree there, and
nowhere else), and a declared dependency for every distribution its code imports (one
that arrives only through another's dependencies may stop arriving)."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
SETUPTOOLS = PYPROJECT["tool"]["setuptools"]


def installed_name(directory: Path) -> str:
    """The import name of a package directory, by pyproject's package-dir mapping."""
    for name, source in SETUPTOOLS["package-dir"].items():
        if directory == ROOT / source or ROOT / source in directory.parents:
            rest = directory.relative_to(ROOT / source).parts
            return ".".join((name, *rest))
    return ".".join(directory.relative_to(ROOT).parts)


def runtime_sources() -> list[Path]:
    """The directories whose modules an installed schemux holds."""
    return [ROOT / "schemux", *(ROOT / source for source in SETUPTOOLS["package-dir"].values())]


def imported_top_names(source: Path) -> set[str]:
    """The top-level names of the absolute imports of ``source``'s modules."""
    names: set[str] = set()
    for module in source.rglob("*.py"):
        for node in ast.walk(ast.parse(module.read_text(), str(module))):
            if isinstance(node, ast.Import):
                names.update(alias.name.partition(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.partition(".")[0])
    return names


def distribution_key(requirement: str) -> str:
    """A requirement's distribution name, normalised (PEP 503)."""
    name = re.match(r"[A-Za-z0-9._-]+", requirement)
    assert name is not None, requirement
    return re.sub(r"[-_.]+", "-", name.group()).lower()


def test_every_imported_distribution_is_a_declared_dependency() -> None:
    declared = {
        distribution_key(requirement) for requirement in PYPROJECT["project"]["dependencies"]
    }
    names = set().union(*map(imported_top_names, runtime_sources()))
    third_party = names - set(sys.stdlib_module_names) - {"schemux", "__future__"}
    providers = packages_distributions()
    imported = {
        name: {distribution_key(dist) for dist in providers.get(name, [name])}
        for name in third_party
    }
    assert "uvicorn" in imported  # the walk saw the imports
    undeclared = {name: dists for name, dists in imported.items() if not dists & declared}
    assert undeclared == {}


def test_every_package_of_the_tree_is_installed() -> None:
    sources = runtime_sources()
    packages = {
        installed_name(init.parent)
        for source in sources
        for init in source.rglob("__init__.py")
        if "__pycache__" not in init.parts
    }
    assert packages == set(SETUPTOOLS["packages"])
