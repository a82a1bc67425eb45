"""Shell integration: the hooks that bash, zsh and fish panes schemux starts get, which
tell schemux where each command's output starts, where it ends, and its exit status.

A pane schemux starts with the user's shell (the agent's session) runs that shell through
startup files of schemux's own, which run the user's own startup files first, exactly as
the shell would have (login or not), and then add two hooks, after the user's own:

* before a command runs (bash ``PS0``, zsh ``preexec``, fish ``fish_preexec``): the OSC
  133 ``C`` mark (output starts), and ``C`` told to the call that armed the shell, if one
  did;
* after it ends, before the prompt (bash first in ``PROMPT_COMMAND``, zsh first in
  ``precmd_functions``, fish ``fish_postexec``): the marks ``D;status`` and ``A``, and
  ``D`` with the status told to the armed call. An ``exit`` runs the same (bash's ``EXIT``
  trap, before the user's own; zsh ``zshexit_functions``; fish runs ``fish_postexec`` for
  it), so the call that typed it gets the shell's status before its pane closes.

How a call arms the shell and what the hooks tell it: ``schemux.shell.channel`` (pipes
of the call's process, opened through ``/proc``; shell builtins only, no process). At
its first prompt the shell says what it is in the pane option ``SHELL``, with the one
tmux client it ever starts. tmux 3.3a does not parse OSC 133 and 3.4+ keeps only prompt
lines from it; neither tells where in the grid a mark was, so the positions come from
tmux itself, read while the hook holds the shell, and the marks are for terminals and
tmux's own prompt navigation. fish 4 writes the marks itself.

No user file is changed: bash gets ``--rcfile`` (the login files are read by that file,
in bash's order, when the pane is a login shell: bash ignores ``--rcfile`` as one); zsh a
private ``ZDOTDIR`` whose files set ``ZDOTDIR`` back to the user's around sourcing each of
theirs, and leave it as the user had it; fish ``--init-command`` (run after its config
files). The hooks keep ``$?`` for the user's own prompt commands, and nothing of them
shows on the screen or in history. The files are written once per content into a private
directory (0700, checked to be ours) next to tmux's own sockets.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import shlex
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

# the pane option the hooks set at the first prompt: "NAME PID PASTE EOL ARMED-DIRECTORY"
SHELL = "@schemux_shell"
# set by schemux on a pane it started with the hooks (the shell's name): until the hooks
# report, its shell has not reached its first prompt
PENDING = "@schemux_hooks"

# the variables the files read once, then unset
_TMUX_VARIABLE = "__SCHEMUX_TMUX"
_LOGIN_VARIABLE = "__SCHEMUX_LOGIN"
_USER_ZDOTDIR = "__SCHEMUX_USER_ZDOTDIR"
_DIRECTORY_VARIABLE = "__SCHEMUX_INTEGRATION"
_ARMED_VARIABLE = "__SCHEMUX_ARMED"

# the hooks, with __SCHEMUX_TMUX and __SCHEMUX_ARMED set: after the user's startup files, or
# in a pane adopted at its prompt (``adoption_line``)
_BASH_HOOKS = r"""if [ -n "${TMUX_PANE-}" ] && [ -n "${__SCHEMUX_TMUX-}" ]; then
  # a call's suppress_history (a leading space) keeps its command out of the history
  case :${HISTCONTROL-}: in *:ignorespace:*|*:ignoreboth:*) ;;
    *) HISTCONTROL=${HISTCONTROL:+$HISTCONTROL:}ignorespace ;; esac
  __schemux_tmux=$__SCHEMUX_TMUX __schemux_socket=${TMUX%%,*} __schemux_pane=$TMUX_PANE
  __schemux_channels=$__SCHEMUX_ARMED __schemux_armed=$__SCHEMUX_ARMED/$$ __schemux_first=1
  __schemux_paste=0
  [[ $(bind -v 2>/dev/null) == *"enable-bracketed-paste on"* ]] && __schemux_paste=1
  # tmux's answer to a status query (asked as read's prompt, echo off), and its answers
  # to any query the command wrote before it, read and dropped; past 2 s only while tmux
  # (the shell's parent) is stopped, 2 minutes at most: an answer given up on would come
  # later all the same, as keys typed at the prompt
  __schemux_answered() {
    local answer= part prompt=$'\e[5n' tries=0
    while (( tries++ < 60 )); do
      if IFS= read -rs -d n -t 2 ${prompt:+-p "$prompt"} part </dev/tty 2>/dev/tty; then
        answer+=$part
        [[ $answer == *$'\e[0' ]] && return 0
        answer+=n
      else
        answer+=$part
        [[ $(</proc/$PPID/stat) == *') '[Tt]' '* ]] || return 1
      fi
      prompt=
    done
    return 1
  }
  # tell the call that armed this shell (if one did) "$1" (C, or D and "$2"), and wait
  # for its answer: the nonce this message carries
  __schemux_tell() {
    [[ -f $__schemux_armed ]] || return 0
    local owner to from rest answer nonce=$BASHPID$RANDOM
    {
      read -r owner to from rest <"$__schemux_armed" && [[ -p /proc/$owner/fd/$to ]] &&
        # tmux takes in what the shell wrote a moment after the pipe's reader could: the
        # message goes once tmux answered what came before it (and those answers are
        # taken: the line editor would take them for keys typed)
        __schemux_answered &&
        printf '%s\n' "$1 $nonce${2:+ $2}" >|"/proc/$owner/fd/$to" &&
        # as long as the owner lives (stopped or slow, it answers when it goes on): a
        # read a signal cut short is read again; the pipe's path goes with its owner
        while [[ -p /proc/$owner/fd/$from ]]; do
          read -r -t 1 answer <"/proc/$owner/fd/$from" && [[ $answer == "$nonce" ]] && break
        done
    } 2>/dev/null
    return 0
  }
  __schemux_precmd() {
    local s=$?
    printf '\033]133;D;%s\007\033]133;A\007' "$s"
    __schemux_tell D "$s $__schemux_paste -"
    if [[ -n $__schemux_first ]]; then
      __schemux_first=
      "$__schemux_tmux" -S "$__schemux_socket" set -pt "$__schemux_pane" @schemux_shell \
        "bash $$ $__schemux_paste - $__schemux_channels" </dev/null >/dev/null 2>&1
    fi
    return "$s"
  }
  if [[ $(declare -p PROMPT_COMMAND 2>/dev/null) == "declare -a"* ]]; then
    PROMPT_COMMAND=(__schemux_precmd "${PROMPT_COMMAND[@]}")
  else
    PROMPT_COMMAND="__schemux_precmd${PROMPT_COMMAND:+;$PROMPT_COMMAND}"
  fi
  # before the command (in the one fork of PS0's substitution), then the mark (bash's \e
  # and \a escapes)
  PS0="${PS0-}"'$(__schemux_tell C)\e]133;C\a'
  # an `exit` reports like a prompt, so the call that typed it gets its status; a trap
  # of the user's own on EXIT still runs, after
  __schemux_exit_trap_of() { __schemux_user_exit_trap=${3-}; }  # of `trap -- 'BODY' EXIT`
  eval "__schemux_exit_trap_of $(trap -p EXIT)"
  unset -f __schemux_exit_trap_of
  __schemux_exit() {
    __schemux_precmd
    local s=$?
    eval "$__schemux_user_exit_trap"
    return "$s"
  }
  trap __schemux_exit EXIT
