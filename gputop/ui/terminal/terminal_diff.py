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
Textual's frames apart into (x, y, strip, cells) pieces and hands the result back.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from itertools import compress, count
from operator import ne, or_

from rich.cells import cell_len
from rich.color import ColorSystem
from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip

# What the terminal shows is kept a row at a time, in two strings of a character a cell: what the
# cell holds, and its style as a code (one character for each SGR sequence, see _StyleCodes). So a
# row is compared, cut and copied by string operations, not a Python step per cell.
# The right half of a wide character is this placeholder in the row's string; a strip that holds
# it itself, or a zero-width character, is written as Textual renders it.
_WIDE_FILL = "\x00"
_UNKNOWN = "\x00"  # the style code of a cell whose content is not known: no style has it
# Unchanged cells between two changed runs are rewritten when that takes fewer bytes than a
# cursor jump over them (about 4).
_JUMP_BYTES = 4
_SAME_STYLE = re.compile(r"(.)\1*", re.DOTALL)  # cells of one style in a row of style codes
# A piece of a frame: at column x of row y, the first ``cells`` cells of a strip.
Piece = tuple[int, int, Strip, int]
# Cells as this module keeps them: (a character a cell, a style code a cell).
_Cells = tuple[str, str]
# The console's colour system by its public name; no name (no colour detected) writes true colour.
_COLOR_SYSTEMS = {
    "standard": ColorSystem.STANDARD,
    "256": ColorSystem.EIGHT_BIT,
    "truecolor": ColorSystem.TRUECOLOR,
    "windows": ColorSystem.WINDOWS,
}
# Styles whose codes are remembered; a frame uses a few dozen, so this is never reached unless
# styles are made afresh each frame, and then the memory is simply started again.
_STYLE_CACHE_SIZE = 4096
# SGR sequences given a code before all are forgotten (and the next frame is written in full):
# far more than a screen ever shows, far fewer than the code points.
_MOST_CODES = 0x10000


class _StyleCodes:
    """A one-character code for each SGR sequence, and each style's code (a look-up after the first)."""

    def __init__(self) -> None:
        self.color_system = ColorSystem.TRUECOLOR
        self.sgr: dict[str, str] = {}  # a code's SGR parameters ('' for none)
        self._code_of_sgr: dict[str, str] = {}
        # By the style object's id, kept with the style (so the id stays its own): a look-up that
        # runs no Python code, where a Style's own hash and equality are Python methods.
        self.by_id: dict[int, tuple[Style | None, str | None]] = {}

    def use(self, color_system: ColorSystem) -> None:
        if color_system != self.color_system:
            self.color_system = color_system
            self.by_id = {}

    @property
    def full(self) -> bool:
        return len(self.sgr) >= _MOST_CODES

    def code(self, style: Style | None) -> str | None:
        """A style's code, or None for one this module will not reproduce."""
        known = self.by_id.get(id(style))
        if known is not None and known[0] is style:
            return known[1]
        if len(self.by_id) >= _STYLE_CACHE_SIZE:
            self.by_id = {}
        # A hyperlink is not a cell attribute: such a strip is written as Textual renders it.
        code = None
        if style is None or not style.link:
            sgr = "" if style is None else Strip.render_ansi(style, self.color_system)
            code = self._code_of_sgr.get(sgr)
            if code is None:
                code = self._code_of_sgr[sgr] = chr(len(self.sgr) + 1)  # never _UNKNOWN
                self.sgr[code] = sgr
        self.by_id[id(style)] = (style, code)
        return code


# Text that is not ASCII, as cells (see _wide_cells): "" when it holds a zero-width character.
_CELLS: dict[str, str] = {}


def _piece(strip: Iterable[Segment], styles: _StyleCodes) -> _Cells | None:
    """A strip as (a character a cell, a style code a cell), or None if it holds something other
    than styled text of whole cells."""
    texts: list[str] = []
    codes: list[str] = []
    by_id = styles.by_id
    for text, style, control in strip:
        known = by_id.get(id(style))
        code = known[1] if known is not None and known[0] is style else styles.code(style)
        if code is None or control or _WIDE_FILL in text:
            return None
        if not text.isascii():
            cells = _CELLS.get(text)
            if cells is None:
                if len(_CELLS) >= _STYLE_CACHE_SIZE:
                    _CELLS.clear()
                cells = _CELLS[text] = text if cell_len(text) == len(text) else _wide_cells(text)
            if not cells:
                return None
            text = cells
        texts.append(text)
        codes.append(code * len(text))
    return "".join(texts), "".join(codes)


def _wide_cells(text: str) -> str:
    """``text`` with the placeholder after each wide character; "" if it holds a zero-width one."""
    cells = []
    for char in text:
        width = cell_len(char)
        if width == 0:
            return ""
        cells.append(char + _WIDE_FILL if width == 2 else char)
    return "".join(cells)


