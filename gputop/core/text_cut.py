"""Text in a given number of terminal cells: the one place where gputop shortens what it shows.

Every cut is marked with "…", and every width is counted in cells, not characters: a CJK character
takes two cells, a combining mark none. A wide character that does not fit is left out whole (never
half of it, never a space in its place), so what is shown is always pieces of the true text, in
order, joined by "…"; the caller pads to the column.
"""

from __future__ import annotations

import functools
import unicodedata

ELLIPSIS = "…"


@functools.lru_cache(maxsize=4096)
def char_cells(char: str) -> int:
    """The cells one character takes in a terminal: 2 wide (East Asian wide or full-width), 0 combining, else 1."""
    if char.isascii():
        return 1 if char.isprintable() else 0
    if unicodedata.combining(char) or unicodedata.category(char) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def cells(text: str) -> int:
    """The cells ``text`` takes."""
    if text.isascii() and text.isprintable():
        return len(text)
    return sum(map(char_cells, text))


def head(text: str, width: int) -> str:
    """The longest start of ``text`` that fits in ``width`` cells."""
    if text.isascii() and text.isprintable():
        return text[: max(0, width)]
    if cells(text) <= width:
        return text
    used = 0
    for index, char in enumerate(text):
        used += char_cells(char)
        if used > width:
            return text[:index]
    return text


def tail(text: str, width: int) -> str:
    """The longest end of ``text`` that fits in ``width`` cells."""
    if text.isascii() and text.isprintable():
        return text[len(text) - max(0, min(width, len(text))) :]
    if cells(text) <= width:
        return text
    used = 0
    for index in range(len(text) - 1, -1, -1):
        used += char_cells(text[index])
        if used > width:
            return text[index + 1 :]
    return text


def cut_end(text: str, width: int) -> str:
    """``text`` in ``width`` cells: whole, or its start and "…" (nothing in 0 cells)."""
    if cells(text) <= width:
        return text
    if width <= 0:
        return ""
    return head(text, width - 1) + ELLIPSIS


def window(text: str, start: int, width: int) -> str:
    """``text`` from its character ``start`` on, in ``width`` cells: "…" first when something is left of
    it, "…" last when something is right of what fits (a column scrolled sideways)."""
    if start <= 0:
        return cut_end(text, width)
    if width <= 1:
        return ELLIPSIS[:width]
    return ELLIPSIS + cut_end(text[start:], width - 1)


def last_start(text: str, width: int) -> int:
    """The furthest ``start`` worth scrolling to: where ``window`` shows the end of ``text``."""
    if cells(text) <= width:
        return 0
    return len(text) - len(tail(text, max(0, width - 1)))


def keep_span(text: str, width: int, lead: int, span: tuple[int, int]) -> str:
    """``text`` in ``width`` cells with ``text[span[0]:span[1]]`` in view: its first ``lead`` characters
    (as many as there is room for), "…", the span and what follows it as far as it fits, "…" where
    more follows. With no room for any of the start beside the span: "…", the span on, "…"."""
    start, end = span
    lead_text = text[: min(lead, start)]
    joined = len(lead_text) == start  # the span follows the start kept: no "…" between them
    rest = text[start:]
    between = "" if joined else ELLIPSIS
    if cells(lead_text) + len(between) + cells(rest) <= width:
        return lead_text + between + rest
    if cells(rest) < width - 1:  # the span to the end fits beside some of the start
        return head(lead_text, width - 1 - cells(rest)) + ELLIPSIS + rest
    room = width - 1  # less the "…" that closes it
    wanted = cells(text[start:end])
    if cells(lead_text) + len(between) + wanted > room:
        between = ELLIPSIS
        lead_text = head(lead_text, room - 1 - wanted)
        if not lead_text:
            return window(text, start, width)
    return lead_text + between + head(rest, room - cells(lead_text) - len(between)) + ELLIPSIS


def fit_cells(text: str, width: int, right: bool = False) -> str:
    """``text`` in exactly ``width`` cells: cut with "…" where longer, padded with spaces (on the left: ``right``)."""
    text = cut_end(text, width)
    pad = " " * (width - cells(text))
    return pad + text if right else text + pad


def wrap(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width`` cells, broken after a space where one is near enough
    (a word longer than a line is broken where the line ends); joined, the lines are ``text``."""
    if width <= 0:
        return [text]
    lines = []
    while cells(text) > width:
        line = head(text, width) or text[0]
        space = line.rfind(" ")
        if space >= len(line) // 2:
            line = line[: space + 1]
        lines.append(line)
        text = text[len(line) :]
    lines.append(text)
    return lines