fi
unset __SCHEMUX_TMUX __SCHEMUX_ARMED
"""

_BASH_RC = (
    r"""# schemux shell integration for bash: the user's startup files, then the hooks
if [ -n "${__SCHEMUX_LOGIN-}" ]; then
  [ -r /etc/profile ] && . /etc/profile
  if [ -r ~/.bash_profile ]; then . ~/.bash_profile
  elif [ -r ~/.bash_login ]; then . ~/.bash_login
  elif [ -r ~/.profile ]; then . ~/.profile
  fi
elif [ -r ~/.bashrc ]; then
  . ~/.bashrc
fi
unset __SCHEMUX_LOGIN __SCHEMUX_INTEGRATION
"""
    + _BASH_HOOKS
)

# zsh reads $ZDOTDIR/.zshenv, .zprofile (login), .zshrc (interactive), .zlogin (login):
# each of ours sources the user's own with ZDOTDIR as the user has it
_ZSHENV = r"""# schemux shell integration for zsh: the user's .zshenv
__schemux_zdotdir=$ZDOTDIR
if [[ -n ${__SCHEMUX_USER_ZDOTDIR+x} ]]; then
  ZDOTDIR=$__SCHEMUX_USER_ZDOTDIR
else
  unset ZDOTDIR
fi
unset __SCHEMUX_USER_ZDOTDIR
[[ -f ${ZDOTDIR:-$HOME}/.zshenv ]] && source "${ZDOTDIR:-$HOME}/.zshenv"
__schemux_user_zdotdir=${ZDOTDIR-}
__schemux_user_has_zdotdir=${ZDOTDIR+x}
ZDOTDIR=$__schemux_zdotdir
"""

_ZSH_USER_DOTDIR = r"""
__schemux_to_user() {
  if [[ -n $__schemux_user_has_zdotdir ]]; then
    ZDOTDIR=$__schemux_user_zdotdir
  else
    unset ZDOTDIR
  fi
}
__schemux_to_ours() {
  __schemux_user_zdotdir=${ZDOTDIR-}
  __schemux_user_has_zdotdir=${ZDOTDIR+x}
  ZDOTDIR=$__schemux_zdotdir
}
"""

_ZPROFILE = (
    "# schemux shell integration for zsh: the user's .zprofile\n"
    + _ZSH_USER_DOTDIR
    + r"""__schemux_to_user
