"""The server's ``instructions``: which served tool to use for what, in a few lines.

One line per family (``schemas/families.toml``, in its order): the family's job, then
each served tool of it with its use (from its overlay). A line names only served tools,
and is left out when none of its tools is served. Then the recipes (``schemas/families.toml``)
whose tools are all served.
"""

from __future__ import annotations

from collections.abc import Collection

from schemux.generated.tool_facts import FAMILIES, JOBS, RECIPES, USES


def instructions(served: Collection[str]) -> str:
    lines = ["Run commands and programs in tmux panes and read what they print."]
    for family, job in JOBS.items():
        named = [f"{tool} ({USES[tool]})" for tool in FAMILIES[family] if tool in served]
        if named:
            lines.append(f"{job}: {', '.join(named)}.")
    recipes = [text for tools, text in RECIPES if all(tool in served for tool in tools)]
    if recipes:
        lines += ["Recipes:", *(f"- {text}" for text in recipes)]
    return "\n".join(lines)
