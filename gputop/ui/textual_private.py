"""Every use of a private Textual or Rich name in gputop, in this one module.

The changed-cell writer (``terminal_diff``) needs most of them: it sits between Textual's compositor
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
from textual.cache import FIFOCache
from textual.geometry import Size
from textual.screen import Screen
from textual.strip import Strip

from gputop.ui.terminal_diff import TerminalDiff

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


def answer_key_characters(key_character: Callable[[str], str | None]) -> bool:
    """Private 3: the screen's binding chain asks ``key_character`` what character each bound key is.

    ``textual.screen`` calls ``key_to_character`` (imported into it by name) for every key bound
    above the focused widget, and that looks each key's name up in the Unicode database: 0.8 MiB
    of memory for the pages it touches. ``key_character`` must answer as ``key_to_character``
    does. Public replacement: none needed if Textual kept a table of its key names' characters.
    False (Textual's own look-up stays) when textual.screen no longer has that name.
    """
    import textual.screen

    if not callable(getattr(textual.screen, "key_to_character", None)):
        return False
    setattr(textual.screen, "key_to_character", key_character)  # noqa: B010 - typed as lru_cache there
    return True


# Private 4: Strip's slots. Strip.__init__ gives every strip seven empty FIFOCaches (its crops,
# divisions, styles, filters, ...), 128 bytes each. Most strips are never cropped or styled: at
# 120x40 about 1,200 strips are alive, and 7,500 of their 8,300 caches are empty (0.9 MiB). Why:
# the strip's caches are its own business. Public replacement: Textual making them on first use.
# The slots that are not caches, and what a new strip holds in them (_segments: its segments).
_STRIP_FIELDS = dict.fromkeys(("_segments", "_cell_length", "_render_cache", "_link_ids", "_cell_count"))


class _AcyclicCache(FIFOCache[object, object]):
    """A strip's cache that will not hold the strip itself.

    ``Strip.divide`` caches ``[self]`` when there is nothing to cut, and ``Strip.crop_extend`` may
    cache ``self``: each such strip is then a reference cycle that only the garbage collector frees
    (at 120x40, 400 strips and 2,000 segments each 4 s, the heap's high-water mark creeping up).
    Such a result is returned as before, not kept.
    """

    __slots__ = ("slot",)

    def __init__(self, maxsize: int, slot: object) -> None:
        super().__init__(maxsize)
        self.slot = slot

    def set(self, key: object, value: object) -> None:
        held = value[0] if type(value) is list and len(value) == 1 else value
        if type(held) is Strip:
            try:
                if self.slot.__get__(held, Strip) is self:  # type: ignore[attr-defined]
                    return
            except AttributeError:
                pass
        super().set(key, value)

    __setitem__ = set


class _CacheOnFirstUse:
    """A Strip slot whose FIFOCache is made the first time the strip asks for it."""

    __slots__ = ("slot", "maxsize")

    def __init__(self, slot: object, maxsize: int) -> None:
        self.slot, self.maxsize = slot, maxsize

    def __get__(self, strip: Strip | None, owner: type | None = None) -> object:
        if strip is None:
            return self
        try:
            return self.slot.__get__(strip, owner)  # type: ignore[attr-defined]
        except AttributeError:
            cache = _AcyclicCache(self.maxsize, self.slot)
            self.slot.__set__(strip, cache)  # type: ignore[attr-defined]
            return cache

    def __set__(self, strip: Strip, value: object) -> None:
        self.slot.__set__(strip, value)  # type: ignore[attr-defined]


def _strip_init(self: Strip, segments: Iterable[Segment], cell_length: int | None = None) -> None:
    """Strip.__init__ less the caches (see Private 4)."""
    self._segments = list(segments)
    self._cell_length = cell_length
    self._render_cache = None
    self._link_ids = None
    self._cell_count = None


def strip_caches_on_first_use(strip_class: type = Strip) -> bool:
    """Private 4: make each strip's caches only when it first uses one. True once it is so.

    The new ``__init__`` is used only when a strip made Textual's way holds exactly the expected
    slots: the non-cache ones empty as above, every other one an empty FIFOCache (whose size is
    kept). Otherwise (another Textual), False and Textual's own strips stay. ``strip_class`` is
    for the tests.
    """
    if vars(strip_class).get("__init__") is _strip_init:
        return True
    slots = tuple(getattr(strip_class, "__slots__", ()))
    try:
        probe = strip_class([])
    except Exception:  # noqa: BLE001 - a Strip that cannot be made so is not the one expected
        return False
    caches: dict[str, int] = {}
    for name in slots:
        value = getattr(probe, name, probe)
        if name in _STRIP_FIELDS:
            if value != ([] if name == "_segments" else _STRIP_FIELDS[name]):
                return False
        elif type(value) is FIFOCache and not value and isinstance(getattr(value, "_maxsize", None), int):
            caches[name] = value._maxsize
        else:
            return False
    if set(_STRIP_FIELDS) - set(slots) or not caches:
        return False
    for name, maxsize in caches.items():
        setattr(strip_class, name, _CacheOnFirstUse(strip_class.__dict__[name], maxsize))
    setattr(strip_class, "__init__", _strip_init)  # noqa: B010 - a method of the class, replaced
    return True


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


class ChangedCellsApp(App[ReturnType]):
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
