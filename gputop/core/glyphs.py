"""The glyphs gputop draws with, in one table: each Unicode glyph and the ASCII character that stands
in for it on a terminal that cannot show it. Which set is used is chosen once, at start.

A console (``TERM=linux``), an old terminal (``vt100``, ``vt220``) or a locale that is not UTF-8
(``LANG=C``) shows block elements, box lines and marks as garbage; ``--ascii`` (or ``ascii = true``
in the settings) asks for the ASCII set anywhere. The widgets draw the Unicode glyphs; what reaches
such a terminal is translated at one place on the way out (``to_ascii``: the TUI's driver, the
first frame, the ``--once`` table), each glyph into one character, so every cell stays where the
layout put it. The few drawings an ASCII character per glyph would spoil (the bars' eighth-cell
ends, the sparklines' levels) ask ``glyphs()`` for their set by name instead.
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Glyphs:
    """The drawings that need more than one glyph for one character: each set's own, by name."""

    bar_full: str
    bar_eighths: str  # a cell filled to 1/8 ... 7/8 ("": whole cells only, rounded)
    bar_empty: str
    bar_unknown: str  # a figure not known, the bar's whole width
    spark_levels: str  # lowest to highest


UNICODE = Glyphs(bar_full="█", bar_eighths="▏▎▍▌▋▊▉", bar_empty="░", bar_unknown="╌", spark_levels="▁▂▃▄▅▆▇█")
ASCII = Glyphs(bar_full="#", bar_eighths="", bar_empty=".", bar_unknown="-", spark_levels="_.-=+*#")

# Each glyph drawn one cell wide, and the ASCII character in its place: the marks and words' glyphs
# by hand; box lines and block elements (borders, bars, scroll bars) by their group below.
MARKS = {
    "…": "~",  # text cut to fit: still visibly cut
    "·": "|",  # a separator between facts
    "°": " ",  # 45°C reads 45 C, as `sensors` writes it in ASCII
    "⚠": "!",
    "✚": "+",
    "✖": "x",
    "✗": "x",
    "✓": "v",
    "●": "*",
    "•": "*",
    "○": "o",
    "Σ": "=",  # a total
    "↑": "^",
    "↓": "v",
    "←": "<",
    "→": ">",
    "▲": "^",
    "▼": "v",
    "▶": ">",
    "◀": "<",
    "—": "-",
    "–": "-",
    "“": '"',
    "”": '"',
    "‘": "'",
    "’": "'",
    "×": "x",
    "≥": ">",
    "≤": "<",
    "≈": "~",
    "µ": "u",
    "\u00a0": " ",  # a no-break space
}
_BOX_LINES = {  # U+2500-U+257F; every corner, tee and cross not listed is "+"
    "-": "─╴╶╼╾╌┄┈╍┅┉",
    "=": "━═╸╺",
    "|": "│╵╷┃║╹╻╽╿",
    ":": "╎┆┊╏┇┋",  # dashed: a dashed border stays apart from a heavy one
    "/": "╱",
    "\\": "╲",
    "X": "╳",
}
_BLOCKS = {  # U+2580-U+259F
    "#": "█▉▊▋▌▐▀▄▅▆▇▓▙▛▜▟▚▞",
    "_": "▁▂▃",
    "-": "▔",
    "|": "▍▎▏▕",
    ".": "░▖▗▘▝",
    ":": "▒",
}
# The replacement for a character not in the table, per cell (a wide character takes two).
UNKNOWN = "?"


def _stand_ins() -> dict[int, str]:
    table = {code: "+" for code in range(0x2500, 0x2580)}
    for groups in (_BOX_LINES, _BLOCKS):
        for ascii_char, glyphs in groups.items():
            table.update((ord(glyph), ascii_char) for glyph in glyphs)
    table.update((ord(glyph), ascii_char) for glyph, ascii_char in MARKS.items())
    return table


def _cells(char: str) -> int:
    """How many cells a terminal gives ``char``: 2 wide, 0 for a combining or format character."""
    if unicodedata.combining(char) or unicodedata.category(char) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


class _AsciiTable(dict[int, str]):
    """``str.translate``'s table: a glyph's stand-in, ``?`` a cell for any other character beyond ASCII."""

    def __missing__(self, code: int) -> str:
        if code < 0x80:
            raise KeyError(code)  # ASCII stays as it is
        replacement = self[code] = UNKNOWN * _cells(chr(code))
        return replacement


_TABLE = _AsciiTable(_stand_ins())
_chosen = [UNICODE]


def to_ascii(text: str) -> str:
    """``text`` with every character beyond ASCII replaced by its stand-in, cell for cell."""
    return text if text.isascii() else text.translate(_TABLE)


def use_ascii(wanted: bool) -> None:
    """Choose the set, once at start (before anything is drawn)."""
    _chosen[0] = ASCII if wanted else UNICODE


def ascii_only() -> bool:
    """Whether the ASCII set was chosen."""
    return _chosen[0] is ASCII


def glyphs() -> Glyphs:
    """The chosen set."""
    return _chosen[0]


def for_terminal(text: str) -> str:
    """``text`` as the chosen set shows it: ``to_ascii(text)`` under ASCII, else ``text`` itself."""
    return to_ascii(text) if ascii_only() else text


# Terminals that cannot show the glyphs, by $TERM (or its name before a '-': vt100-am).
PLAIN_TERMINALS = frozenset({"linux", "vt52", "vt100", "vt102", "vt220", "vt320", "vt420", "dumb"})


def wants_ascii(environ: Mapping[str, str]) -> bool:
    """Whether this terminal and locale need the ASCII set: a terminal in ``PLAIN_TERMINALS``, or a
    locale whose character set is not UTF-8 (the first of ``LC_ALL``, ``LC_CTYPE``, ``LANG`` that is
    set, as the C library picks it; none set at all is taken as UTF-8, as most terminals are now)."""
    term = environ.get("TERM", "")
    if term.split("-")[0] in PLAIN_TERMINALS:
        return True
    locale = next((environ[name] for name in ("LC_ALL", "LC_CTYPE", "LANG") if environ.get(name)), None)
    if locale is None:
        return False
    charset = locale.partition(".")[2].partition("@")[0]
    return charset.replace("-", "").lower() != "utf8"


def environment_at_start() -> Mapping[str, str]:
    """The environment gputop was started with. Python changes its own at start: in a C or POSIX
    locale (or one this machine lacks) it sets ``LC_CTYPE=C.UTF-8`` (PEP 538), which would hide the
    user's ``LANG=C``; ``/proc/self/environ`` still holds what was given."""
    try:
        with open("/proc/self/environ", "rb") as handle:
            entries = handle.read().split(b"\0")
    except OSError:
        return os.environ
    pairs = (entry.decode(errors="replace").partition("=") for entry in entries if b"=" in entry)
    return {name: value for name, _, value in pairs}


def wants_no_colour(environ: Mapping[str, str]) -> bool:
    """``NO_COLOR`` set to anything but the empty string (https://no-color.org)."""
    return bool(environ.get("NO_COLOR"))
