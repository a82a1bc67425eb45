"""The embedded default for users whose login shell is bash, zsh or fish (issue 16).

Each test makes a throwaway user with ``useradd`` (login shell as asked, a fresh home from
/etc/skel) and runs ``schemux serve`` as that user over stdio (``setpriv``), with no tmux
server running: schemux starts its own, and the ``agent`` session in the user's login
shell, as it would for that user. The first call has no target and comes at once. Needs
root (as here and in CI); skipped, saying why, where users cannot be made or the test's
Python cannot be run by another user. The user runs a copy of schemux in its home: the
checkout may sit under a directory no other user can enter. About 3 s per shell.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import pwd
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from importlib.metadata import Distribution, distribution
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

import schemux
from tests.support import call, run, tagged_socket_name
from tests.users import throwaway_user

pytestmark = pytest.mark.anyio

# the user runs a copy of schemux (user_who_runs_schemux) with the Python the test's venv
# links to: the venv may be in a directory the user cannot enter
SITE = "schemux-site"
PYTHON = os.path.realpath(sys.executable)
# what schemux's own machinery would show if any of it reached the pane
MACHINERY = ("schemux", "wait-for", "@schemux", "tmux -S", "printf '\\r", "run -b")


def as_user(user: pwd.struct_passwd) -> list[str]:
    return ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--init-groups"]


def runtime_distributions() -> list[Distribution]:
    """The distributions schemux needs at run time: its dependencies, and theirs."""
    found: dict[str, Distribution] = {}
    wanted = [requirement.name for requirement in requirements_of(distribution("schemux"))]
    while wanted:
        name = canonicalize_name(wanted.pop())
        if name not in found:
            found[name] = distribution(name)
            wanted += [requirement.name for requirement in requirements_of(found[name])]
    return list(found.values())


def requirements_of(installed: Distribution) -> list[Requirement]:
    """What ``installed`` requires with no extra asked for."""
    requirements = [Requirement(text) for text in installed.requires or []]
    return [r for r in requirements if r.marker is None or r.marker.evaluate({"extra": ""})]


def copy_of_schemux(site: Path) -> None:
    """schemux and what it needs at run time, copied into ``site`` for ``PYTHONPATH``:
    each package's files from where it is imported (an editable install maps some in
    from elsewhere), and each distribution's files within its own directory."""
    for package in pkgutil.walk_packages(schemux.__path__, "schemux."):
        if package.ispkg:
            copy_files(Path(importlib.import_module(package.name).__path__[0]), site, package.name)
    copy_files(Path(schemux.__path__[0]), site, "schemux")
    for installed in runtime_distributions():
        for file in installed.files or []:
            source = Path(str(installed.locate_file(file)))
            if ".." not in file.parts and source.is_file():  # not a script in bin/
                (site / file).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, site / file)


def copy_files(directory: Path, site: Path, package: str) -> None:
    """The files of one package directory (not its sub-packages) into ``site``."""
    target = site.joinpath(*package.split("."))
    target.mkdir(parents=True, exist_ok=True)
    for source in directory.iterdir():
        if source.is_file():
            shutil.copyfile(source, target / source.name)


@contextmanager
def user_who_runs_schemux(shell: str) -> Iterator[pwd.struct_passwd]:
    """A throwaway user whose login shell is ``shell``, with a copy of schemux in its
    home (this checkout and its venv may sit under a directory the user cannot enter, a
    private one as a CI runner's may be), run by the Python the test's venv links to
    (skipped where the user cannot run that Python)."""
    with throwaway_user(shell, "setpriv") as user:
        site = Path(user.pw_dir) / SITE
        copy_of_schemux(site)
        for path in [site, *site.rglob("*")]:
            os.chown(path, user.pw_uid, user.pw_gid)
        interpreter = subprocess.run(
            [*as_user(user), PYTHON, "-c", "import schemux"], capture_output=True, text=True,
            cwd=user.pw_dir, env=dict(os.environ, PYTHONPATH=str(site)), check=False,
        )  # fmt: skip
        if interpreter.returncode != 0:
            pytest.skip(
                f"another user cannot run this test's Python ({PYTHON}: "
                f"{interpreter.stderr.strip().splitlines()[-1:]}); make the venv with a "
                "Python in a directory every user can read"
            )
        yield user


def login_environment(user: pwd.struct_passwd, tmux_directory: Path) -> dict[str, str]:
    """What a login gives the user, with tmux's sockets and temporary files in its home
    (removed with it), and the copy of schemux on its Python's path."""
    return {
        "PYTHONPATH": f"{user.pw_dir}/{SITE}",
        "HOME": user.pw_dir,
        "USER": user.pw_name,
        "LOGNAME": user.pw_name,
        "SHELL": user.pw_shell,
        "PATH": os.environ["PATH"],
        "LANG": "C.UTF-8",
        "TMUX_TMPDIR": str(tmux_directory),
        "TMPDIR": str(tmux_directory),
    }


