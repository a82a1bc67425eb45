"""display_message's ``format_string``: literal text and ``#{variable}`` references,
read against one pane.

Only the variables go to tmux, each read exactly as an encoded field
(``schemux.tmux.format``), all in one ``display-message``; the literal text never does,
so nothing of it is expanded (``display-message`` would pass a ``%`` through strftime,
and read ``#`` as format syntax). Any other ``#`` is refused, as libtmux-mcp refuses
it: a modifier such as ``#{E:...}`` expands a variable's value a second time, and a value
can come from a pane; ``#(...)`` would run a shell command.
"""

from __future__ import annotations

import re

from schemux.errors import SchemuxError, preview
from schemux.tmux.format import Query, readable
from schemux.tmux.server import TmuxServer

_VARIABLE = re.compile(r"#\{([A-Za-z_@][A-Za-z0-9_-]*)\}")


def template(format_string: str) -> tuple[list[str], list[str]]:
    """The literal texts and the variable names of ``format_string``, in turn (one more
    text than names); SchemuxError when it holds other format syntax."""
    texts, names = [], []
    position = 0
    for match in _VARIABLE.finditer(format_string):
        texts.append(format_string[position : match.start()])
        names.append(match.group(1))
        position = match.end()
    texts.append(format_string[position:])
    if any("#" in text for text in texts):
        raise SchemuxError(
            f"format_string {preview(format_string)} holds tmux format syntax other than "
            "'#{variable}' references",
            suggestion="pass literal text and references such as '#{pane_width}' only: a "
            "modifier such as '#{E:...}' expands a value a second time, and '#(...)' runs a "
            "command",
        )
    return texts, names


async def displayed(server: TmuxServer, pane_id: str, format_string: str) -> str:
    """``format_string`` with each variable's value against the pane ``pane_id``."""
    texts, names = template(format_string)
    if not names:
        return texts[0]
    query = Query(names)
    lines = await server.run("display-message", "-p", "-t", pane_id, query.format)
    if not lines:
        raise SchemuxError(f"pane {pane_id} was closed")
    values = query.values(lines[0])
    pieces = [texts[0]]
    for value, text in zip(values, texts[1:], strict=True):
        pieces += [readable(value), text]
    return "".join(pieces)