[[ -f ${ZDOTDIR:-$HOME}/.zprofile ]] && source "${ZDOTDIR:-$HOME}/.zprofile"
__schemux_to_ours
"""
)

_ZSH_HOOKS = r"""if [[ -n ${TMUX_PANE-} && -n ${__SCHEMUX_TMUX-} ]]; then
  setopt HIST_IGNORE_SPACE  # a call's suppress_history (a leading space) keeps it out
  typeset -g __schemux_tmux=$__SCHEMUX_TMUX __schemux_socket=${TMUX%%,*} __schemux_pane=$TMUX_PANE
  typeset -g __schemux_channels=$__SCHEMUX_ARMED __schemux_armed=$__SCHEMUX_ARMED/$$
  typeset -g __schemux_first=1
  # tmux's answer to a status query (asked as read's prompt, echo off), and its answers
  # to any query the command wrote before it, read and dropped; past 2 s only while tmux
  # (the shell's parent) is stopped, 2 minutes at most: an answer given up on would come
  # later all the same, as keys typed at the prompt
  __schemux_answered() {
    local answer= part prompt=$'\e[5n' tries=0
    while (( tries++ < 60 )); do
      if IFS= read -rs -d n -t 2 "part?$prompt" </dev/tty 2>/dev/tty; then
        answer+=$part
        [[ $answer == *$'\e[0' ]] && return 0
        answer+=n
      else
        answer+=$part
        [[ $(</proc/$PPID/stat) == *') '[Tt]' '* ]] || return 1
      fi
      prompt=
    done
    return 1
  }
  # tell the call that armed this shell (if one did) "$1" (C, or D and "$2"), and wait
  # for its answer: the nonce this message carries
  __schemux_tell() {
    [[ -f $__schemux_armed ]] || return 0
    local owner to from rest answer nonce=$RANDOM$RANDOM
    {
      read -r owner to from rest <$__schemux_armed && [[ -p /proc/$owner/fd/$to ]] &&
        # tmux takes in what the shell wrote a moment after the pipe's reader could: the
        # message goes once tmux answered what came before it (and those answers are
        # taken: the line editor would take them for keys typed)
        __schemux_answered &&
        print -r -- "$1 $nonce${2:+ $2}" >|/proc/$owner/fd/$to &&
        # as long as the owner lives (stopped or slow, it answers when it goes on): a
        # read a signal cut short is read again; the pipe's path goes with its owner
        while [[ -p /proc/$owner/fd/$from ]]; do
          read -r -t 1 answer </proc/$owner/fd/$from && [[ $answer == $nonce ]] && break
        done
    } 2>/dev/null
    return 0
  }
  __schemux_precmd() {
    local s=$? paste=0 eol=-
    setopt localoptions extendedglob
    [[ -n ${zle_bracketed_paste-} ]] && paste=1
    if [[ -o prompt_sp && -o prompt_cr ]]; then
      # zsh marks output without a final newline before precmd: say how it looks
      eol=${(%)${PROMPT_EOL_MARK-%B%S%#%s%b}}
      eol=${eol//$'\e'\[[0-9;]#[a-zA-Z]/}
      eol=${eol//$'\e'[\(\)][A-Z0-9]/}
      eol=${eol//[[:space:]]/}
      [[ -z $eol ]] && eol=-
    fi
    printf '\033]133;D;%s\007\033]133;A\007' "$s"
    __schemux_tell D "$s $paste $eol"
    if [[ -n $__schemux_first ]]; then
      __schemux_first=
      "$__schemux_tmux" -S "$__schemux_socket" set -pt "$__schemux_pane" @schemux_shell \
        "zsh $$ $paste $eol $__schemux_channels" </dev/null >/dev/null 2>&1
    fi
    return $s
  }
  __schemux_preexec() {
    __schemux_tell C
    printf '\033]133;C\007'
  }
  precmd_functions=(__schemux_precmd $precmd_functions)
  preexec_functions+=(__schemux_preexec)
  # an `exit` reports like a prompt, so the call that typed it gets its status
  zshexit_functions=(__schemux_precmd $zshexit_functions)
fi
unset __SCHEMUX_TMUX __SCHEMUX_ARMED
"""

_ZSHRC = (
    "# schemux shell integration for zsh: the user's .zshrc, then the hooks\n"
    + _ZSH_USER_DOTDIR
    + r"""__schemux_to_user
[[ -f ${ZDOTDIR:-$HOME}/.zshrc ]] && source "${ZDOTDIR:-$HOME}/.zshrc"
__schemux_to_ours
"""
    + _ZSH_HOOKS
    + r"""if [[ ! -o login ]]; then
  __schemux_to_user
  unset __schemux_zdotdir __schemux_user_zdotdir __schemux_user_has_zdotdir
  unfunction __schemux_to_user __schemux_to_ours
fi
"""
)

_ZLOGIN = (
    "# schemux shell integration for zsh: the user's .zlogin\n"
    + _ZSH_USER_DOTDIR
    + r"""__schemux_to_user
unset __schemux_zdotdir __schemux_user_zdotdir __schemux_user_has_zdotdir
unfunction __schemux_to_user __schemux_to_ours
[[ -f ${ZDOTDIR:-$HOME}/.zlogin ]] && source "${ZDOTDIR:-$HOME}/.zlogin"
"""
)

# run by fish's --init-command, after the user's config files
_FISH_HOOKS = r"""if set -q TMUX_PANE; and set -q __SCHEMUX_TMUX
    set -g __schemux_tmux $__SCHEMUX_TMUX
    set -g __schemux_socket (string split -f1 , -- $TMUX)
    set -g __schemux_pane $TMUX_PANE
    set -g __schemux_marks 1
    set -g __schemux_paste ''
    if string match -qr '^[4-9]|^[1-9][0-9]' -- $version
        set __schemux_marks 0  # fish 4 writes the OSC 133 marks itself
        # fish 4 turns bracketed paste on only after drawing the prompt, after these
        # hooks report it ready: a multi-line command pasted in between would run line
        # by line. Turned on here, before the report, as fish 3 does at fish_prompt
        set __schemux_paste '\e[?2004h'
    end
    set -g __schemux_channels $__SCHEMUX_ARMED
    set -g __schemux_armed $__SCHEMUX_ARMED/$fish_pid
    # tell the call that armed this shell (if one did) $argv[1] (C, or D and $argv[2]),
    # and wait for its answer: the nonce this message carries (fish's read has no
    # timeout: the answer's pipe ends when its owner does). fish's read is its line
    # editor on a terminal, so the call asks tmux for the cursor meanwhile, not the hook
    function __schemux_tell
        test -f $__schemux_armed; or return 0
        read -l owner to from rest <$__schemux_armed
        test -p /proc/$owner/fd/$to; or return 0
        set -l nonce (random)(random)
        echo $argv[1] $nonce $argv[2..] >/proc/$owner/fd/$to; or return 0
        while test -p /proc/$owner/fd/$from; and read -l answer </proc/$owner/fd/$from
            test "$answer" = $nonce; and break
        end
        return 0
    end
    function __schemux_postexec --on-event fish_postexec
        set -l s $status
        test $__schemux_marks = 1; and printf '\e]133;D;%s\a\e]133;A\a' $s
        printf $__schemux_paste
        __schemux_tell D "$s 1 -"
    end
    function __schemux_preexec --on-event fish_preexec
        __schemux_tell C
        test $__schemux_marks = 1; and printf '\e]133;C\a'
    end
    function __schemux_first_prompt --on-event fish_prompt
        functions -e __schemux_first_prompt
        printf $__schemux_paste
        $__schemux_tmux -S $__schemux_socket set -pt $__schemux_pane @schemux_shell \
            "fish $fish_pid 1 - $__schemux_channels" </dev/null >/dev/null 2>&1
    end
end
set -e __SCHEMUX_TMUX __SCHEMUX_ARMED
"""

_FISH_INIT = (
    r"""# schemux shell integration for fish: the hooks
set -e __SCHEMUX_INTEGRATION
"""
    + _FISH_HOOKS
)

# a pane schemux did not start, adopted at its idle prompt (``adoption_line``): the hooks
# alone, once (the user's startup files ran when the shell started), from the tmux binary
# and the armed files' directory given as the file's arguments
_ADOPT_BASH = (
    "# schemux shell integration for bash, adopted at a prompt: the hooks, once\n"
    "if ! declare -F __schemux_precmd >/dev/null; then\n"
    "__SCHEMUX_TMUX=$1 __SCHEMUX_ARMED=$2\n" + _BASH_HOOKS + "fi\n"
)
_ADOPT_ZSH = (
    "# schemux shell integration for zsh, adopted at a prompt: the hooks, once\n"
    "if (( ! ${+functions[__schemux_precmd]} )); then\n"
    "__SCHEMUX_TMUX=$1 __SCHEMUX_ARMED=$2\n" + _ZSH_HOOKS + "fi\n"
)
_ADOPT_FISH = (
    "# schemux shell integration for fish, adopted at a prompt: the hooks, once\n"
    "if not functions -q __schemux_tell\n"
    "set -g __SCHEMUX_TMUX $argv[1]\nset -g __SCHEMUX_ARMED $argv[2]\n" + _FISH_HOOKS + "end\n"
)

_FILES = MappingProxyType(
    {
        "bashrc": _BASH_RC,
        "zsh/.zshenv": _ZSHENV,
        "zsh/.zprofile": _ZPROFILE,
        "zsh/.zshrc": _ZSHRC,
        "zsh/.zlogin": _ZLOGIN,
        "init.fish": _FISH_INIT,
        "adopt.bash": _ADOPT_BASH,
        "adopt.zsh": _ADOPT_ZSH,
        "adopt.fish": _ADOPT_FISH,
    }
)

INTEGRATED_SHELLS = frozenset({"bash", "zsh", "fish"})
# shells whose hooks ask tmux for the cursor before they tell (``schemux.shell.barrier``);
# fish's read is its line editor on a terminal: schemux asks for its hooks
_HOOKS_ASK_TERMINAL = frozenset({"bash", "zsh"})


@dataclass(frozen=True)
class HookedShell:
    """What a pane's hooks said of its shell (``SHELL``'s value)."""

    name: str
    pid: int
    bracketed_paste: bool
    eol_mark: str  # zsh's mark for output without a final newline, "" when none
    armed: Path  # the file a call writes to arm the hooks (``schemux.shell.channel``)

    @classmethod
    def parse(cls, value: str) -> HookedShell | None:
        fields = value.split(" ", 4)
        if len(fields) != 5 or fields[0] not in INTEGRATED_SHELLS or not fields[1].isdigit():
            return None
        channels = Path(fields[4])
        if not _is_channels_directory(channels):
            return None
        mark = "" if fields[3] == "-" else fields[3]
        return cls(fields[0], int(fields[1]), fields[2] == "1", mark, channels / fields[1])

    @property
    def asks_terminal(self) -> bool:
        """Whether the hooks make sure tmux has read what the shell wrote before they tell
        (``schemux.shell.barrier``: else schemux does, while the hook waits)."""
        return self.name in _HOOKS_ASK_TERMINAL

    def after_command(self, paste: str, eol_mark: str) -> HookedShell:
        """As the hooks told it again after a command (``D`` in ``schemux.shell.channel``)."""
        mark = "" if eol_mark == "-" else eol_mark
        return dataclasses.replace(self, bracketed_paste=paste == "1", eol_mark=mark)

    @property
    def value(self) -> str:
        """What ``SHELL`` holds for this shell."""
        mark = self.eol_mark or "-"
        paste = int(self.bracketed_paste)
        return f"{self.name} {self.pid} {paste} {mark} {self.armed.parent}"


# the directory of the integration's files, per user, beside tmux's socket directory
SHELLS_CACHE = "schemux-shells-"


# where the files that arm a shell's hooks are, one per shell (named by its pid)
ARMED = "armed"


def _directory_base(env: Mapping[str, str]) -> Path:
    """Next to tmux's own socket directory: ``$TMUX_TMPDIR`` or /tmp."""
    return Path(env.get("TMUX_TMPDIR") or "/tmp")


def _top(env: Mapping[str, str]) -> Path:
    return _directory_base(env) / f"{SHELLS_CACHE}{os.getuid()}"


def armed_directory(env: Mapping[str, str]) -> Path:
    """Where the hooks of shells started with ``env`` look for the file that arms them."""
    return _top(env) / ARMED


def _is_channels_directory(path: Path) -> bool:
    """Whether a directory the hooks named can be ``armed_directory`` of some
    environment: nothing else is written to on their word (a program in the pane can set
    the pane option they report in)."""
    return (
        path.is_absolute()
        and path.name == ARMED
        and path.parent.name == f"{SHELLS_CACHE}{os.getuid()}"
        and ".." not in path.parts
    )


def private_directory(path: Path) -> None:
    """Make ``path`` a directory of ours alone, or refuse one that is not (OSError)."""
    with contextlib.suppress(FileExistsError):
        path.mkdir(mode=0o700)
    info = path.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        raise OSError(f"{path} is not a directory of this user's")
    if stat.S_IMODE(info.st_mode) & 0o077:
        os.chmod(path, 0o700)


def install(env: Mapping[str, str]) -> Path:
    """The directory holding the integration's files, written there if missing; named
    by their content, so a schemux of another version never changes files that a
    running shell may still read."""
    digest = hashlib.sha256(repr(sorted(_FILES.items())).encode()).hexdigest()[:16]
    top = _top(env)
    private_directory(top)
    private_directory(top / ARMED)
    directory = top / digest
    if not (directory / "done").exists():
        private_directory(directory)
        private_directory(directory / "zsh")
        for name, text in _FILES.items():
            target = directory / name
            temporary = target.with_name(f".{target.name}.{os.getpid()}")
            temporary.write_text(text)
            temporary.replace(target)
        (directory / "done").write_text("")
    return directory


def integrated_command(
    shell: str, tmux_binary: str, env: Mapping[str, str], *, login: bool
) -> list[str] | None:
    """The argv that starts ``shell`` (a path) with the hooks, as a login shell with
    ``login``; None for a shell without an integration (or where its files cannot be
    written: the pane then runs the shell as it is, and schemux falls back)."""
    name = os.path.basename(shell)
    if name not in INTEGRATED_SHELLS:
        return None
    try:
        directory = install(env)
    except OSError:
        return None
    variables = [f"{_TMUX_VARIABLE}={tmux_binary}", f"{_ARMED_VARIABLE}={armed_directory(env)}"]
    if name == "bash":
        if login:
            variables.append(f"{_LOGIN_VARIABLE}=1")
        argv = [shell, "--rcfile", str(directory / "bashrc"), "-i"]
    elif name == "zsh":
        if "ZDOTDIR" in env:
            variables.append(f"{_USER_ZDOTDIR}={env['ZDOTDIR']}")
        variables.append(f"ZDOTDIR={directory / 'zsh'}")
        argv = [shell, *(["-l"] if login else []), "-i"]
    else:
        variables.append(f"{_DIRECTORY_VARIABLE}={directory}")
        init = f"source ${_DIRECTORY_VARIABLE}/init.fish"
        argv = [shell, *(["-l"] if login else []), "-i", "--init-command", init]
    return ["/usr/bin/env", *variables, *argv]


def adoption_line(shell: str, tmux_binary: str, env: Mapping[str, str]) -> str:
    """The one line that gives the idle ``shell`` (bash, zsh or fish, by name) of a pane
    schemux did not start its hooks: the adoption file sourced, with the tmux binary and
    the armed files' directory of a schemux started with ``env`` as its arguments, each
    quoted for that shell. OSError when the files cannot be written."""
    directory = install(env)
    words = [str(directory / f"adopt.{shell}"), tmux_binary, str(armed_directory(env))]
    if shell == "fish":
        # fish's single quotes take a backslash before a backslash or a quote as an escape
        quoted = ["'" + word.replace("\\", "\\\\").replace("'", "\\'") + "'" for word in words]
        return "source " + " ".join(quoted)
    return ". " + " ".join(shlex.quote(word) for word in words)