@asynccontextmanager
async def schemux_as(
    user: pwd.struct_passwd, socket_name: str
) -> AsyncIterator[tuple[Client, Path]]:
    """schemux run by ``user``, and the path of the tmux server's socket it will start."""
    tmux_directory = Path(user.pw_dir) / "tmp"
    tmux_directory.mkdir(mode=0o700)
    os.chown(tmux_directory, user.pw_uid, user.pw_gid)
    parameters = StdioServerParameters(
        command=as_user(user)[0],
        args=[*as_user(user)[1:], PYTHON, "-m", "schemux", "serve",
              "--socket-name", socket_name, "--wait-ceiling", "60"],
        env=login_environment(user, tmux_directory),
        cwd=user.pw_dir,
    )  # fmt: skip
    socket_path = tmux_directory / f"tmux-{user.pw_uid}" / socket_name
    try:
        async with Client(parameters) as client:
            yield client, socket_path
    finally:
        await anyio.run_process(
            [*as_user(user), "tmux", "-S", str(socket_path), "kill-server"], check=False
        )


# what each shell reads as a login shell only (bash: Debian's skel has ~/.profile, and no
# ~/.bash_profile), each marking the environment; zsh's .zshrc keeps its first-run menu away
LOGIN_FILES = {
    "bash": {".profile": "export LOGIN_MARK='login files read'\n"},
    "zsh": {".zprofile": "export LOGIN_MARK='login files read'\n", ".zshrc": ""},
    "fish": {
        ".config/fish/config.fish": "status is-login; and set -gx LOGIN_MARK 'login files read'\n"
    },
}


def write_as(user: pwd.struct_passwd, name: str, text: str) -> None:
    """Append ``text`` to the file ``name`` of the user's home, made the user's."""
    path = Path(user.pw_dir) / name
    for directory in reversed(path.relative_to(user.pw_dir).parents[:-1]):
        (Path(user.pw_dir) / directory).mkdir(exist_ok=True)
        os.chown(Path(user.pw_dir) / directory, user.pw_uid, user.pw_gid)
    with path.open("a") as file:
        file.write(text)
    os.chown(path, user.pw_uid, user.pw_gid)


def process_facts(pid: int) -> tuple[str, int]:
    """(the program's name, real uid) of a process."""
    argv0 = Path(f"/proc/{pid}/comm").read_text().strip()
    uid_line = next(
        line for line in Path(f"/proc/{pid}/status").read_text().splitlines()
        if line.startswith("Uid:")
    )  # fmt: skip
    return argv0, int(uid_line.split()[1])


@pytest.mark.long
@pytest.mark.parametrize(
    "shell", ["/bin/bash", "/usr/bin/zsh", "/usr/bin/fish"], ids=["bash", "zsh", "fish"]
)
async def test_the_agent_session_in_the_users_login_shell(anyio_backend: str, shell: str) -> None:
    if not Path(shell).exists():
        pytest.fail(f"{shell} is not installed (.ci/run installs it)")
    with user_who_runs_schemux(shell) as user:
        for name, text in LOGIN_FILES[Path(shell).name].items():
            write_as(user, name, text)
        async with schemux_as(user, tagged_socket_name("login")) as (client, socket_path):
            # the first call: no target, no server running yet
            first = await run(client, command="echo first-ok")
            assert (first["output"], first["exit_status"]) == (["first-ok"], 0)
            pane_id = first["pane_id"]
            result = await run(client, command=r"printf 'one\n\ntwo\n'; echo 'é✓漢字'")
            assert result["output"] == ["one", "", "two", "é✓漢字"]
            result = await run(client, command="sh -c 'echo out; exit 5'")
            assert (result["output"], result["exit_status"]) == (["out"], 5)
            result = await run(client, command="echo $HOME; id -un")
            assert result["output"] == [user.pw_dir, user.pw_name]
            assert result["pane_id"] == pane_id
            # the pane's process is the user's login shell, as tmux starts one (-fish)
            shown = await anyio.run_process(
                [*as_user(user), "tmux", "-S", str(socket_path), "display", "-p",
                 "-t", pane_id, "#{pane_pid}"],
            )  # fmt: skip
            shell_pid = int(shown.stdout)
            assert process_facts(shell_pid) == (Path(shell).name, user.pw_uid)
            result = await run(client, command="sh -c 'echo ${LOGIN_MARK:-not a login shell}'")
            assert result["output"] == ["login files read"]
            screen = await call(client, "capture_pane", pane_id=pane_id)
            rows = screen["result"]
            assert not [mark for mark in MACHINERY if mark in rows], rows
            assert "first-ok" in rows
