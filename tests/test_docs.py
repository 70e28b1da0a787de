"""The README and docs/: short enough to read, every link lands, and CI still finds the test command."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
LINK = re.compile(r"\]\(([^)\s]+)\)")


def pages() -> list[Path]:
    return [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted(DOCS.glob("*.md"))]


def anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.DOTALL)
    return {anchor(line.lstrip("#")) for line in text.splitlines() if line.startswith("#")}


def test_the_readme_is_under_15_kb_and_opens_with_the_two_commands_then_a_picture() -> None:
    readme = (ROOT / "README.md").read_text()
    assert len(readme.encode()) < 15 * 1024
    blocks = re.findall(r"```sh\n(.*?)\n```", readme, flags=re.DOTALL)
    assert blocks[0] == "pip install -e . && gputop"
    # .ci/run runs the first line that starts with apt-get and holds the pytest command.
    test_lines = [line for line in readme.splitlines() if re.match(r"^apt-get .*python -m pytest", line)]
    assert test_lines == [blocks[1]]
    assert readme.index("![") < readme.index("## What it answers")


def test_every_relative_link_lands_on_a_file_and_heading_that_exist() -> None:
    broken = []
    for page in pages():
        for target in LINK.findall(page.read_text()):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, fragment = target.partition("#")
            landed = (page.parent / path).resolve() if path else page
            if not landed.exists():
                broken.append(f"{page.name}: {target} (no such file)")
            elif fragment and fragment not in anchors(landed):
                broken.append(f"{page.name}: {target} (no such heading)")
    assert broken == []


def test_the_readme_links_every_page_of_docs() -> None:
    readme = (ROOT / "README.md").read_text()
    linked = {target.removeprefix("docs/") for target in LINK.findall(readme) if target.startswith("docs/")}
    assert {page.name for page in DOCS.glob("*.md")} == linked


def test_every_install_command_names_this_projects_distribution() -> None:
    # `gputop` on PyPI is another project: `pip install gputop[...]` would install it instead.
    wrong = []
    for page in pages():
        for command in re.findall(r"pip install [^`\n]*", page.read_text()):
            command = re.split(r"&&|;|#|\|", command)[0]
            targets = [word.strip("'\"") for word in command.split()[2:] if not word.startswith("-")]
            if any(not (t.startswith(".") or t.startswith("gputop-monitor")) for t in targets if "gputop" in t):
                wrong.append(f"{page.name}: {command}")
    assert wrong == []
