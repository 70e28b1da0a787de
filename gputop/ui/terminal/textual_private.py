"""Every use of a private Textual or Rich name in gputop, in this one module.

The changed-cell writer (``terminal_diff``) needs them: it sits between Textual's compositor
and the terminal, and Textual has no public hook there. Each use below says why it is needed and
what public API would replace it. ``check_internals`` looks at each one when the app starts; if
one is missing or has changed shape, or if the writer ever raises, the app falls back to Textual's
own output for the rest of the run (told under ``--debug`` only) and never crashes. The third
(a screen's compositor) narrows each partial frame to the widgets on its changed lines; it is
checked by ``check_narrowed`` and, should it ever raise, hands that screen back to Textual's own.
``tests/test_textual_private.py`` keeps every other module off Textual's and Rich's private names.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Iterator

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.segment import Segment
from textual.app import App, ReturnType
from textual.geometry import Region, Size
from textual.screen import Screen
from textual.strip import Strip

from gputop.ui.terminal.plain_terminal import PlainTerminalApp
from gputop.ui.terminal.terminal_diff import TerminalDiff

# Writes a frame's changed cells for a screen of a size; None: let Textual write the frame itself.
FrameWriter = Callable[[object, Console, Size], "str | None"]

# Private 1: textual._compositor. App._display receives a frame as one of these: LayoutUpdate
# (a full frame: .strips from .region) or ChopsUpdate (a partial one: .chops per line, their
# .chop_ends, and the .spans to write). Why: the writer needs the frame's cells, not only its
# rendered bytes. Public replacement: a public frame type (or a cell-level output hook) in Textual.
try:
    from textual._compositor import ChopsUpdate, Compositor, CompositorUpdate, LayoutUpdate
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
# Private 3: a screen's compositor (Screen._compositor): its _dirty_regions, cuts, _visible_widgets,
# _regions_to_spans(regions) and _render_chops(crop, is_rendered_line), as render_partial_update uses
# them. Why: Textual renders a partial frame from one crop, the box around every changed region, and
# asks every widget whose clip touches that box for all its lines: a changed host line at the top and
# a changed process row at the bottom make the eight cards, the grid, the title and the footer render
# again, for nothing. ``narrowed_partial_update`` asks only the widgets that show something on the
# changed lines' runs. Public replacement: Textual cropping a partial update to each run of changed
# lines (upstream).
_EXPECTED_NARROWED = {
    "Compositor.render_partial_update": ("self",),
    "Compositor._render_chops": ("self", "crop", "is_rendered_line"),
    "Compositor._regions_to_spans": ("regions",),
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


def check_narrowed() -> str | None:
    """Why partial frames cannot be narrowed to the widgets on changed lines in this Textual; None
    when they can."""
    if not HAVE_COMPOSITOR:
        return "textual._compositor cannot be imported"
    for qualified, expected in _EXPECTED_NARROWED.items():
        found = _parameters(Compositor, qualified.split(".")[1])
        if found != expected:
            shape = "is missing" if found is None else f"takes ({', '.join(found)})"
            return f"{qualified} {shape}, expected ({', '.join(expected)})"
    compositor = Compositor()
    for attribute in ("_dirty_regions", "_visible_widgets", "cuts", "visible_widgets", "size"):
        if not hasattr(compositor, attribute):
            return f"Compositor.{attribute} is missing"
    return None


def _bands(regions: Iterable[Region]) -> list[Region]:
    """The changed regions as runs of lines, top down: the box around each run of touching regions."""
    bands: list[Region] = []
    for region in sorted(regions, key=lambda region: region.y):
        if bands and region.y <= bands[-1].bottom:
            bands[-1] = bands[-1].union(region)
        else:
            bands.append(region)
    return bands


def narrowed_partial_update(compositor: Compositor) -> ChopsUpdate | None:
    """What ``Compositor.render_partial_update`` returns, the same frame, rendered by asking only the
    widgets whose visible part meets a run of changed lines.

    Any cell written (on a changed line, within a changed span) shows a widget whose visible part
    contains that cell, so it meets that cell's run: the widgets left out draw nothing the frame
    writes. Textual renders the frame itself, from its own list of visible widgets narrowed for the
    call, in its own order.
    """
    screen_region = compositor.size.region
    update_regions = compositor._dirty_regions.copy()
    compositor._dirty_regions.clear()
    if not update_regions:
        return None
    crop = Region.from_union(list(update_regions)).intersection(screen_region)
    spans = list(compositor._regions_to_spans(update_regions))
    rendered = {y for y, _, _ in spans}
    cuts = compositor.cuts  # worked out (and kept) from every visible widget, before the narrowing
    visible = compositor.visible_widgets
    bands = _bands(update_regions)
    asked = {
        widget: (region, clip)
        for widget, (region, clip) in visible.items()
        if any(band.overlaps(region.intersection(clip)) for band in bands)
    }
    compositor._visible_widgets = asked
    try:
        chops = compositor._render_chops(crop, rendered.__contains__)
    finally:
        if compositor._visible_widgets is asked:  # not reset meanwhile by a new layout
            compositor._visible_widgets = visible
    return ChopsUpdate(chops, spans, [cut_set[1:] for cut_set in cuts])


def narrow_partial_frames(compositor: object) -> bool:
    """Have ``compositor`` (a screen's) render its partial frames with ``narrowed_partial_update``;
    False where it is not a compositor this module knows."""
    if not HAVE_COMPOSITOR or not isinstance(compositor, Compositor):
        return False
    if "render_partial_update" not in vars(compositor):
        compositor.render_partial_update = lambda: _render_or_fall_back(compositor)  # type: ignore[method-assign]
    return True


def _render_or_fall_back(compositor: Compositor) -> ChopsUpdate | None:
    regions = compositor._dirty_regions.copy()
    try:
        return narrowed_partial_update(compositor)
    except Exception:  # noqa: BLE001 - anything: Textual's own from now on, this frame included
        del compositor.render_partial_update  # the instance's: the class's own is found again
        compositor._dirty_regions.update(regions)
        return compositor.render_partial_update()


def frame_pieces(frame: object) -> Iterator[tuple[int, int, Strip]] | None:
    """(x, y, strip) for each piece of a frame Textual would write, in its order; None for another kind."""
    if isinstance(frame, LayoutUpdate):
        return _layout_pieces(frame)
    if isinstance(frame, ChopsUpdate):
        return _chop_pieces(frame)
    return None


def _layout_pieces(update: LayoutUpdate) -> Iterator[tuple[int, int, Strip]]:
    """(x, y, strip) for each line of a full frame."""
    for y, line in enumerate(update.strips, update.region.y):
        yield update.region.x, y, Strip.join(line)


def _chop_pieces(update: ChopsUpdate) -> Iterator[tuple[int, int, Strip]]:
    """(x, y, strip) for each piece ChopsUpdate.render_segments would write, in its order."""
    chops, chop_ends = update.chops, update.chop_ends
    for y, x1, x2 in update.spans:
        for end, (x, strip) in zip(chop_ends[y], chops[y].items(), strict=False):
            if strip is None or x > x2 or end <= x1:
                continue
            if x2 > x >= x1 and end <= x2:
                yield x, y, strip
            else:
                yield x, y, strip.crop(0, min(end, x2) - x)


def changed_cells(diff: TerminalDiff, frame: object, console: Console, size: Size) -> str | None:
    """The bytes that bring the terminal to ``frame``; None for a frame the writer does not know
    (then what the terminal shows is forgotten, and Textual writes that frame itself)."""
    pieces: Iterable[tuple[int, int, Strip]] | None = frame_pieces(frame)
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
        # Why partial frames ask every widget in the box around the changes, as Textual's own do
        # (None: only those on the changed lines).
        self.narrowed_off: str | None = check_narrowed()

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
        if self.narrowed_off is None:  # from this screen's next frame on (Private 3)
            narrow_partial_frames(getattr(screen, "_compositor", None))
        if self.changed_cells_off is None and isinstance(renderable, CompositorUpdate) and not self.is_inline:
            renderable = ChangedCellsUpdate(renderable, screen.outer_size, self._write_changed_cells)
        super()._display(screen, renderable)
