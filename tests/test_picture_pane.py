"""picture_pane against real tmux, through the in-memory MCP client: the picture's
pixels show the pane's colours, attributes, wide characters and cursor where tmux has
them; SVG holds the text; the agent's pane by default; hostile targets refused before any
tmux work; the picture resource read and its subscription told of a change."""

from __future__ import annotations

import base64
import io
import xml.etree.ElementTree as ET
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.subscriptions import ResourceUpdated
from PIL import Image

from schemux.domain.resource_uris import pane_uri
from schemux.names import OWNED_SESSION
from schemux.pictures.theme import CURSOR, DEFAULT_BG
from tests.support import call_error, new_pane, pane_format, tmux, until

pytestmark = pytest.mark.anyio

CELL = (9, 18)  # a cell's pixels (schemux.pictures.raster.CELL_WIDTH, the font's height)


async def picture(client: Client, **arguments: object) -> tuple[Image.Image, dict[str, object]]:
    """The call's PNG, decoded, and its structured result."""
    result = await client.call_tool("picture_pane", arguments)
    assert not result.is_error, result.content
    images = [block for block in result.content if isinstance(block, types.ImageContent)]
    assert [image.mime_type for image in images] == ["image/png"]
    decoded = Image.open(io.BytesIO(base64.b64decode(images[0].data))).convert("RGB")
    assert result.structured_content is not None
    return decoded, dict(result.structured_content)


def cell_colours(image: Image.Image, x: int, y: int, width: int = 1) -> set[tuple[int, int, int]]:
    """The colours of the pixels of cell (``x``, ``y``), ``width`` cells wide."""
    box = (x * CELL[0], y * CELL[1], (x + width) * CELL[0], (y + 1) * CELL[1])
    colours = image.crop(box).getcolors(10_000) or []
    return {(colour[0], colour[1], colour[2]) for _, colour in colours if isinstance(colour, tuple)}


def printing(script: str) -> str:
    """A pane command that prints ``script`` (printf's format) and stays, cursor hidden
    only when the script hides it."""
    return f"sh -c 'printf \"{script}\"; exec sleep 600'"


async def shown(socket: str, pane_id: str, text: str) -> None:
    await until(lambda: text in tmux(socket, "capture-pane", "-p", "-t", pane_id))


async def test_colours_attributes_and_the_cursor_are_drawn_where_tmux_has_them(
    memory_client: Client, tmux_socket: str
) -> None:
    script = (
        r"\033[41m  \033[0m|\033[48;2;12;34;56m  \033[0m|\033[7mR\033[0m|\033[4mU\033[0m"
        r"|\033[1mB\033[0m|b\n\033[38;5;46mG\033[0m中x"
    )
    pane = new_pane(tmux_socket, command=printing(script), width=40, height=6)
    await shown(tmux_socket, pane.pane_id, "中x")
    image, result = await picture(memory_client, pane_id=pane.pane_id)
    assert image.size == (40 * CELL[0], 6 * CELL[1])
    assert (result["pixel_width"], result["pixel_height"]) == image.size
    assert (result["pane_width"], result["pane_height"]) == (40, 6)
    assert cell_colours(image, 0, 0, 2) == {(0xCD, 0, 0)}  # a red background cell is red
    assert cell_colours(image, 3, 0, 2) == {(12, 34, 56)}  # true colour, exact
    assert max(cell_colours(image, 6, 0), key=sum) == (0xD0, 0xD0, 0xD0)  # reverse: a light cell
    assert len(cell_colours(image, 6, 0)) > 1  # ... with its letter in the background colour
    underline_row = image.crop((8 * CELL[0], 15, 9 * CELL[0], 16)).getcolors()
    assert underline_row == [(CELL[0], (0xD0, 0xD0, 0xD0))]  # underline: a full line
    bold, plain = cell_colours(image, 10, 0), cell_colours(image, 12, 0)
    assert bold != plain  # bold strokes differ from plain ones
    assert (0, 255, 0) in cell_colours(image, 0, 1)  # 256 colours: 46 is pure green
    # a wide character the font lacks is a box two cells wide, and x follows it at column 3
    assert cell_colours(image, 1, 1, 2) != {DEFAULT_BG}
    assert cell_colours(image, 3, 1) != {DEFAULT_BG}
    x, y = int(pane_format(pane, "#{cursor_x}")), int(pane_format(pane, "#{cursor_y}"))
    assert (result["cursor_x"], result["cursor_y"], result["cursor_visible"]) == (x, y, True)
    assert CURSOR in cell_colours(image, x, y)  # the cursor is where tmux says


