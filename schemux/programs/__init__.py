"""Programs that schemux starts, each in a pane of its own, and everything they print.

How one runs, and why each step:

* **A gate** (``gate``: a Perl script, or Python's where there is no perl) is the pane's
  process, with the program's argv, start directory and environment as its own arguments
  (no shell parses them, tmux expands none of them). It holds the program until schemux
  has the output copy in place, then runs it as its child, in the start directory, with
  stdin (``input``, a private file) and stderr (``separateStderr``) redirected. When the
  program ends it writes an end marker to the terminal: a private OSC sequence with the
  program's exit status (128+N for signal N, as the contracts read it) and that status's
  token from a table of random tokens that came to the gate through a one-shot FIFO
  before the program started and is nowhere the program can read, so a program cannot
  fake its end. The marker is the last thing the pane prints, so when it comes out of the
  copy every byte the program wrote is in (control mode's ``%output`` lost those), and
  the status is right at once (tmux 3.3a could report it seconds late). The gate is a
  child subreaper: stopping ends the whole process tree, daemons that ``setsid``
  included, and so does the pane going away.
* **The copy** (``output``). ``pipe-pane -O`` (``panes``) writes the pane's bytes into a
  FIFO in a private runtime directory (``host``); a task reads it as it arrives, turns the
  bytes into text (``schemux.text.terminal``) and appends that to the program's text: to
  memory at once, to its text file in batches (a trip to a thread each). Readers wake on
  each append, not by polling, and read from memory what the file does not have yet.
* **Reads** address the text file by byte offset: a cursor is that offset, tagged with
  the program's own salt so that one program's cursor is refused by another.
* **The store** (``store``) holds the limits, ends programs (stopped, expired, gone),
  lets the oldest output go, and supervises every background task (``program.Tasks``):
  one that fails ends its program as gone, visibly. ``run`` is run_program's whole
  operation, start to result.
* **On another host** (``remote``; ssh or a command prefix, ``schemux.hosts``): the
  gate, the copy's FIFO, ``input`` and ``separateStderr`` live on that host, in a private
  0700 directory of one helper process there that serves every program over one session
  and streams the copies' bytes back; the text files stay here, so reads are the same.
  ``host.ProgramHost`` is the seam both program hosts fill; each host makes its own
  (``Host.program_host``).

The package's modules are imported by name (``schemux.programs.store``): the host side
(``host``, ``remote``, ``gate``) is imported by ``schemux.hosts``, below the tmux access
that ``store`` and ``program`` use.
"""

from typing import TYPE_CHECKING

from schemux.faces import face

if TYPE_CHECKING:
    from schemux.programs.store import ProgramStore

__all__ = ("ProgramStore",)
__getattr__ = face(__name__, {"ProgramStore": "store"})
