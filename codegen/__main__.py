"""``python -m codegen [--check] [--root DIR]``: import, generate, report contract changes.

A run also reports what each overlay (``codegen.overlays``) changes over its contract,
and the projections (``codegen.projection``) that are new, changed or no
longer needed, served where a contract breaks a provider rule; a served document that
still breaks one stops it.

Exit status 0 when done (or, with ``--check``, when everything is current); 1 when the
import fails, when an overlay is missing or broken, when a served document breaks a
provider rule or served text names what this server does not have
(``codegen.served_text``), or, with ``--check``, when a file would change.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from codegen.contract_diff import format_report
from codegen.importer import ImportFailed
from codegen.pipeline import (
    format_overlays,
    format_projections,
    make_plan,
    out_of_date,
    write,
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m codegen", description=__doc__)
    parser.add_argument(
        "--check",
        action="store_true",
        help="write nothing; fail naming each file that would change",
    )
    parser.add_argument(
        "--root", type=Path, default=Path.cwd(), help="repository root (default: the current one)"
    )
    options = parser.parse_args(argv)
    root = options.root.resolve()

    try:
        plan = make_plan(root)
    except ImportFailed as failure:
        print("codegen: stopped, nothing written:", file=sys.stderr)
        for problem in failure.problems:
            print(f"  {problem}", file=sys.stderr)
        return 1

    print(format_report(plan.changes), end="")
    if options.check:
        stale = out_of_date(root, plan)
        for path in stale:
            action = "would delete" if plan.files[path] is None else "would change"
            print(f"{action}: {path.as_posix()}", file=sys.stderr)
        return 1 if stale else 0
    print(format_overlays(plan), end="")
    print(format_projections(plan), end="")
    for path in write(root, plan):
        print(f"{'deleted' if plan.files[path] is None else 'wrote'} {path.as_posix()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
