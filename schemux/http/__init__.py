"""Serving over streamable HTTP: the settings, who may call, connections held to time."""

from typing import TYPE_CHECKING

from schemux.faces import face

if TYPE_CHECKING:
    from schemux.http.config import HttpConfig
    from schemux.http.security import secured_app

__all__ = ("HttpConfig", "secured_app")
__getattr__ = face(__name__, {"HttpConfig": "config", "secured_app": "security"})
