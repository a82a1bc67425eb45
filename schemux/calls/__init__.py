"""What one tool call carries: its progress, its result links, the MCP session it came from."""

from typing import TYPE_CHECKING

from schemux.faces import face

if TYPE_CHECKING:
    from schemux.calls.progress import Progress
    from schemux.calls.result_links import ResultLinks
    from schemux.calls.sessions import session_of

__all__ = ("Progress", "ResultLinks", "session_of")
__getattr__ = face(
    __name__, {"Progress": "progress", "ResultLinks": "result_links", "session_of": "sessions"}
)
