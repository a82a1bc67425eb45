"""The agent's session: what schemux makes when its configured tmux server is not running.

Starting the server is a ``new-session`` of this session, so the server and the agent's
pane come up together, by tmux's own start-up: a server started by two schemux processes
at once is started once (tmux's client takes a lock file to start a server, and the loser
connects to the winner's), and the loser's ``new-session`` then fails with "duplicate
session", which is taken as success. The pane runs no command of schemux's: tmux starts
``default-shell`` as a login shell (``-bash``) for a window given none, and the client that
starts the server sets that shell (from ``$SHELL``) and the server's global environment
(from its own environment). That client therefore gets the user's environment, not
schemux's: its login shell in ``SHELL``, and nothing of schemux's virtual environment or
settings (a ``SCHEMUX_HTTP_TOKEN`` must not reach the agent's shell).

The pane is marked with the pane option ``@schemux_agent``: a call with no target uses the
marked pane wherever it is (``schemux.panes.targets``), whatever sessions a person adds later.
"""

from __future__ import annotations

import os
import pwd
import sys
from collections.abc import Mapping

from schemux.config import AgentSession
from schemux.tmux.format import format_literal, row_format, tmux_row
from schemux.tmux.references import CreatedSessionRow

AGENT_MARK = "@schemux_agent"
# The history-limit of the servers schemux starts, in rows a pane keeps above its screen
# (tmux's own default is 2,000): enough that 100,000 lines of output come back whole,
# since tmux frees a tenth of the limit whenever a pane's history is full (so at least
# 108,000 rows stay). A pane takes memory for the rows it holds only: measured on tmux
# 3.3a and 3.5a, about 0.24 KB a short row (``seq``) and 0.84 KB a full row of the agent's
# 160 columns, so a pane full to this limit holds 29 to 100 MB in the tmux server, until
# the pane is closed or its history cleared.
STARTED_HISTORY_LIMIT = 120_000
FALLBACK_SHELL = "/bin/sh"

# what a Python launcher or schemux itself puts in the environment, never the user's
_NOT_THE_USERS = frozenset(
    {"VIRTUAL_ENV", "VIRTUAL_ENV_PROMPT", "PYTHONHOME", "PYTHONPATH", "__PYVENV_LAUNCHER__"}
)
# the tmux server (or pane) schemux runs inside, which the agent's shell is not part of
_OTHER_TMUX = frozenset({"TMUX", "TMUX_PANE"})
_SCHEMUX_PREFIX = "SCHEMUX_"


# what an account that may not log in has as its shell: it would end the pane at once
_REFUSING_SHELLS = frozenset({"nologin", "false"})


def _usable_shell(path: str) -> bool:
    return (
        os.path.isabs(path)
        and os.path.basename(path) not in _REFUSING_SHELLS
        and os.access(path, os.X_OK)
    )


def login_shell(env: Mapping[str, str]) -> str:
    """The user's login shell: the passwd entry's, else ``$SHELL``, else /bin/sh (each
    only when it is an absolute path to an executable that is not ``nologin`` or
    ``false``)."""
    try:
        entry_shell: str | None = pwd.getpwuid(os.getuid()).pw_shell
    except KeyError:  # no passwd entry for this uid (a container's arbitrary uid)
        entry_shell = None
    for candidate in (entry_shell, env.get("SHELL")):
        if candidate and _usable_shell(candidate):
            return candidate
    return FALLBACK_SHELL


def virtual_environment_bins(env: Mapping[str, str]) -> frozenset[str]:
    """The ``bin`` directories of the virtual environments schemux runs in or was
    started from, which a launcher put first on PATH."""
    roots = {env.get("VIRTUAL_ENV", "")}
    if sys.prefix != sys.base_prefix:
        roots.add(sys.prefix)
    return frozenset(os.path.realpath(os.path.join(root, "bin")) for root in roots if root)


def user_environment(env: Mapping[str, str], shell: str) -> dict[str, str]:
    """``env`` as the user's own: without schemux's settings, the virtual environment's
    variables and PATH entries, and the variables of a tmux that schemux may run inside;
    with ``SHELL`` set to their login shell."""
    venv_bins = virtual_environment_bins(env)
    cleaned = {
        name: value
        for name, value in env.items()
        if name not in _NOT_THE_USERS
        and name not in _OTHER_TMUX
        and not name.startswith(_SCHEMUX_PREFIX)
    }
    if "PATH" in cleaned:
        cleaned["PATH"] = os.pathsep.join(
            entry
            for entry in cleaned["PATH"].split(os.pathsep)
            if not entry or os.path.realpath(entry) not in venv_bins
        )
    cleaned["SHELL"] = shell
    return cleaned


def history_limit_arguments(limit: int = STARTED_HISTORY_LIMIT) -> tuple[str, ...]:
    """The command that sets the global ``history-limit`` to ``limit`` on a server with
    no session yet, one whose first session this command list is about to make (a pane
    takes the limit when it is made), unless the user's configuration, read as the
    server started, set it higher. A server another client started first (it has a
    session by then) is left as it is."""
    fresh_and_lower = f"#{{&&:#{{==:#{{S:x}},}},#{{e|<:#{{history-limit}},{limit}}}}}"
    return ("if-shell", "-F", fresh_and_lower, f"set-option -g history-limit {limit}")


# what the agent's ``new-session`` prints: its pane, the pane's process id, and the
# session's reference
@tmux_row
class AgentSessionMade(CreatedSessionRow):
    pane_id: str
    pane_pid: int


def new_session_arguments(
    agent: AgentSession, home: str, command: list[str] | None = None
) -> tuple[str, ...]:
    """The ``new-session`` of the agent's session, printing an ``AgentSessionMade``;
    running ``command`` (an argv: the login shell with schemux's hooks,
    ``schemux.hooks``), or with none, the default shell as a login shell."""
    return (
        "new-session", "-d", "-P", "-F", row_format(AgentSessionMade),
        "-s", format_literal(agent.name), "-x", str(agent.width), "-y", str(agent.height),
        "-c", format_literal(home), *(["--", *command] if command else []),
    )  # fmt: skip
