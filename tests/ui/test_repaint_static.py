"""A tick whose figures did not change repaints nothing, and one that changes the host line and a
process row asks no card, nor the title or the footer, for its lines (issue 27): Textual renders a
partial frame from the box around every change, and gputop narrows it to the widgets on the changed
lines (``textual_private.narrowed_partial_update``, Private 3), a frame equal to Textual's own."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace

import pytest
from textual._compositor import Compositor
from textual.geometry import Region
from textual.pilot import Pilot
from textual.widget import Widget

from gputop.ui.app import GpuTopApp
from gputop.ui.terminal import textual_private
from gputop.ui.terminal.textual_private import check_narrowed, frame_pieces, narrowed_partial_update
from gputop.ui.widgets.key_footer import KeyFooter

from .factory import HOST, NOW, gpu, make_app, proc, snapshot

SIZE = (120, 40)
FILL_TICKS = 30  # more ticks than a sparkline is wide at 120 columns: then they stay as they are


def machine(seconds: float, *, host_cpu: float = 37.5, cpu_101: float = 10.0) -> object:
    """Four GPUs, two processes each, all started two hours ago (their TIME, 2h00m, holds for a minute)."""
    gpus = [
        gpu(index, [proc(100 + 10 * index + n, index, 4.0, age_s=7200, cpu=cpu_101 if index + n == 1 else 10.0)
                    for n in range(1, 3)])
        for index in range(4)
    ]
    return replace(snapshot(*gpus, timestamp=NOW + seconds), host=replace(HOST, cpu_percent=host_cpu))


async def settled(pilot: Pilot[object], app: GpuTopApp) -> None:
    """Wait until the footer has built its keys: a rebuild still queued (Textual asks for it after a
    frame) would otherwise land in the tick measured, and make the whole screen render again."""
    footer = app.screen.query_one(KeyFooter)
    for _ in range(50):
        await pilot.pause()
        if footer._built is not None and not footer._rebuild_queued:
            return
    raise AssertionError("the footer never built its keys")


class Drawn:
    """The lines each widget class is asked for (``render_lines``), counted while it is in use."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.lines: Counter[str] = Counter()
        render_lines = Widget.render_lines

        def counted(widget: Widget, crop: Region) -> object:
            self.lines[type(widget).__name__] += crop.height
            return render_lines(widget, crop)

        monkeypatch.setattr(Widget, "render_lines", counted)


async def test_a_tick_with_the_same_figures_asks_no_widget_for_a_line(monkeypatch: pytest.MonkeyPatch) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        for tick in range(FILL_TICKS):
            app.apply_snapshot(machine(tick))  # type: ignore[arg-type]
        await settled(pilot, app)
        drawn = Drawn(monkeypatch)
        app.apply_snapshot(machine(FILL_TICKS))  # type: ignore[arg-type]
        await pilot.pause()
        assert drawn.lines == Counter()


async def test_a_changed_host_line_and_process_row_ask_no_card_title_or_footer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        for tick in range(FILL_TICKS):
            app.apply_snapshot(machine(tick))  # type: ignore[arg-type]
        await settled(pilot, app)
        assert app.narrowed_off is None
        drawn = Drawn(monkeypatch)
        app.apply_snapshot(machine(FILL_TICKS, host_cpu=88.0, cpu_101=55.0))  # type: ignore[arg-type]
        await pilot.pause()
        asked = set(drawn.lines)
        assert {"HostStrip", "ProcessPanel"} <= asked  # the main screen's process table
        assert not asked & {"GpuCard", "GpuGrid", "TitleBar", "KeyFooter"}, drawn.lines
        host = "".join(segment.text for segment in app.query_one("#host-strip").render_line(0))
        assert "88.0%" in host


def pieces(update: object) -> list[tuple[int, int, tuple[object, ...]]]:
    found = frame_pieces(update)
    assert found is not None
    return [(x, y, tuple(strip)) for x, y, strip in found]


def random_regions(rng: random.Random, width: int, height: int) -> Iterator[Region]:
    """A few changed regions: whole lines (the host strip, a process row), parts of lines (a card's)."""
    for _ in range(rng.randint(1, 6)):
        y = rng.randrange(height)
        if rng.random() < 0.5:
            yield Region(0, y, width, rng.randint(1, min(3, height - y)))
        else:
            x = rng.randrange(width - 1)
            yield Region(x, y, rng.randint(1, width - x), 1)


async def test_a_narrowed_frame_is_the_frame_textual_renders() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        for tick in range(3):
            app.apply_snapshot(machine(tick))  # type: ignore[arg-type]
        await pilot.pause()
        compositor = app.screen._compositor
        assert "render_partial_update" in vars(compositor)  # narrowed since the screen's first frame
        rng = random.Random(27)
        for _ in range(25):
            regions = set(random_regions(rng, *SIZE))
            compositor._dirty_regions.update(regions)
            ours = narrowed_partial_update(compositor)
            compositor._dirty_regions.update(regions)
            textuals = Compositor.render_partial_update(compositor)
            assert pieces(ours) == pieces(textuals), sorted(regions)
        assert narrowed_partial_update(compositor) is None  # nothing changed: no frame


async def test_a_narrowing_that_fails_gives_the_frame_back_to_textual(monkeypatch: pytest.MonkeyPatch) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.apply_snapshot(machine(0))  # type: ignore[arg-type]
        await pilot.pause()
        compositor = app.screen._compositor

        def broken(compositor: Compositor) -> None:
            compositor._dirty_regions.clear()  # as far as the narrowing got
            raise AttributeError("_render_chops")

        monkeypatch.setattr(textual_private, "narrowed_partial_update", broken)
        changed = {Region(0, 1, 120, 1), Region(2, 4, 50, 1)}
        compositor._dirty_regions.update(changed)
        frame = compositor.render_partial_update()
        assert "render_partial_update" not in vars(compositor)  # Textual's own from now on
        compositor._dirty_regions.update(changed)
        assert pieces(frame) == pieces(Compositor.render_partial_update(compositor))
        app.apply_snapshot(machine(1, host_cpu=88.0))  # type: ignore[arg-type]
        await pilot.pause()
        screen_text = "\n".join("".join(segment.text for segment in line) for line in compositor.render_strips())
        assert "88.0%" in screen_text


def test_the_private_names_the_narrowing_needs_exist_in_this_textual(monkeypatch: pytest.MonkeyPatch) -> None:
    assert check_narrowed() is None
    monkeypatch.setattr(Compositor, "_render_chops", lambda self, crop: [])
    assert check_narrowed() == "Compositor._render_chops takes (self, crop), expected (self, crop, is_rendered_line)"
    monkeypatch.delattr(Compositor, "_render_chops")
    assert check_narrowed() == "Compositor._render_chops is missing, expected (self, crop, is_rendered_line)"


async def test_a_textual_without_them_renders_its_frames_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(textual_private, "check_narrowed", lambda: "Compositor._render_chops is missing")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.apply_snapshot(machine(0))  # type: ignore[arg-type]
        await pilot.pause()
        assert app.narrowed_off == "Compositor._render_chops is missing"
        assert "render_partial_update" not in vars(app.screen._compositor)
