"""The ``schemux`` command: serve, call, tools, doctor and audit."""

from schemux.cli.main import main

__all__ = ("main",)
