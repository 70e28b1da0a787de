"""The real command in a terminal of each colour system: only the escapes that terminal understands."""

from __future__ import annotations

import os
import re
import sys

import pytest

pytest.importorskip("pyte", reason="needs pyte (pip install -e '.[test]')")

from .ptyterm import full_demo_screen, output_until  # noqa: E402 - needs pyte

TRUECOLOUR = re.compile(rb"\x1b\[[0-9;]*[34]8;2;")
PALETTE_256 = re.compile(rb"\x1b\[[0-9;]*[34]8;5;")
RGB = re.compile(rb"[34]8;2;(\d+);(\d+);(\d+)")
ANY_COLOUR = re.compile(rb"\x1b\[[0-9;]*(?:3[0-7]|9[0-7]|4[0-7]|10[0-7]|[34]8;)")


def run_demo(**env: str) -> bytes:
    command = [sys.executable, "-m", "gputop", "--demo"]
    return output_until(command, dict(os.environ) | env, "the processes", full_demo_screen)


@pytest.mark.parametrize(
    ("colours", "allowed", "forbidden"),
    [
        ("truecolor", [TRUECOLOUR], []),
        ("256", [PALETTE_256], [TRUECOLOUR]),
        ("standard", [ANY_COLOUR], [TRUECOLOUR, PALETTE_256]),
    ],
)
def test_each_colour_system_gets_only_its_own_escapes(colours: str, allowed: list, forbidden: list) -> None:  # type: ignore[type-arg]
    output = run_demo(TEXTUAL_COLOR_SYSTEM=colours, TERM="xterm-256color")
    for pattern in allowed:
        assert pattern.search(output), f"{colours}: no {pattern.pattern!r}"
    for pattern in forbidden:
        assert not pattern.search(output), f"{colours}: found {pattern.pattern!r}"


def test_no_color_draws_in_greys_only() -> None:
    output = run_demo(NO_COLOR="1", TERM="xterm-256color", TEXTUAL_COLOR_SYSTEM="truecolor")
    colours = set(RGB.findall(output))
    assert colours, "nothing drawn"
    assert all(red == green == blue for red, green, blue in colours), sorted(colours)[:5]
