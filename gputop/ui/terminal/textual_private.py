"""Every use of a private Textual or Rich name in gputop, in this one module.

The changed-cell writer (``terminal_diff``) needs them: it sits between Textual's compositor
and the terminal, and Textual has no public hook there. Each use below says why it is needed and
what public API would replace it. ``check_internals`` looks at each one when the app starts; if
one is missing or has changed shape, or if the writer ever raises, the app falls back to Textual's
own output for the rest of the run (told under ``--debug`` only) and never crashes.
``tests/test_textual_private.py`` keeps every other module off Textual's and Rich's private names.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Iterator

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.segment import Segment
from textual.app import App, ReturnType
from textual.geometry import Size
from textual.screen import Screen
from textual.strip import Strip

from gputop.ui.terminal.plain_terminal import PlainTerminalApp
from gputop.ui.terminal.terminal_diff import Piece, TerminalDiff

# Writes a frame's changed cells for a screen of a size; None: let Textual write the frame itself.
FrameWriter = Callable[[object, Console, Size], "str | None"]

# Private 1: textual._compositor. App._display receives a frame as one of these: LayoutUpdate
# (a full frame: .strips from .region) or ChopsUpdate (a partial one: .chops per line, their
# .chop_ends, and the .spans to write). Why: the writer needs the frame's cells, not only its
# rendered bytes. Public replacement: a public frame type (or a cell-level output hook) in Textual.
try:
    from textual._compositor import ChopsUpdate, CompositorUpdate, LayoutUpdate
except ImportError:  # check_internals() reports it, and the writer stays off
    HAVE_COMPOSITOR = False
else:
    HAVE_COMPOSITOR = True

    class ChangedCellsUpdate(CompositorUpdate):
        """A frame whose bytes are worked out when Textual writes it, by ``write`` (None: as Textual would)."""

        def __init__(self, frame: CompositorUpdate, size: Size, write: FrameWriter) -> None:
            self.frame = frame
            self.size = size
            self.write = write

        def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
            yield Segment(self.render_segments(console))

        def render_segments(self, console: Console) -> str:
            sequences = self.write(self.frame, console, self.size)
            return self.frame.render_segments(console) if sequences is None else sequences


# The parameters each private name is expected to take (checked by name, so a reordering is caught).
_EXPECTED_PARAMETERS = {
    "LayoutUpdate.__init__": ("self", "strips", "region"),
    "ChopsUpdate.__init__": ("self", "chops", "spans", "chop_ends"),
    "CompositorUpdate.render_segments": ("self", "console"),
    # Private 2: App._display(screen, renderable), where Textual writes each frame. Why: the one
    # place the frame can be swapped for its changed cells. Public replacement: an output hook.
    "App._display": ("self", "screen", "renderable"),
}


def _parameters(owner: object, name: str) -> tuple[str, ...] | None:
    function = getattr(owner, name, None)
    if not callable(function):
        return None
    try:
        return tuple(inspect.signature(function).parameters)
    except (TypeError, ValueError):
        return None


def check_internals() -> str | None:
    """Why the private names the writer uses cannot be trusted in this Textual; None when they can."""
    if not HAVE_COMPOSITOR:
        return "textual._compositor cannot be imported"
    owners: dict[str, object] = {
        "LayoutUpdate": LayoutUpdate,
        "ChopsUpdate": ChopsUpdate,
        "CompositorUpdate": CompositorUpdate,
        "App": App,
    }
    for qualified, expected in _EXPECTED_PARAMETERS.items():
        owner, name = qualified.split(".")
        found = _parameters(owners[owner], name)
        if found != expected:
            shape = "is missing" if found is None else f"takes ({', '.join(found)})"
            return f"{qualified} {shape}, expected ({', '.join(expected)})"
    return None


def frame_pieces(frame: object) -> Iterator[Piece] | None:
    """(x, y, strip, cells) for each piece of a frame Textual would write, in its order; None for
    another kind. Textual writes the strip's first ``cells`` cells."""
    if isinstance(frame, LayoutUpdate):
        return _layout_pieces(frame)
    if isinstance(frame, ChopsUpdate):
        return _chop_pieces(frame)
    return None


def _layout_pieces(update: LayoutUpdate) -> Iterator[Piece]:
    """(x, y, strip, cells) for each line of a full frame."""
    for y, line in enumerate(update.strips, update.region.y):
        strip = Strip.join(line)
        yield update.region.x, y, strip, strip.cell_length


def _chop_pieces(update: ChopsUpdate) -> Iterator[Piece]:
    """(x, y, strip, cells) for each piece ChopsUpdate.render_segments would write, in its order.

    It writes a chop from its start x up to its end or the span's x2, whichever comes first: the
    strip cropped to that, or whole (a chop is exactly its cells, Textual cuts the lines there).
    The strip is handed over uncropped with the count of its cells to write: a crop is a new Strip,
    dear to make, and the writer cuts its own strings for less.
    """
    chops, chop_ends = update.chops, update.chop_ends
    for y, x1, x2 in update.spans:
        for end, (x, strip) in zip(chop_ends[y], chops[y].items(), strict=False):
            if strip is None or x >= x2 or end <= x1:
                continue
            yield x, y, strip, min(end, x2) - x


def changed_cells(diff: TerminalDiff, frame: object, console: Console, size: Size) -> str | None:
    """The bytes that bring the terminal to ``frame``; None for a frame the writer does not know
    (then what the terminal shows is forgotten, and Textual writes that frame itself)."""
    pieces: Iterable[Piece] | None = frame_pieces(frame)
    if pieces is None:
        diff.forget()
        return None
    return diff.update(pieces, console, size.width, size.height)


class ChangedCellsApp(PlainTerminalApp[ReturnType]):
    """An App that sends the terminal only the cells that change (see ``terminal_diff``).

    ``full_redraw`` leaves Textual's own output on. ``changed_cells_off`` says why the writer is off
    (None while it is on); the subclass tells the user under ``--debug`` (``on_changed_cells_off``).
    """

    def __init__(self, *, full_redraw: bool = False) -> None:
        super().__init__()
        self.terminal_diff = TerminalDiff()
        self.changed_cells_off: str | None = "--full-redraw" if full_redraw else check_internals()

    def forget_screen(self) -> None:
        """What the terminal shows is unknown (resized, resumed): the next frame is written in full."""
        self.terminal_diff.forget()

    def on_changed_cells_off(self, reason: str) -> None:
        """Called once when the writer turns itself off during the run."""

    def _write_changed_cells(self, frame: object, console: Console, size: Size) -> str | None:
        if self.changed_cells_off is not None:
            return None
        try:
            return changed_cells(self.terminal_diff, frame, console, size)
        except Exception as error:  # noqa: BLE001 - any failure here means: Textual writes from now on
            reason = f"the changed-cell writer failed ({type(error).__name__}: {error})"
            self.changed_cells_off = reason
            self.terminal_diff.forget()
            self.call_later(self.on_changed_cells_off, reason)
            return None

    def _display(self, screen: Screen[object], renderable: RenderableType | None) -> None:
        """Private 2 (see above): hand Textual a frame that writes only its changed cells.

        Textual decides whether and when the frame is written (batches, headless, closing), so the
        writer's copy of the screen follows only what really reached the terminal.
        """
        if self.changed_cells_off is None and isinstance(renderable, CompositorUpdate) and not self.is_inline:
            renderable = ChangedCellsUpdate(renderable, screen.outer_size, self._write_changed_cells)
        super()._display(screen, renderable)
