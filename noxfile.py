"""The checks CI runs, in order: codegen is current, ruff, the layers, mypy, tests.

Run them all with ``nox``; one with ``nox -s tests``; the tests that need no tmux, in
seconds, with ``nox -s unit``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nox

os.environ.setdefault("UV_PYTHON_DOWNLOADS", "never")  # only the machine's Python exists
nox.options.default_venv_backend = "uv|virtualenv"
nox.options.sessions = ["codegen", "lint", "layers", "typecheck", "tests"]
nox.options.reuse_existing_virtualenvs = True

# A named version that the machine lacks would make nox skip the session and exit 0.
nox.options.error_on_missing_interpreters = True
if sys.version_info < (3, 11):  # noqa: UP036 (nox may run on any python3)
    sys.exit(f"schemux needs Python 3.11 or newer; nox runs on {sys.version.split()[0]}")
DISTRIBUTION_PYTHON = "/usr/bin/python3"


def session_python() -> str:
    """The Python every session runs on: the distribution's python3 when it is the release
    that runs nox (the python3 of the README's test command), else that one.

    The distribution's is the Python Debian's users run schemux on (the launcher makes
    its venv with it), and it is not always the same as a newer build of that release:
    Debian 12's 3.11.2 breaks asyncio.timeout in a task cancelled before, which later
    3.11 releases fixed, and only a suite run on it finds what that breaks. Debian also
    builds it with profile-guided and link-time optimization, so the suite takes about a
    tenth less CPU on it than on a plain source build (pyenv's)."""
    release = f"{sys.version_info[0]}.{sys.version_info[1]}"
    try:
        found = subprocess.run(
            [DISTRIBUTION_PYTHON, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True, text=True, check=False,
        ).stdout.strip()  # fmt: skip
    except OSError:  # no distribution python3
        return sys.executable
    return DISTRIBUTION_PYTHON if found == release else sys.executable


PYTHON = session_python()
PYPROJECT = nox.project.load_toml("pyproject.toml")
ROOT = Path(__file__).resolve().parent


def install_project(session: nox.Session, *groups: str) -> None:
    """The project as an editable install, plus the named dependency groups."""
    session.install(*nox.project.dependency_groups(PYPROJECT, *groups))
    session.install("-e", ".")


@nox.session(python=PYTHON)
def codegen(session: nox.Session) -> None:
    """Fail when schemas/tools, generated/, the docs' generated sections or docs/tools.md
    drift from the schemas."""
    session.install(*nox.project.dependency_groups(PYPROJECT, "codegen"))
    session.run("python", "-m", "codegen", "--check")


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    session.install(*nox.project.dependency_groups(PYPROJECT, "lint"))
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session(python=PYTHON)
def layers(session: nox.Session) -> None:
    """Fail on an import against the layers of ARCHITECTURE.md (the contracts in
    pyproject.toml's ``[tool.importlinter]``)."""
    install_project(session, "layers")
    session.run("lint-imports")


@nox.session(python=PYTHON)
def typecheck(session: nox.Session) -> None:
    install_project(session, "typecheck")
    session.run("mypy", "-p", "schemux", "-p", "codegen", "-p", "tests", "-p", "bench")


# The whole suite runs in test workers (pytest-xdist), each taking the next test as it
# frees: the suite mostly waits for shells and tmux, so six keep two cores busy (CONTRIBUTING.md:
# the suite's time). A failed test fails the run: only a test marked with the external
# cause it waits on (``flaky_external``, tests/suite_rules.py) runs again, and the summary
# counts and names every rerun with its cause.
# Arguments replace these, in one process unless they say ``-n``.
WORKERS = ("-n", "6", "--dist", "worksteal")


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    install_project(session, "test")
    # pytest keeps the test modules it rewrites for their asserts in __pycache__
    # (git-ignored); with bytecode writing off, every worker rewrote every module again
    session.env["PYTHONDONTWRITEBYTECODE"] = ""
    if not session.posargs and bytecode_cold():
        # a fresh clone: one collection writes what every worker would otherwise compile
        # and rewrite at once (6.5 s of CPU each: the test modules' asserts, the
        # dependencies, schemux), then the workers start from it (3 s each)
        session.run("pytest", "--collect-only", "-q", silent=True)
    session.run("pytest", *(session.posargs or WORKERS))


def bytecode_cold() -> bool:
    """Whether pytest has not yet written its rewrite of the suite's conftest (the test
    modules' bytecode is not there: a fresh clone, or one whose pytest changed)."""
    return not any((ROOT / "tests" / "__pycache__").glob("conftest.*-pytest-*.pyc"))


# The unit tests keep the CPU busy (they wait for nothing), so two workers: one a core.
UNIT_WORKERS = ("-n", "2")


@nox.session(python=PYTHON)
def unit(session: nox.Session) -> None:
    """The tests that need no tmux, shell or network (those not marked ``tmux``, see
    tests/conftest.py), run with no tmux on PATH: one that tries to start tmux fails, so
    the tier passes where tmux is not installed."""
    install_project(session, "test")
    session.env["PYTHONDONTWRITEBYTECODE"] = ""
    session.env["PATH"] = path_without("tmux", Path(session.create_tmp()).resolve() / "no-tmux")
    session.run("pytest", "-m", "not tmux", *(session.posargs or UNIT_WORKERS))


def path_without(program: str, shadows: Path) -> str:
    """PATH with each of its directories that holds ``program`` replaced by a directory
    in ``shadows`` that links to everything else in it (tmux lives in /usr/bin with
    python3 and the tools the tests do need)."""
    shutil.rmtree(shadows, ignore_errors=True)
    kept = []
    for index, directory in enumerate(os.environ.get("PATH", "").split(os.pathsep)):
        holder = Path(directory)
        if not (holder / program).exists():
            kept.append(directory)
            continue
        shadow = shadows / str(index)
        shadow.mkdir(parents=True)
        for entry in holder.iterdir():
            if entry.name != program:
                (shadow / entry.name).symlink_to(entry)
        kept.append(str(shadow))
    path = os.pathsep.join(kept)
    assert shutil.which(program, path=path) is None, f"{program} is still on {path}"
    return path


# Not among the default sessions (nox.options.sessions): the README's test command never
# runs it. It takes several minutes and wants a quiet machine.
@nox.session(python=PYTHON, default=False)
def bench(session: nox.Session) -> None:
    """Run every benchmark and write docs/benchmarks.md from their figures
    (bench/benchmarks_page.py; ``-- --quick`` for each one's small run)."""
    install_project(session, "test")
    session.run("python", "bench/benchmarks_page.py", *session.posargs)
