"""Send the terminal only the cells that changed, as curses does.

Textual redraws a refreshed region from the left edge of the widget that holds
it, each segment with its full style and a reset after it: a clock that ticks in
a table row costs the whole row. Over SSH, every tick, that adds up. This keeps a
copy of what the terminal shows; each partial update is cut down to the runs of
cells that differ, reached with the shortest cursor move, with a style sent only
when it differs from the one in force.

Full updates (a new screen, a dialog closing) are cut down the same way. What
the terminal shows is forgotten when its size changes or the app is suspended,
so the next frame is written in full.

This module uses public Rich and Textual names only: ``textual_private`` takes
Textual's frames apart into (x, y, strip) pieces and hands the result back.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import compress, count, repeat
from operator import ne, or_

from rich.cells import cell_len
from rich.color import ColorSystem
from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip

# What the terminal shows is kept a row at a time: a string with one character a cell and a list
# of each cell's SGR parameters (shared strings). A tuple a cell cost ten times the memory.
# The right half of a wide character is this placeholder in the row's string; a strip that holds
# it itself, or a zero-width character, is written as Textual renders it.
_WIDE_FILL = "\x00"
_UNKNOWN_SGR = "\x00"  # a cell whose content is not known: never equal to a style Textual draws
# Unchanged cells between two changed runs are rewritten when that takes fewer bytes than a
# cursor jump over them (about 4).
_JUMP_BYTES = 4
# The console's colour system by its public name; no name (no colour detected) writes true colour.
_COLOR_SYSTEMS = {
    "standard": ColorSystem.STANDARD,
    "256": ColorSystem.EIGHT_BIT,
    "truecolor": ColorSystem.TRUECOLOR,
    "windows": ColorSystem.WINDOWS,
}
# Styles whose SGR parameters are remembered; a frame uses a few dozen, so this is never reached
# unless styles are made afresh each frame, and then the memory is simply started again.
_STYLE_CACHE_SIZE = 4096


class _StyleCodes:
    """SGR parameters of each style, worked out once per style (a dictionary look-up after that)."""

    def __init__(self) -> None:
        self.color_system = ColorSystem.TRUECOLOR
        self._codes: dict[Style, str | None] = {}

    def use(self, color_system: ColorSystem) -> None:
        if color_system != self.color_system:
            self.color_system = color_system
            self._codes.clear()

    def sgr(self, style: Style | None) -> str | None:
        """SGR parameters of a style ('' for none), or None for one this module will not reproduce."""
        if style is None:
            return ""
        codes = self._codes
        if style in codes:
            return codes[style]
        if len(codes) >= _STYLE_CACHE_SIZE:
            codes.clear()
        # A hyperlink is not a cell attribute: such a strip is written as Textual renders it.
        sgr = None if style.link else Strip.render_ansi(style, self.color_system)
        codes[style] = sgr
        return sgr


def _piece(strip: Iterable[Segment], styles: _StyleCodes) -> tuple[str, list[str]] | None:
    """A strip as (a character a cell, each cell's SGR parameters), or None if it holds something
    other than styled text of whole cells."""
    texts: list[str] = []
    sgrs: list[str] = []
    sgr_of = styles.sgr
    for text, style, control in strip:
        if control or _WIDE_FILL in text:
            return None
        sgr = sgr_of(style)
        if sgr is None:
            return None
        if not (text.isascii() or cell_len(text) == len(text)):
            cells = _wide_cells(text)
            if cells is None:
                return None
            text = cells
        texts.append(text)
        sgrs += repeat(sgr, len(text))
    return "".join(texts), sgrs


def _wide_cells(text: str) -> str | None:
    """``text`` with the placeholder after each wide character; None if it holds a zero-width one."""
    cells = []
    for char in text:
        width = cell_len(char)
        if width == 0:
            return None
        cells.append(char + _WIDE_FILL if width == 2 else char)
    return "".join(cells)


class _Writer:
    """Terminal sequences with the shortest cursor moves and only the style changes."""

    def __init__(self, width: int) -> None:
        self.width = width
        self.parts: list[str] = []
        self.x: int | None = None
        self.y: int | None = None
        self.sgr = ""

    def move(self, x: int, y: int) -> None:
        if x == self.x and y == self.y:
            return
        best = f"\x1b[{y + 1};{x + 1}H"
        if self.x is not None and self.y is not None:
            vertical = "" if y == self.y else min(f"\x1b[{y + 1}d", _rows_moved(y - self.y), key=len)
            step = x - self.x
            if step == 0:
                horizontal = ""
            elif step == 1:
                horizontal = "\x1b[C"
            elif step > 0:
                horizontal = f"\x1b[{step}C"
            elif step >= -4:
                horizontal = "\b" * -step
            else:
                horizontal = f"\x1b[{x + 1}G"
            if len(vertical) + len(horizontal) < len(best):
                best = vertical + horizontal
        self.parts.append(best)
        self.x, self.y = x, y

    def write(self, text: str, sgrs: list[str]) -> None:
        """Write cells (a character each, and its SGR parameters) at the cursor."""
        parts = self.parts
        for char, sgr in zip(text, sgrs, strict=True):
            if char == _WIDE_FILL:
                continue
            if sgr != self.sgr:
                parts.append(_style_change(self.sgr, sgr))
                self.sgr = sgr
            parts.append(char)
        assert self.x is not None
        self.x += len(text)
        if self.x >= self.width:
            # At the right margin terminals differ on where the cursor is: move absolutely next time.
            self.x = self.y = None

    def write_raw(self, x: int, y: int, strip: Strip, console: Console) -> None:
        """Write a strip as Textual renders it; afterwards the cursor is not known."""
        self.move(x, y)
        if self.sgr:
            self.parts.append("\x1b[0m")
            self.sgr = ""
        self.parts.append(strip.render(console))
        self.x = self.y = None

    def finish(self) -> str:
        if self.sgr:
            self.parts.append("\x1b[0m")
            self.sgr = ""
        return "".join(self.parts)


def _rows_moved(rows: int) -> str:
    """Cursor down (CUD) or up (CUU) by ``rows``, column kept."""
    letter = "B" if rows > 0 else "A"
    return f"\x1b[{letter}" if abs(rows) == 1 else f"\x1b[{abs(rows)}{letter}"


def _split_sgr(sgr: str) -> tuple[str, str, str]:
    """SGR parameters as (attributes, foreground, background)."""
    attributes: list[str] = []
    foreground = background = ""
    codes = sgr.split(";") if sgr else []
    index = 0
    while index < len(codes):
        code = codes[index]
        if code in ("38", "48"):
            length = 3 if codes[index + 1 : index + 2] == ["5"] else 5
            color = ";".join(codes[index : index + length])
            index += length
            if code == "38":
                foreground = color
            else:
                background = color
            continue
        number = int(code) if code.isdigit() else -1
        if 30 <= number <= 39 or 90 <= number <= 97:
            foreground = code
        elif 40 <= number <= 49 or 100 <= number <= 107:
            background = code
        else:
            attributes.append(code)
        index += 1
    return ";".join(attributes), foreground, background


_SPLIT_CACHE: dict[str, tuple[str, str, str]] = {}


def _style_change(before: str, after: str) -> str:
    """The SGR sequence from style ``before`` to style ``after``: only the colours when the attributes stay."""
    if not after:
        return "\x1b[0m"
    old = _SPLIT_CACHE.get(before) or _SPLIT_CACHE.setdefault(before, _split_sgr(before))
    new = _SPLIT_CACHE.get(after) or _SPLIT_CACHE.setdefault(after, _split_sgr(after))
    if old[0] != new[0]:
        return f"\x1b[0;{after}m"
    codes = []
    if old[1] != new[1]:
        codes.append(new[1] or "39")
    if old[2] != new[2]:
        codes.append(new[2] or "49")
    return f"\x1b[{';'.join(codes)}m"


def _changed_runs(old_text: str, old_sgrs: list[str], text: str, sgrs: list[str]) -> Iterator[tuple[int, int]]:
    """(start, end) of the runs of cells that differ, close runs joined, wide characters whole."""
    start = end = -1
    # The indices of the cells that differ, found without a Python step per cell (most are equal).
    for index in compress(count(), map(or_, map(ne, old_text, text), map(ne, old_sgrs, sgrs))):
        if start < 0:
            start = index
        elif index > end and (index - end > _JUMP_BYTES or _bytes(text[end:index]) >= _JUMP_BYTES):
            yield _whole(text, start, end)
            start = index
        end = index + 1
    if start >= 0:
        yield _whole(text, start, end)


def _bytes(text: str) -> int:
    """What rewriting the cells of ``text`` takes. Only asked of short gaps: a gap of more than
    _JUMP_BYTES cells takes at least that (every cell is a byte or more, but the right half of a
    wide character, which follows the three or more bytes of its left half)."""
    return len(text.replace(_WIDE_FILL, "").encode())


def _whole(text: str, start: int, end: int) -> tuple[int, int]:
    if text[start] == _WIDE_FILL and start > 0:
        start -= 1
    if end < len(text) and text[end] == _WIDE_FILL:
        end += 1
    return start, end


class TerminalDiff:
    """What the terminal shows, and the smallest update that makes it show the next frame."""

    def __init__(self) -> None:
        self._texts: list[str] = []  # a row's characters, one a cell
        self._sgrs: list[list[str]] = []  # a row's cells' SGR parameters
        self._width = 0
        self._styles = _StyleCodes()

    def forget(self) -> None:
        """The terminal's content is unknown (resized, resumed): the next frame is written in full."""
        self._texts = []
        self._sgrs = []
        self._width = 0

    def _resize(self, width: int, height: int) -> None:
        if width != self._width or height != len(self._texts):
            self._width = width
            self._texts = [" " * width] * height
            self._sgrs = [[_UNKNOWN_SGR] * width for _ in range(height)]

    def update(self, pieces: Iterable[tuple[int, int, Strip]], console: Console, width: int, height: int) -> str:
        """The sequences that make the terminal show a frame's ``pieces`` (x, y, strip); '' when it already does."""
        self._resize(width, height)
        self._styles.use(_COLOR_SYSTEMS.get(console.color_system or "", ColorSystem.TRUECOLOR))
        writer = _Writer(width)
        texts, row_sgrs = self._texts, self._sgrs
        runs: list[tuple[str, int, int, str, list[str]]] = []
        for x, y, strip in pieces:
            if not 0 <= y < height or x >= width:
                continue
            piece = _piece(strip, self._styles)
            if piece is None or x + len(piece[0]) > width:
                writer.write_raw(x, y, strip, console)
                unknown = min(strip.cell_length, width - x)
                row_sgrs[y][x : x + unknown] = [_UNKNOWN_SGR] * unknown
                continue
            text, sgrs = piece
            end = x + len(text)
            row_text, row = texts[y], row_sgrs[y]
            old_text, old_sgrs = row_text[x:end], row[x:end]
            if old_text == text and old_sgrs == sgrs:
                continue
            for start, stop in _changed_runs(old_text, old_sgrs, text, sgrs):
                runs.append((sgrs[start], y, x + start, text[start:stop], sgrs[start:stop]))
            texts[y] = row_text[:x] + text + row_text[end:]
            row[x:end] = sgrs
        # No cell is written twice in one update, so the runs may go in any order: grouped by
        # style, a colour is sent once for all the sparklines that share it, not once per line.
        runs.sort(key=lambda run: run[:3])
        for _, y, x, text, sgrs in runs:
            writer.move(x, y)
            writer.write(text, sgrs)
        return writer.finish()


__all__ = ["TerminalDiff"]
