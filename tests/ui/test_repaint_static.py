"""A tick whose figures did not change repaints nothing (issue 27)."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import pytest
from textual.geometry import Region
from textual.pilot import Pilot
from textual.widget import Widget

from gputop.ui.app import GpuTopApp
from gputop.ui.widgets.key_footer import KeyFooter

from .factory import HOST, NOW, gpu, make_app, proc, snapshot

SIZE = (120, 40)
FILL_TICKS = 30  # more ticks than a sparkline is wide at 120 columns: then they stay as they are


def machine(seconds: float) -> object:
    """Four GPUs, two processes each, all started two hours ago (their TIME, 2h00m, holds for a minute)."""
    gpus = [
        gpu(index, [proc(100 + 10 * index + n, index, 4.0, age_s=7200, cpu=10.0)
                    for n in range(1, 3)])
        for index in range(4)
    ]
    return replace(snapshot(*gpus, timestamp=NOW + seconds), host=replace(HOST, cpu_percent=37.5))


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
