"""Overlays in a repository copy: written minimal, or taken away with every advice and
recipe that needs their tool (a contract removed takes its overlay and the advice and
recipes naming it along)."""

from __future__ import annotations

import re
from pathlib import Path

OVERLAYS = Path("schemas/overlays")
FAMILIES = Path("schemas/families.toml")
_ADVICE = re.compile(r"\[\[advice\]\]\nneeds = \[(?P<needs>[^\]]*)\]\ntext = \"[^\n]*\"\n\n?")
_RECIPE = re.compile(r"\[\[recipe\]\]\nneeds = \[(?P<needs>[^\]]*)\]\ntext = [^\n]*\n\n?")


def minimal_overlay(family: str = "programs", use: str = "try it") -> str:
    hints = "".join(
        f'[annotations.{hint}]\nvalue = false\nwhy = "a test tool"\n'
        for hint in ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
    )
    return f'family = "{family}"\n\n[instructions]\nuse = "{use}"\norder = 9\n\n{hints}'


def write_overlay(repo: Path, tool: str, text: str | None = None) -> Path:
    path = repo / OVERLAYS / f"{tool}.toml"
    path.write_text(minimal_overlay() if text is None else text, "utf-8")
    return path


def remove_overlay(repo: Path, tool: str) -> None:
    """Delete ``tool``'s overlay, every advice of the others and every recipe that needs
    it."""
    (repo / OVERLAYS / f"{tool}.toml").unlink()
    for path in (repo / OVERLAYS).glob("*.toml"):
        text = path.read_text("utf-8")
        kept = _ADVICE.sub(
            lambda block: "" if f'"{tool}"' in block.group("needs") else block.group(0), text
        )
        path.write_text(kept, "utf-8")
    families = (repo / FAMILIES).read_text("utf-8")
    kept = _RECIPE.sub(
        lambda block: "" if f'"{tool}"' in block.group("needs") else block.group(0), families
    )
    (repo / FAMILIES).write_text(kept, "utf-8")
