"""The Jinja2 templates codegen writes with (codegen/templates), and their filters."""

from __future__ import annotations

import jinja2


def _cell(text: str) -> str:
    """One Markdown table cell: a single line, pipes escaped."""
    return " ".join(text.split()).replace("|", "\\|")


TEMPLATES = jinja2.Environment(
    loader=jinja2.PackageLoader("codegen"),
    autoescape=False,  # Python source and Markdown, escaped by their filters where needed
    keep_trailing_newline=True,
    trim_blocks=True,
    lstrip_blocks=True,
    undefined=jinja2.StrictUndefined,
)
# repr() of JSON-loaded values is a Python literal that keeps key order; ruff lays it out.
TEMPLATES.filters["pyliteral"] = repr
TEMPLATES.filters["cell"] = _cell
