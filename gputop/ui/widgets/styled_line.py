"""A line of styled text for the line-API widgets, built piece by piece and turned into a Strip.

A GPU card's line is three dozen short pieces (a label, a bar's two halves, a figure, a
sparkline), all of them new each tick. As Rich ``Text`` each piece is stripped of control codes
when appended, its spans are sorted and stacked again when rendered, and each style name is parsed
again: 0.2 ms a line. Here a piece is a string and a style name, and the Strip is made from a
handful of segments, neighbours of one style joined, with each style worked out once
(``StripStyles``). What is drawn is what the same pieces would draw as ``Text``: a piece in a
nested line takes that line's style under its own, in Rich's order; padding takes the line's own style.
"""

from __future__ import annotations

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip

# A piece of a line: its text and its style, as Rich style names ("" for none).
Piece = tuple[str, str]


# Characters one cell wide in every Unicode version that gputop's own lines draw: printable Latin-1
# (the degree sign), box drawing and block elements (bars, sparklines).
_ONE_CELL = frozenset(
    chr(code)
    for start, end in ((0x20, 0x7E), (0xA0, 0xAC), (0xAE, 0xFF), (0x2500, 0x259F))
    for code in range(start, end + 1)
)


def text_cells(text: str) -> int:
    """The cells ``text`` takes, as ``rich.cells.cell_len`` counts them. Figures change every tick,
    and ``cell_len`` keeps each string it measures (up to 4,096 of them): these are counted here."""
    if (text.isascii() and text.isprintable()) or _ONE_CELL.issuperset(text):
        return len(text)
    return cell_len(text)


def under(outer: str, inner: str) -> str:
    """Style names for ``inner`` inside ``outer``: the inner ones win, as a Rich span over a span."""
    if not outer:
        return inner
    return f"{outer} {inner}" if inner else outer


class StyledLine:
    """Text made of (text, style) pieces, with a style of its own under all of them (padding included)."""

    __slots__ = ("pieces", "style", "cell_length")

    def __init__(self, *pieces: Piece | str, style: str = "") -> None:
        self.pieces: list[Piece] = []
        self.style = style
        self.cell_length = 0
        for piece in pieces:
            if isinstance(piece, str):
                self.append(piece)
            else:
                self.append(*piece)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, StyledLine):
            return NotImplemented
        return self.style == other.style and self.pieces == other.pieces

    __hash__ = None  # type: ignore[assignment]  # mutable, like Rich's Text

    def __repr__(self) -> str:
        return f"StyledLine({self.plain!r}, style={self.style!r})"

    @property
    def plain(self) -> str:
        """The text without its styles."""
        return "".join(text for text, _ in self.pieces)

    def append(self, text: str, style: str = "") -> StyledLine:
        """Add ``text`` in ``style`` at the end; returns the line."""
        if text:
            self.pieces.append((text, style))
            self.cell_length += text_cells(text)
        return self

    def append_line(self, line: StyledLine) -> StyledLine:
        """Add another line's pieces at the end, each under that line's own style; returns the line."""
        outer = line.style
        self.pieces.extend(line.pieces if not outer else [(text, under(outer, style)) for text, style in line.pieces])
        self.cell_length += line.cell_length
        return self

    def stylize(self, style: str) -> None:
        """Put ``style`` over every piece there is now (not under padding added later), as Rich's stylize."""
        self.pieces = [(text, under(own, style)) for text, own in self.pieces]

    def stylized(self, style: str) -> StyledLine:
        """A copy with ``style`` over every piece (``stylize``), this line kept as it is."""
        copy = StyledLine(style=self.style)
        copy.pieces, copy.cell_length = list(self.pieces), self.cell_length
        copy.stylize(style)
        return copy

    def fit(self, width: int, pad: bool = True) -> StyledLine:
        """A copy cut to ``width`` cells (its last one an ellipsis) or (``pad``) padded to it, as
        ``Text.truncate`` does."""
        width = max(0, width)
        fitted = StyledLine(style=self.style)
        if self.cell_length <= width:
            fitted.pieces = list(self.pieces)
            fitted.cell_length = self.cell_length
            return fitted.append(" " * (width - self.cell_length)) if pad else fitted
        room = width - 1  # the ellipsis takes the style of the first character cut off
        for text, style in self.pieces:
            length = text_cells(text)
            if length <= room:
                fitted.append(text, style)
                room -= length
                continue
            fitted.append(set_cell_size(text, room) + "…" if room >= 0 else "", style)
            break
        return fitted


class StripStyles:
    """The Style of each style name over a widget's own style, worked out once each."""

    def __init__(self) -> None:
        self._base: Style | None = None
        self._styles: dict[str, Style] = {}

    def strip(self, line: StyledLine, base: Style, width: int) -> Strip:
        """``line`` on ``base`` as a Strip ``width`` cells wide: one segment per run of a style."""
        strip = Strip(self.segments(line.pieces, line.style, base), line.cell_length)
        # A card's lines are fitted to its width: cropping or padding one would only copy it.
        return strip if line.cell_length == width else strip.crop_extend(0, width, base)

    def table(self, base: Style) -> dict[str, Style]:
        """The styles worked out on ``base``, by name: a new table for another base, and the same one,
        the same objects, while the base is the same."""
        if base is not self._base and base != self._base:  # a Style compares in Python: the same object first
            self._base, self._styles = base, {}
        return self._styles

    def segments(self, pieces: list[Piece], outer: str, base: Style) -> list[Segment]:
        """``pieces`` under the style ``outer``, on ``base``: one segment per run of a style."""
        styles = self.table(base)
        segments: list[Segment] = []
        texts: list[str] = []
        current: Style | None = None
        for text, own in pieces:
            name = under(outer, own) if outer else own
            style = styles.get(name)
            if style is None:
                style = styles[name] = base + Style.parse(name) if name else base
            if style is not current:  # one object per name: a name that repeats joins its neighbour
                if texts:
                    segments.append(Segment("".join(texts), current))
                texts, current = [], style
            texts.append(text)
        if texts:
            segments.append(Segment("".join(texts), current))
        return segments