async def test_a_hidden_cursor_and_a_mode_are_said_and_not_drawn(
    memory_client: Client, tmux_socket: str
) -> None:
    pane = new_pane(tmux_socket, command=printing(r"\033[?25lhidden"), width=30, height=4)
    await shown(tmux_socket, pane.pane_id, "hidden")
    image, result = await picture(memory_client, pane_id=pane.pane_id)
    assert result["cursor_visible"] is False
    assert all(CURSOR not in cell_colours(image, x, 0) for x in range(30))
    tmux(tmux_socket, "copy-mode", "-t", pane.pane_id)
    _, in_mode = await picture(memory_client, pane_id=pane.pane_id)
    assert in_mode["pane_mode"] == "copy-mode"
    assert in_mode["alternate_on"] is False


async def test_svg_is_xml_holding_the_text(memory_client: Client, tmux_socket: str) -> None:
    pane = new_pane(tmux_socket, command=printing(r"\033[31ma<b>&c\033[0m 中"), width=20, height=3)
    await shown(tmux_socket, pane.pane_id, "a<b>&c")
    result = await memory_client.call_tool(
        "picture_pane", {"pane_id": pane.pane_id, "format": "svg"}
    )
    assert not result.is_error, result.content
    images = [block for block in result.content if isinstance(block, types.ImageContent)]
    assert [image.mime_type for image in images] == ["image/svg+xml"]
    root = ET.fromstring(base64.b64decode(images[0].data))
    texts = "".join(element.text or "" for element in root.iter("{http://www.w3.org/2000/svg}text"))
    assert "a<b>&c" in texts
    assert "中" in texts
    assert root.get("width") == str(20 * CELL[0])
    assert result.structured_content is not None
    assert result.structured_content["mime_type"] == "image/svg+xml"


async def test_without_a_target_the_default_pane_as_the_family_resolves_it(
    memory_client: Client, tmux_socket: str
) -> None:
    """The agent's pane when schemux started the server; this one was running, so the
    active pane of the session used last, as snapshot_pane and run_command take it."""
    pane = new_pane(tmux_socket)
    _, result = await picture(memory_client)
    assert result["pane_id"] == pane.pane_id
    snapshot = await memory_client.call_tool("snapshot_pane", {})
    assert snapshot.structured_content is not None
    assert snapshot.structured_content["pane_id"] == pane.pane_id


@pytest.mark.parametrize(
    "arguments",
    [
        {"pane_id": "%1; kill-server"},
        {"pane_id": "$(touch /tmp/picture-pwned)"},
        {"session_name": "x\nkill-server"},
        {"window_id": "@1 ; kill-server"},
        {"socket_name": "../../etc/passwd"},
        {"format": "gif"},
        {"pane_id": "%1", "colour": True},
    ],
)
async def test_hostile_arguments_are_refused_and_nothing_runs(
    memory_client: Client, tmux_socket: str, arguments: dict[str, object]
) -> None:
    """Refused by the contract before any tmux work, or (a name no pane has) looked up
    as one quoted argument: the server lives on, with the sessions it had (schemux's
    own, made at its first command there, aside)."""

    def sessions() -> list[str]:
        names = tmux(tmux_socket, "list-sessions", "-F", "#{session_name}").split()
        return [name for name in names if name != OWNED_SESSION]

    before = sessions()
    error = await call_error(memory_client, "picture_pane", **arguments)
    assert error
    assert sessions() == before
    assert not Path("/tmp/picture-pwned").exists()


async def test_the_picture_resource_is_read_and_its_subscription_told(
    memory_client: Client, tmux_socket: str
) -> None:
    pane = new_pane(tmux_socket, width=30, height=5)
    uri = pane_uri("local", pane.pane_id, "picture")
    read = await memory_client.read_resource(uri)
    [contents] = read.contents
    assert isinstance(contents, types.BlobResourceContents)
    assert contents.mime_type == "image/png"
    image = Image.open(io.BytesIO(base64.b64decode(contents.blob)))
    assert image.size == (30 * CELL[0], 5 * CELL[1])
    async with memory_client.listen(resource_subscriptions=[uri]) as subscription:
        assert subscription.honored.resource_subscriptions == [uri]
        tmux(tmux_socket, "send-keys", "-t", pane.pane_id, "echo changed", "Enter")
        with anyio.fail_after(10):
            event = await subscription.__anext__()
        assert event == ResourceUpdated(uri)
