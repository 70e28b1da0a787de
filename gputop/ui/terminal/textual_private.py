"""Every use of a private Textual or Rich name in gputop, in this one module.

The changed-cell writer (``terminal_diff``) needs them: it sits between Textual's compositor
and the terminal, and Textual has no public hook there. Each use below says why it is needed and
what public API would replace it. ``check_internals`` looks at each one when the app starts; if
one is missing or has changed shape, or if the writer ever raises, the app falls back to Textual's
own output for the rest of the run (told under ``--debug`` only) and never crashes.

The quiet keyboard reader (``quiet_input``) needs one more: Textual's terminal driver reads the
keyboard in a thread that wakes ten times a second whether a key came or not; gputop's sleeps until
one does. Without the name, Textual's own reader runs.
The app's frame is written to the terminal in one write (``HeldWrites``, through the public ``Driver.write``):
Textual writes the synchronized-update marks around it apart, each a wake-up of its output thread.
``tests/test_textual_private.py`` keeps every other module off Textual's and Rich's private names.
"""

from __future__ import annotations

import contextlib
import inspect
import os
import selectors
import time
from codecs import getincrementaldecoder
from collections.abc import Callable, Iterable, Iterator

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.segment import Segment
from textual import constants
from textual.app import App, ReturnType
from textual.driver import Driver
from textual.drivers.linux_driver import LinuxDriver
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

# Private 3: textual._xterm_parser.XTermParser, which Textual's LinuxDriver.run_input_thread feeds with
# what the terminal sends, and the driver's ``_debug`` it is made with. Why: a keyboard reader that
# sleeps until a key comes still has to make keys of the bytes exactly as Textual's does. Public
# replacement: a reader in Textual that blocks until input, or a public parser.
try:
    from textual._xterm_parser import XTermParser
except ImportError:  # quiet_input() leaves Textual's own reader on
    HAVE_PARSER = False
else:
    HAVE_PARSER = True

_READ_BYTES = 4096  # what Textual's reader takes from the terminal at a time
_POLL_S = 0.1  # how often Textual's reader wakes; gputop's, only while a key may still be coming


def _parser_shape() -> str | None:
    """Why the parser cannot be used as Textual's reader uses it; None when it can."""
    if not HAVE_PARSER:
        return "textual._xterm_parser cannot be imported"
    for name in ("feed", "tick"):
        if not callable(getattr(XTermParser, name, None)):
            return f"XTermParser.{name} is missing"
    parameters = _parameters(XTermParser, "__init__")
    if parameters is None or parameters[:2] != ("self", "debug"):
        return "XTermParser.__init__ does not take debug"
    return None


def _read_keys(driver: LinuxDriver, waker: int) -> None:
    """Textual's reader (LinuxDriver.run_input_thread) with one change: it waits on the keyboard for as
    long as no key comes, where Textual's wakes every tenth of a second to see whether to stop.

    It polls as Textual's does only while the parser may still be waiting for the rest of a key (a
    lone Escape is a key once ESCAPE_DELAY has passed with nothing after it), and once ``waker`` says
    the driver is stopping, until it has.
    """
    fileno = driver.fileno
    selector = selectors.SelectSelector()  # as Textual's: select() works on every terminal device
    selector.register(fileno, selectors.EVENT_READ)
    selector.register(waker, selectors.EVENT_READ)
    parser = XTermParser(getattr(driver, "_debug", False))
    decode = getincrementaldecoder("utf-8")().decode
    process = driver.process_message
    stopping = False
    settled_at = 0.0  # when the parser can hold nothing more that a tick would release
    try:
        while not driver.exit_event.is_set():
            waiting = stopping or time.monotonic() < settled_at
            for key, _mask in selector.select(_POLL_S if waiting else None):
                if key.fd == waker:
                    _drain(waker)
                    stopping = True
                    continue
                text = decode(os.read(fileno, _READ_BYTES))
                if not text:  # the end of a piped stdin: nothing more will come from it
                    selector.unregister(fileno)
                    break
                for event in parser.feed(text):
                    process(event)
                settled_at = time.monotonic() + constants.ESCAPE_DELAY + _POLL_S
            for event in parser.tick():
                process(event)
    finally:
        selector.close()
        with contextlib.suppress(Exception):  # the parser's end, as Textual's reader ends it
            for _event in parser.feed(""):
                pass


def _wake_pipe() -> tuple[int, int]:
    wake, waker = os.pipe()
    os.set_blocking(wake, False)
    os.set_blocking(waker, False)
    return wake, waker


