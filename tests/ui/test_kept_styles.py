"""The cards, the process panel and the host strip keep their styles from frame to frame (issue 36,
item 5): Textual forgets a widget's ``rich_style`` and component styles at every refresh, even of one
line, and working them out walks every ancestor's styles. Whatever can change a style (a theme, the
focus, a class, a colour set in code) makes them worked out again on the next frame: what is kept is
then what Textual works out afresh, and the screen shows it."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import pytest
from rich.style import Style
from textual.dom import DOMNode

from gputop.ui.app import GpuTopApp
from gputop.ui.widgets.frame_style import FrameStyled
from gputop.ui.widgets.gpu_card import GpuCard
from gputop.ui.widgets.host_strip import HostStrip
from gputop.ui.widgets.process_table import ProcessTable

from .factory import StaticSource, gpu, make_app, proc

COMPONENTS = ("process-table--header", "process-table--sorted", "process-table--cursor", "process-table--memory")


@pytest.fixture
def worked_out(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """How often the cards, the process panel and the host strip had their ``rich_style`` worked out."""
    counts: Counter[str] = Counter()
    original = DOMNode.rich_style
    kinds = {GpuCard: "cards", ProcessTable: "panel", HostStrip: "host strip"}

    def counting(self: DOMNode) -> Style:
        counts[next((kind for cls, kind in kinds.items() if isinstance(self, cls)), "other")] += 1
        return original.fget(self)  # type: ignore[attr-defined,no-any-return]

    monkeypatch.setattr(DOMNode, "rich_style", property(counting))
    return counts


def widgets(app: GpuTopApp) -> list[FrameStyled]:
    return [*app.query(GpuCard), app.query_one(ProcessTable), app.query_one(HostStrip)]


def assert_kept_styles_are_textuals(app: GpuTopApp) -> None:
    for widget in widgets(app):
        assert widget.line_style == DOMNode.rich_style.fget(widget)  # type: ignore[attr-defined]
    table = app.query_one(ProcessTable)
    for name in COMPONENTS:
        assert table.component_style(name) == table.get_component_rich_style(name)


async def tick(app: GpuTopApp, source: StaticSource, memory_gib: float) -> None:
    source.gpus = (gpu(0, (proc(101, 0, memory_gib), proc(102, 0, 2.0))), source.gpus[1])
    app.apply_snapshot(app.sampler.sample())


async def test_ticks_that_change_lines_work_no_style_out_again(worked_out: Counter[str]) -> None:
    source = StaticSource((gpu(0, (proc(101, 0, 1.0), proc(102, 0, 2.0))), gpu(1)))
    app = make_app(source)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        for step in range(3):
            await tick(app, source, 1.0 + step)
            await pilot.pause()
        worked_out.clear()
        for step in range(5):  # a process's memory and the host's figures change each tick: lines redrawn
            await tick(app, source, 10.0 + step)
            source.host = replace(source.host, cpu_percent=20.0 + step)
            await pilot.pause()
        assert "14.0GiB" in str(app.query_one(ProcessTable).render_line(1))
        assert worked_out["panel"] == worked_out["cards"] == worked_out["host strip"] == 0
        assert_kept_styles_are_textuals(app)


async def test_what_changes_a_style_is_seen_on_the_next_frame() -> None:
    source = StaticSource((gpu(0, (proc(101, 0, 1.0), proc(102, 0, 2.0))), gpu(1)))
    app = make_app(source)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await tick(app, source, 1.0)
        await pilot.pause()
        table = app.query_one(ProcessTable)
        before = {widget: widget.line_style for widget in widgets(app)}
        cursor = table.component_style("process-table--cursor")
        assert_kept_styles_are_textuals(app)

        app.theme = "textual-light"  # the stylesheet applied again
        await tick(app, source, 2.0)
        await pilot.pause()
        assert_kept_styles_are_textuals(app)
        assert all(widget.line_style != before[widget] for widget in widgets(app))
        assert table.component_style("process-table--cursor") != cursor

        await pilot.press("tab")  # the focus moves: :focus rules apply to other widgets
        await tick(app, source, 3.0)
        await pilot.pause()
        assert_kept_styles_are_textuals(app)

        light = table.line_style
        app.screen.styles.color = "#ff0000"  # a colour set in code, inherited by every widget below
        await tick(app, source, 4.0)
        await pilot.pause()
        assert_kept_styles_are_textuals(app)
        assert table.line_style != light and table.line_style.color is not None
        assert table.line_style.color.triplet is not None and table.line_style.color.triplet.red == 255

        table.add_class("-kept-style-test")  # a class: the stylesheet applied to the widget again
        table.styles.background = "#0000ff"
        await pilot.pause()
        assert_kept_styles_are_textuals(app)
        drawn = table.render_line(1)
        assert list(drawn)[0].style is not None and list(drawn)[0].style.bgcolor is not None
        assert list(drawn)[0].style.bgcolor.triplet is not None
        assert list(drawn)[0].style.bgcolor.triplet.blue == 255