class _Writer:
    """Terminal sequences with the shortest cursor moves and only the style changes."""

    def __init__(self, width: int, sgr: dict[str, str]) -> None:
        self.width = width
        self.sgr_of_code = sgr
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

    def write(self, text: str, codes: str) -> None:
        """Write cells (a character each, and its style code) at the cursor."""
        parts = self.parts
        # A style at a time, each as one string: a run is mostly of one style.
        if codes.count(codes[0]) == len(codes):
            same: Iterable[tuple[str, int, int]] = ((codes[0], 0, len(codes)),)
        else:
            same = ((cells[1], cells.start(), cells.end()) for cells in _SAME_STYLE.finditer(codes))
        for code, start, end in same:
            sgr = self.sgr_of_code[code]
            if sgr != self.sgr:
                parts.append(_style_change(self.sgr, sgr))
                self.sgr = sgr
            parts.append(text[start:end].replace(_WIDE_FILL, ""))
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


def _changed_runs(old_text: str, old_codes: str, text: str, codes: str) -> Iterator[tuple[int, int]]:
    """(start, end) of the runs of cells that differ, close runs joined, wide characters whole."""
    # The indices of the cells that differ, found without a Python step per cell (most are equal),
    # comparing only the characters, or only the styles, when the other are all the same.
    if old_codes == codes:
        differs = map(ne, old_text, text)
    elif old_text == text:
        differs = map(ne, old_codes, codes)
    else:
        differs = map(or_, map(ne, old_text, text), map(ne, old_codes, codes))
    start = end = -1
    for index in compress(count(), differs):
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
        self._codes: list[str] = []  # a row's cells' style codes
        self._width = 0
        self._styles = _StyleCodes()

    def forget(self) -> None:
        """The terminal's content is unknown (resized, resumed): the next frame is written in full."""
        self._texts = []
        self._codes = []
        self._width = 0

    def _resize(self, width: int, height: int) -> None:
        if width != self._width or height != len(self._texts):
            self._width = width
            self._texts = [" " * width] * height
            self._codes = [_UNKNOWN * width] * height

    def update(self, pieces: Iterable[Piece], console: Console, width: int, height: int) -> str:
        """The sequences that make the terminal show a frame's ``pieces``; '' when it already does."""
        styles = self._styles
        if styles.full:  # the rows' codes are about to be given again: start afresh
            self.forget()
            styles = self._styles = _StyleCodes()
        self._resize(width, height)
        styles.use(_COLOR_SYSTEMS.get(console.color_system or "", ColorSystem.TRUECOLOR))
        writer = _Writer(width, styles.sgr)
        texts, row_codes, sgr_of_code = self._texts, self._codes, styles.sgr
        runs: list[tuple[str, int, int, str, str]] = []
        for x, y, strip, cells in pieces:
            if not 0 <= y < height or x >= width:
                continue
            piece = _piece(strip, styles)
            if piece is None or len(piece[0]) > cells:
                piece = _first_cells(strip, piece, cells, styles)
            if piece is None or x + len(piece[0]) > width:
                writer.write_raw(x, y, strip.crop(0, cells), console)
                end = x + min(strip.cell_length, cells, width - x)
                row_codes[y] = row_codes[y][:x] + _UNKNOWN * (end - x) + row_codes[y][end:]
                continue
            text, codes = piece
            end = x + len(text)
            row_text, row = texts[y], row_codes[y]
            old_text, old_codes = row_text[x:end], row[x:end]
            if old_text == text and old_codes == codes:
                continue
            for start, stop in _changed_runs(old_text, old_codes, text, codes):
                runs.append((sgr_of_code[codes[start]], y, x + start, text[start:stop], codes[start:stop]))
            texts[y] = row_text[:x] + text + row_text[end:]
            row_codes[y] = row[:x] + codes + row[end:]
        # No cell is written twice in one update, so the runs may go in any order: grouped by
        # style, a colour is sent once for all the sparklines that share it, not once per line.
        # (y, x) is a run's own, so the tuples sort by (style, y, x) without a key function.
        runs.sort()
        for _, y, x, text, codes in runs:
            writer.move(x, y)
            writer.write(text, codes)
        return writer.finish()


def _first_cells(strip: Strip, piece: _Cells | None, cells: int, styles: _StyleCodes) -> _Cells | None:
    """The piece of a strip's first ``cells`` cells, as Textual writes them (Strip.crop): the whole
    strip's piece (None if it has none) cut, or where that cut halves a wide character or the
    strip's piece is None (what is beyond the cut may be what has none), the cropped strip's."""
    if piece is not None and piece[0][cells] != _WIDE_FILL:
        return piece[0][:cells], piece[1][:cells]
    return None if cells >= strip.cell_length else _piece(strip.crop(0, cells), styles)


__all__ = ["Piece", "TerminalDiff"]