def _drain(fd: int) -> None:
    with contextlib.suppress(OSError):
        while os.read(fd, 64):
            pass


def quiet_input(driver_class: type[Driver]) -> type[Driver]:
    """``driver_class`` with a keyboard reader that sleeps until a key comes (ten wake-ups a second
    fewer); another driver (a browser tab's, the tests' headless one), or any driver when the parser
    is not as expected, as it is."""
    if not issubclass(driver_class, LinuxDriver) or _parser_shape() is not None:
        return driver_class

    class QuietInputDriver(driver_class):  # type: ignore[valid-type,misc]
        """Textual's terminal driver, whose keyboard reader sleeps until a key or the stop comes."""

        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, **kwargs)
            # The pipe that wakes the reader to stop, closed with the driver: Ctrl+Z closes the driver
            # too (Textual's suspend_application_mode), and fg starts application mode again with a new one.
            self.reader_pipe: tuple[int, int] | None = _wake_pipe()

        def start_application_mode(self) -> None:
            if self.reader_pipe is None:
                self.reader_pipe = _wake_pipe()
            super().start_application_mode()

        def run_input_thread(self) -> None:
            pipe = self.reader_pipe
            if pipe is None:  # closed, and not started again by start_application_mode: Textual's own
                super().run_input_thread()
                return
            _drain(pipe[0])  # a wake-up left from the last stop is not this run's
            _read_keys(self, pipe[0])

        def disable_input(self) -> None:
            # The reader wakes and polls until Textual's disable_input sets the stop and joins it.
            if self.reader_pipe is not None:
                with contextlib.suppress(OSError):
                    os.write(self.reader_pipe[1], b"\0")
            super().disable_input()

        def close(self) -> None:
            super().close()
            pipe, self.reader_pipe = self.reader_pipe, None
            for fd in pipe or ():
                with contextlib.suppress(OSError):
                    os.close(fd)

    return QuietInputDriver


class HeldWrites:
    """Writes to a driver held and sent as one (``one_write``): Textual writes a frame in three (the start
    of a synchronized update, the frame, its end), each of which its output thread is woken for."""

    def __init__(self, write: Callable[[str], None]) -> None:
        self._write = write
        self._held: list[str] | None = None

    def write(self, data: str) -> None:
        """``data`` written now, or with the rest while writes are held."""
        held = self._held
        if held is None:
            self._write(data)
        else:
            held.append(data)

    @contextlib.contextmanager
    def one_write(self) -> Iterator[None]:
        """What is written meanwhile, sent in one write at the end, in order."""
        if self._held is not None:  # held already: the outer one writes it all
            yield
            return
        held: list[str] = []
        self._held = held
        try:
            yield
        finally:
            self._held = None
            if held:
                self._write("".join(held))


def held_writes(driver_class: type[Driver], made: Callable[[HeldWrites], None]) -> type[Driver]:
    """``driver_class`` whose writes go through a ``HeldWrites`` handed to ``made`` when a driver is made
    (public Driver API only: ``write``)."""

    class HeldWritesDriver(driver_class):  # type: ignore[valid-type,misc]
        """A terminal driver whose writes can be held and sent as one."""

        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, **kwargs)
            self.held_writes = HeldWrites(super().write)
            made(self.held_writes)

        def write(self, data: str) -> None:
            self.held_writes.write(data)

    return HeldWritesDriver


class ChangedCellsApp(PlainTerminalApp[ReturnType]):
    """An App that sends the terminal only the cells that change (see ``terminal_diff``).

    ``full_redraw`` leaves Textual's own output on. ``changed_cells_off`` says why the writer is off
    (None while it is on); the subclass tells the user under ``--debug`` (``on_changed_cells_off``).
    """

    def __init__(self, *, full_redraw: bool = False) -> None:
        super().__init__()
        self.terminal_diff = TerminalDiff()
        self.changed_cells_off: str | None = "--full-redraw" if full_redraw else check_internals()
        self.terminal_output: HeldWrites | None = None  # the terminal driver's writes, once it is made

    def get_driver_class(self) -> type[Driver]:
        return held_writes(quiet_input(super().get_driver_class()), self._driver_made)

    def _driver_made(self, output: HeldWrites) -> None:
        self.terminal_output = output

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
        output = self.terminal_output
        if output is None:
            super()._display(screen, renderable)
            return
        with output.one_write():  # the frame and the synchronized update around it: one wake-up of the writer
            super()._display(screen, renderable)
