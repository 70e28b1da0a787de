"""The real command on a terminal that cannot show the glyphs (a C locale, a console, a VT100, or
``--ascii``): every byte it sends is 7-bit ASCII but for the escape sequences, and the screen still
has its bars, borders and marks, in ASCII."""

from __future__ import annotations

import os
import re
import sys

import pytest

pytest.importorskip("pyte", reason="needs pyte (pip install -e '.[test]')")

from .ptyterm import full_demo_screen, output_until  # noqa: E402 - needs pyte

# CSI sequences, OSC strings, and the two- or three-byte escapes (charsets, keypad modes, save/restore).
ESCAPES = re.compile(
    rb"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[=>78DEHMNOZc]"
)
# What is left of the locale in the test's own environment, so that only what a case sets counts.
LOCALE = ("LC_ALL", "LC_CTYPE", "LANG", "TERM", "NO_COLOR")


def demo_output(*options: str, term: str = "xterm-256color", **env: str) -> bytes:
    base = {name: value for name, value in os.environ.items() if name not in LOCALE}
    command = [sys.executable, "-m", "gputop", "--demo", *options]
    return output_until(command, base | env, "the processes", full_demo_screen, term=term)


def beyond_ascii(output: bytes) -> list[bytes]:
    return re.findall(rb"[^\x00-\x7f]+", ESCAPES.sub(b"", output))


@pytest.mark.parametrize(
    ("options", "term", "env"),
    [
        ((), "xterm-256color", {"LANG": "C"}),
        ((), "vt100", {"LANG": "C.UTF-8"}),
        (("--ascii",), "xterm-256color", {"LANG": "C.UTF-8"}),
        (("--ascii", "--full-redraw"), "xterm-256color", {"LANG": "C.UTF-8"}),
    ],
    # The other locales and terminals are tests/test_glyphs.py's table: the same choice, made at start.
    ids=["LANG=C", "TERM=vt100", "--ascii", "--ascii --full-redraw"],
)
def test_a_terminal_without_the_glyphs_gets_ascii_only(
    options: tuple[str, ...], term: str, env: dict[str, str]
) -> None:
    output = demo_output(*options, term=term, **env)
    assert beyond_ascii(output) == []
    text = ESCAPES.sub(b"", output)
    assert b"+- Processes" in text  # the panel's border, in ASCII
    assert re.search(rb"MEM  #+\.+ ", text), "the memory bars, in ASCII"


def test_a_utf8_terminal_gets_the_glyphs() -> None:
    """The other side: the same demo on a UTF-8 xterm draws its borders and bars with box and block glyphs."""
    output = demo_output(LANG="C.UTF-8")
    drawn = b"".join(beyond_ascii(output)).decode()
    assert "╭" in drawn and "█" in drawn and "░" in drawn
