"""README.md stays short, keeps its two set-up commands, and links only to files that exist.

The README holds the quick start, what each bundled spec reaches, the three users' paths
and links; everything else lives in docs/ (the mkdocs site). .ci/run runs the README's
test command, and tests/integration/test_wheel_demo.py its first command.
"""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"

MAX_LINES = 250
# The two commands for a fresh machine, exactly as a user types them: the main job end to
# end on the embedded default data, and the test suite.
SETUP_COMMANDS = (
    "pip install -e . && synthflow demo",
    'pip install -e ".[dev]" && python -m pytest -n 2',
)
# [text](target) and ![alt](target); the target ends at whitespace or ")".
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def _relative_links(text: str) -> list[str]:
    """Every link target that is a path in the repository (no URL, no bare anchor)."""
    targets = []
    for target in LINK.findall(text):
        if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith(("#", "//")):
            continue
        targets.append(target)
    return targets


def test_readme_is_at_most_250_lines():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_LINES, (
        f"README.md has {len(lines)} lines (at most {MAX_LINES}): move the detail into docs/"
    )


def test_readme_keeps_the_two_setup_commands():
    lines = [line.strip() for line in README.read_text(encoding="utf-8").splitlines()]
    for command in SETUP_COMMANDS:
        assert command in lines, f"README.md lost its set-up command {command!r}"


def test_every_relative_link_in_the_readme_exists():
    links = _relative_links(README.read_text(encoding="utf-8"))
    assert links, "no relative link found: the link pattern no longer matches the README"
    missing = []
    for target in links:
        path = target.split("#", 1)[0].split("?", 1)[0]
        if path and not (README.parent / path).exists():
            missing.append(target)
    assert not missing, f"README.md links to files that do not exist: {missing}"


def test_the_link_pattern_finds_relative_links_only():
    text = (
        '[a](docs/index.md) ![b](docs/x.png "title") [c](https://example.org/y.md) '
        "[d](#quick-start) [e](docs/spec.md#wide-tables) [f](mailto:x@example.org)"
    )
    assert _relative_links(text) == ["docs/index.md", "docs/x.png", "docs/spec.md#wide-tables"]
