"""picture_pane: a pane as it looks, drawn from tmux's own cells (``capture-pane -e``)
as PNG or SVG, sent as the result's image content (``call.media``); the structured
result gives its size in cells and pixels, the cursor, the title and the mode that
shows. The agent's pane when no target is given, as run_command's family resolves it.
"""

from __future__ import annotations

from schemux.domain.call import Call
from schemux.generated.models.picture_pane import PicturePaneInput, PicturePaneOutput
from schemux.panes.targets import resolve_requested_pane


async def handle(call: Call, request: PicturePaneInput) -> PicturePaneOutput:
    server = call.tmux(request.socket_name)
    pane = await resolve_requested_pane(server, request, call.notes)
    kind = request.format
    picture = await call.services.pictures.picture(
        server, pane.pane_id, kind, mask_secrets=call.settings.mask_secrets
    )
    call.media.attach(picture.mime_type, picture.data)
    state = picture.state
    return PicturePaneOutput(
        pane_id=pane.pane_id,
        format=kind,
        mime_type=picture.mime_type,
        pane_width=state.pane_width,
        pane_height=state.pane_height,
        pixel_width=picture.pixel_width,
        pixel_height=picture.pixel_height,
        cursor_x=state.cursor_x,
        cursor_y=state.cursor_y,
        cursor_visible=picture.cursor_visible,
        title=state.pane_title,
        pane_mode=state.pane_mode or None,
        alternate_on=state.alternate_on,
    )
