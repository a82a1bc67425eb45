"""The audit log: written one JSON line per call, and read back as ``schemux audit``; the
recordings beside it (asciicast v3), played by ``schemux replay``."""

from typing import TYPE_CHECKING

from schemux.faces import face

if TYPE_CHECKING:
    from schemux.audit.log import AuditLog, CallRecord
    from schemux.audit.reader import print_log

__all__ = ("AuditLog", "CallRecord", "print_log")
__getattr__ = face(__name__, {"AuditLog": "log", "CallRecord": "log", "print_log": "reader"})
