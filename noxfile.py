"""The checks CI runs, in order: codegen is current, ruff, mypy, tests.

Run them all with ``nox``; one with ``nox -s tests``.
"""

from __future__ import annotations

import os

import nox

os.environ.setdefault("UV_PYTHON_DOWNLOADS", "never")  # only the machine's Python exists
nox.options.default_venv_backend = "uv|virtualenv"
nox.options.sessions = ["codegen", "lint", "typecheck", "tests"]
nox.options.reuse_existing_virtualenvs = True

PYTHON = "3.11"
PYPROJECT = nox.project.load_toml("pyproject.toml")


def install_project(session: nox.Session, *groups: str) -> None:
    """The project as a strict editable install (a tree of links that mypy can follow),
    plus the named dependency groups."""
    session.install(*nox.project.dependency_groups(PYPROJECT, *groups))
    session.install("-e", ".", "--config-settings", "editable_mode=strict")


@nox.session(python=PYTHON)
def codegen(session: nox.Session) -> None:
    """Fail when schemas/tools, generated/ or the README tool table drift from the schemas."""
    session.install(*nox.project.dependency_groups(PYPROJECT, "codegen"))
    session.run("python", "-m", "codegen", "--check")


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    session.install(*nox.project.dependency_groups(PYPROJECT, "lint"))
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session(python=PYTHON)
def typecheck(session: nox.Session) -> None:
    install_project(session, "typecheck")
    session.run("mypy", "-p", "schemux", "-p", "codegen", "-p", "tests", "-p", "bench")


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    install_project(session, "test")
    session.run("pytest", *session.posargs)
