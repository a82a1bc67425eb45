"""The files schemux appends its user's records to (the audit log, the server's log, the
recordings): never reached through a symbolic link, never one another user owns (who
could read every record, or a link of theirs would make schemux write where they
chose), and 0600; the directories it makes for them, 0700.

A regular file must be this user's; anything else, such as ``/dev/null`` or ``/dev/full``,
this user's or root's. A file of this user's with a wider mode is narrowed to 0600 when
it is opened, as one made by hand with the umask's bits is.
"""

from __future__ import annotations

import contextlib
import errno
import os
import pwd
import stat
from pathlib import Path

PRIVATE_MODE = 0o600
PRIVATE_DIRECTORY_MODE = 0o700
ADVICE = "remove it, or name another file"


def not_private(found: os.stat_result) -> str | None:
    """Why schemux must not append to the file ``found`` describes (an ``lstat``'s or an
    ``fstat``'s), as "it is ..."; None when it may."""
    if stat.S_ISLNK(found.st_mode):
        return "it is a symbolic link"
    owner = found.st_uid
    if owner == os.geteuid() or (owner == 0 and not stat.S_ISREG(found.st_mode)):
        return None
    try:
        who = f"{pwd.getpwuid(owner).pw_name} (uid {owner})"
    except KeyError:
        who = f"uid {owner}"
    return f"it is owned by {who}, not by you"


def check_private(path: Path) -> str | None:
    """``not_private`` of what ``path`` names now; None when it names nothing (yet), or
    what cannot be looked at (its open says why)."""
    try:
        return not_private(os.lstat(path))
    except OSError:
        return None


def open_private(path: Path | str, flags: int) -> int:
    """``path`` opened with ``flags`` (made 0600 when it is not there): OSError when it
    cannot be, or when it is not a file of this user's (``not_private``, with what to do);
    a file of this user's with a wider mode is narrowed to 0600."""
    try:
        fd = os.open(path, flags | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, PRIVATE_MODE)
    except OSError as error:
        if error.errno == errno.ELOOP and os.path.islink(path):
            raise OSError(errno.ELOOP, f"it is a symbolic link: {ADVICE}") from None
        raise
    found = os.fstat(fd)
    problem = not_private(found)
    if problem is not None:
        os.close(fd)
        raise PermissionError(errno.EPERM, f"{problem}: {ADVICE}")
    if stat.S_ISREG(found.st_mode) and stat.S_IMODE(found.st_mode) & 0o077:
        os.fchmod(fd, PRIVATE_MODE)
    return fd


def make_directories(directory: Path) -> None:
    """``directory`` made with its missing parents, each 0700 (those there already are
    left as they are)."""
    missing = []
    for parent in [directory, *directory.parents]:
        if parent.exists():
            break
        missing.append(parent)
    for made in reversed(missing):
        with contextlib.suppress(FileExistsError):
            os.mkdir(made, PRIVATE_DIRECTORY_MODE)
