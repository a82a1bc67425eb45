"""The documentation's links lead somewhere: every relative link names a file of the
checkout, and every ``#anchor`` a heading of its target as GitHub slugs it. The README
stays short enough for a newcomer to read."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from schemux.cli.environment import VARIABLES

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = sorted(
    [
        ROOT / "README.md",
        ROOT / "CONTRIBUTING.md",
        ROOT / "SECURITY.md",
        ROOT / "ARCHITECTURE.md",
        ROOT / "bench" / "README.md",
        *(ROOT / "docs").glob("*.md"),
    ]
)
README_MOST_LINES = 350

FENCE = re.compile(r"^(```|~~~).*?^\1\s*$", re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.DOTALL)
HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
LINK = re.compile(r"\[[^\]]*\]\(([^)]*)\)")
TITLE = re.compile(r"\s+\"[^\"]*\"$")
HTML_ANCHOR = re.compile(r"""<a\s+(?:id|name)=["']([^"']+)["']""")
EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)


def prose(markdown: str) -> str:
    """The text outside fenced code blocks (a ``#`` line in a block is no heading)."""
    return FENCE.sub("", markdown)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: its text as rendered (code spans, links and
    emphasis marks gone), lower case, every character but letters, digits, spaces,
    ``-`` and ``_`` dropped, spaces made ``-``."""
    text = CODE_SPAN.sub(lambda match: match.group(2), heading)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"[*~]", "", text).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every anchor a link may name in ``path``: its headings' slugs, a repeated one with
    ``-1``, ``-2``, ... as GitHub numbers them, and explicit ``<a id>`` anchors."""
    text = prose(path.read_text("utf-8"))
    found: set[str] = set(HTML_ANCHOR.findall(text))
    seen: dict[str, int] = {}
    for heading in HEADING.findall(text):
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def links(path: Path) -> list[str]:
    """The targets of the document's links, outside code blocks and code spans."""
    text = CODE_SPAN.sub("code", prose(path.read_text("utf-8")))
    return LINK.findall(text)


def broken(path: Path, root: Path = ROOT) -> list[str]:
    """Each relative link of ``path`` whose file or anchor is not there, saying which
    (files named relative to ``root``)."""
    problems = []
    for written in links(path):
        target = TITLE.sub("", written.strip()).removeprefix("<").removesuffix(">")
        if not target or any(character.isspace() for character in target):
            problems.append(f"{written!r}: not a link target (a line break or space in it?)")
            continue
        if EXTERNAL.match(target):
            continue
        file_part, _, anchor = target.partition("#")
        destination = (path.parent / file_part).resolve() if file_part else path
        if not destination.exists():
            problems.append(f"{target}: no file {destination.relative_to(root)}")
        elif anchor and (destination.suffix != ".md" or anchor not in anchors(destination)):
            problems.append(f"{target}: no heading #{anchor} in {destination.name}")
    return problems


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda path: str(path.relative_to(ROOT)))
def test_every_relative_link_and_anchor_resolves(path: Path) -> None:
    assert path.is_file()
    assert broken(path) == []


def test_the_readme_is_short() -> None:
    lines = (ROOT / "README.md").read_text("utf-8").splitlines()
    assert len(lines) <= README_MOST_LINES


def test_the_configuration_table_names_every_variable() -> None:
    """The README's configuration table lists each variable ``--help`` lists."""
    readme = (ROOT / "README.md").read_text("utf-8")
    table = readme.split("\n## Configuration\n", 1)[1].split("\n## ", 1)[0]
    missing = [each.name for each in VARIABLES if f"`{each.name}" not in table]
    assert missing == []


@pytest.mark.parametrize(
    ("heading", "expected"),
    [
        ("1,000 hosts", "1000-hosts"),
        ("Programs: `start_program`, `read_program`", "programs-start_program-read_program"),
        ("`tmux_snapshot` and `tmux_capture`", "tmux_snapshot-and-tmux_capture"),
        ("Resources: panes and programs, live", "resources-panes-and-programs-live"),
        ("Checking a set-up: `schemux doctor`", "checking-a-set-up-schemux-doctor"),
        ("**Bold** and [a link](x.md)", "bold-and-a-link"),
    ],
)
def test_slugs_are_githubs(heading: str, expected: str) -> None:
    assert slug(heading) == expected


def test_a_missing_file_or_heading_is_found(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# Other\n\n## A `code` heading\n\n## Twice\n\n## Twice\n")
    page = tmp_path / "page.md"
    page.write_text(
        "# Page\n\n"
        "[ok](other.md#a-code-heading) [ok](other.md#twice-1) [ok](#page) [web](https://x.org)\n"
        "[gone](missing.md) [bad](other.md#nowhere) [bad](#twice) [split](#a-\ncode)\n"
        "```sh\n# not a heading\n[in a block](missing-too.md)\n```\n"
        "`[in a span](missing-three.md)`\n"
    )
    assert [problem.split(":")[0] for problem in broken(page, tmp_path)] == [
        "missing.md",
        "other.md#nowhere",
        "#twice",
        "'#a-\\ncode'",
    ]
