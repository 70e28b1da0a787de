"""The real command in a terminal of each colour system: only the escapes that terminal understands."""

from __future__ import annotations

import os
import re
import sys

import pytest

pytest.importorskip("pyte", reason="needs pyte (pip install -e '.[test]')")

from .ptyterm import PtyTerminal, full_demo_screen, output_until  # noqa: E402 - needs pyte

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


def colour_codes(output: bytes) -> list[bytes]:
    """The SGR parameters that set a colour (38;.. 48;.., 30-49, 90-107), from every SGR sent."""
    found = []
    for parameters in re.findall(rb"\x1b\[([0-9;:]*)m", output):
        for code in parameters.split(b";"):
            number = int(code) if code.isdigit() else -1
            if code in (b"38", b"48") or 30 <= number <= 49 or 90 <= number <= 107:
                found.append(parameters)
                break
    return found


@pytest.mark.parametrize("options", [(), ("--full-redraw",)], ids=["changed cells", "Textual's own output"])
def test_no_color_sends_no_colour_and_the_cursor_row_is_reversed(options: tuple[str, ...]) -> None:
    """NO_COLOR: not a colour code in the bytes sent (not even greys), by the changed-cell writer or by
    Textual's own output; reverse, bold and underline say what colour said: the focused panel's cursor
    row is drawn in reverse."""
    command = [sys.executable, "-m", "gputop", "--demo", *options]
    terminal = PtyTerminal(command, dict(os.environ) | {"NO_COLOR": "1"}, 100, 30)
    try:
        terminal.wait_for("the processes", full_demo_screen)
        terminal.pump(0.5)
        row = next(y for y, line in enumerate(terminal.text().splitlines()) if " 41210 " in line)
        cells = terminal.screen.buffer[row]
        assert all(cells[x].reverse for x in range(2, terminal.columns - 2))
        terminal.type(b"q")
        assert terminal.wait_exit() == 0
    finally:
        terminal.close()
    output = bytes(terminal.raw)
    assert re.search(rb"\x1b\[[0-9;]*m", output), "no SGR at all: nothing drawn"
    assert colour_codes(output) == []


def test_an_empty_no_color_is_no_request() -> None:
    """https://no-color.org: only a non-empty NO_COLOR turns colour off."""
    output = run_demo(NO_COLOR="", TERM="xterm-256color", TEXTUAL_COLOR_SYSTEM="truecolor")
    colours = set(RGB.findall(output))
    assert any(not red == green == blue for red, green, blue in colours), sorted(colours)[:5]


def test_once_on_a_terminal_has_colour_unless_no_color_is_set() -> None:
    outputs = {}
    for no_color in ("", "1"):
        terminal = PtyTerminal(
            [sys.executable, "-m", "gputop", "--demo", "--once"], dict(os.environ) | {"NO_COLOR": no_color}, 100, 30
        )
        try:
            assert terminal.wait_exit() == 0
        finally:
            terminal.close()
        outputs[no_color] = bytes(terminal.raw)
    assert colour_codes(outputs[""]), "--once on a terminal draws in colour"
    assert colour_codes(outputs["1"]) == []
    assert b"NVIDIA H100" in outputs["1"]
