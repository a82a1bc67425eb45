"""The audit log: written one JSON line per call, and read back as ``schemux audit``."""
