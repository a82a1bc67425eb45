"""What an installed schemux holds: every package of the tree, not only in an editable
install (a package missing from pyproject's list imports from the source tree there, and
nowhere else)."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SETUPTOOLS = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]


def installed_name(directory: Path) -> str:
    """The import name of a package directory, by pyproject's package-dir mapping."""
    for name, source in SETUPTOOLS["package-dir"].items():
        if directory == ROOT / source or ROOT / source in directory.parents:
            rest = directory.relative_to(ROOT / source).parts
            return ".".join((name, *rest))
    return ".".join(directory.relative_to(ROOT).parts)


def test_every_package_of_the_tree_is_installed() -> None:
    sources = [ROOT / "schemux", *(ROOT / source for source in SETUPTOOLS["package-dir"].values())]
    packages = {
        installed_name(init.parent)
        for source in sources
        for init in source.rglob("__init__.py")
        if "__pycache__" not in init.parts
    }
    assert packages == set(SETUPTOOLS["packages"])
