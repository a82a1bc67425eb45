"""Serving MCP: the server, tool bindings, validation, resources, calls routed to hosts."""

from typing import TYPE_CHECKING

from schemux.faces import face

if TYPE_CHECKING:
    from schemux.serving.server import build_server
    from schemux.serving.state import ServingState

__all__ = ("ServingState", "build_server")
__getattr__ = face(__name__, {"ServingState": "state", "build_server": "server"})
