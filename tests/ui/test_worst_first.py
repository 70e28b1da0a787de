"""The worst first (issue 26, item 6): with every mark at once, a card never cuts a worse mark for a lesser one,
a hot GPU's compact row keeps its °C, util and W, and the detail screen's problems box lists every problem
and says when some are out of sight; at 80x24 and 120x40, driven as a user would."""

from __future__ import annotations

from dataclasses import replace

import pytest
from rich.text import Text
from textual.pilot import Pilot

from gputop.core.model import GpuHealth, GpuSample, XidEvent
from gputop.ui.app import GpuTopApp
from gputop.ui.screens.detail import DetailScreen
from gputop.ui.widgets.diagnosis_panel import DiagnosisPanel
from gputop.ui.widgets.gpu_card import GpuCard

from .factory import GIB, NOW, gpu, make_app, proc, screen_text, snapshot

STEP_S = 10.0
TICKS = 14  # 130 s: GPU 2 stalled (120 s), every alert held past its 3 s


def machine(tick: int):  # noqa: ANN201 - a Snapshot
    """GPU 0 fine; GPU 1 lost after an XID 79; GPU 2 spinning at low power (a stall); GPU 3 everything at once:
    an XID 79 and ECC errors, memory at 97 % (27 GiB nobody holds), 86 °C against a slowdown at 87 °C, clocks
    held down by HW slowdown and SW thermal."""
    at = NOW + tick * STEP_S
    xid = (XidEvent(79, NOW - 60),)
    lost = GpuSample(index=1, name="NVIDIA H100 80GB HBM3", lost=True, health=GpuHealth(xid_events=xid))
    spinning = replace(
        gpu(2, [proc(201, 2, 20, "carol", "torchrun train.py", sm=100.0)], utilization=100.0),
        power_draw=100.0, clock_event_reasons=(),
    )  # fmt: skip
    worst = replace(
        gpu(3, [proc(301, 3, 40, "dave", "python train.py", sm=90.0), proc(302, 3, 10, "erin", "jupyter-lab", sm=0.0)]),
        memory_used=int(77.6 * GIB),
        temperature=86.0,
        utilization_gpu=100.0,
        power_draw=650.0,
        clock_event_reasons=("hw_slowdown", "sw_thermal"),
        health=GpuHealth(ecc_uncorrected_volatile=2, xid_events=xid),
    )
    return snapshot(gpu(0, [proc(101, 0, 10)]), lost, spinning, worst, timestamp=at)


# The compact row of GPU 3 at each size: the marks after its memory, and the figures it ends with.
EXPECTED_ROW = {
    (80, 24): ("✚ HEALTH +3 ", "100%  86°C  650W"),
    (120, 40): ("✚ HEALTH ⚠ MEMORY HOT THROTTLED ", "100%  86°C  650W/700W"),
}


async def started(app: GpuTopApp) -> None:
    for tick in range(TICKS):
        app.apply_snapshot(machine(tick))


def plain(markup: object) -> str:
    return "" if markup is None else Text.from_markup(str(markup)).plain


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_every_mark_at_once_the_worst_first_on_the_cards_and_in_the_detail_box(size: tuple[int, int]) -> None:
    app = make_app()
    app.animation_level = "none"  # a scroll lands at once
    async with app.run_test(size=size) as pilot:
        await started(app)
        await pilot.pause()
        cards = {card.id: card for card in app.query(GpuCard)}
        worst = cards["gpu-3"]
        assert [mark.token for mark in worst.content.marks()] == ["✚ HEALTH", "MEMORY", "HOT", "THROTTLED"]
        assert [mark.token for mark in cards["gpu-1"].content.marks()] == ["✚ HEALTH", "LOST"]
        assert [mark.token for mark in cards["gpu-2"].content.marks()] == ["STALLED?"]
        if not worst.compact:
            await pilot.press("c")
            await pilot.pause()
        # One line a GPU: the marks that fit, worst first, "+N" for the rest; the figures always.
        row = worst._lines[0].plain
        marks, figures = EXPECTED_ROW[size]
        assert row.split(" 97% ", 1)[1].startswith(marks)
        assert row.rstrip().endswith(figures)
        assert len(row) <= worst.content_size.width
        assert "✖ LOST: XID 79: GPU has fallen off the bus" in cards["gpu-1"]._lines[0].plain
        # Full cards: the title names them worst first; the name, then the throttle reasons, give way first.
        await pilot.press("c")
        await pilot.pause()
        assert not worst.compact
        title = plain(worst.border_title)
        assert title.startswith(" 3  ✚ HEALTH ⚠ MEMORY HOT THROTTLED · HW slowdown, SW thermal NVIDIA")
        assert plain(cards["gpu-1"].border_title).startswith(" 1  ✚ HEALTH LOST NVIDIA")
        if size == (120, 40):  # at 80x24 the full cards leave GPU 3 below the fold
            drawn = [line for line in screen_text(app).splitlines() if " 3  ✚ HEALTH" in line]
            assert len(drawn) == 1 and "┏━  3  ✚ HEALTH ⚠ MEMORY HOT THROTTLED · HW slowdown, SW… ━┓" in drawn[0]
        await the_problems_box_lists_every_problem_and_scrolls_to_the_rest(app, pilot)


async def the_problems_box_lists_every_problem_and_scrolls_to_the_rest(app: GpuTopApp, pilot: Pilot[int]) -> None:
    """In GPU 3's detail: every problem listed worst first; what does not fit is out of sight, said so, and
    reached with Shift+Tab and End."""
    await pilot.press("3", "g")  # the panel filtered to GPU 3, then its detail
    await pilot.pause()
    assert isinstance(app.screen, DetailScreen)
    box = app.screen.query_one(DiagnosisPanel)
    text = box.text.plain
    heads = [line.split()[0] for line in text.splitlines() if not line.startswith("   ")]  # not the causes
    # Worst first, as on the card; HOT and the memory alert included.
    assert heads == ["HEALTH", "HEALTH", "MEMORY", "HOT", "THROTTLED", "GPU"]
    assert "XID 79: GPU has fallen off the bus" in text and "2 uncorrected ECC errors" in text
    assert " MEMORY 97% in use (77.6GiB of 80.0GiB)" in text
    assert " HOT 86 °C, 1 °C below its slowdown temperature (87 °C)" in text
    # It does not fit: the border says how much is out of sight, and Tab then End scroll to it.
    below = round(box.max_scroll_y)
    lines = "lines" if below > 1 else "line"
    assert below > 0 and plain(box.border_subtitle) == f"↓ {below} more {lines}: scroll, or Tab here and ↓"
    await pilot.press("shift+tab")  # from the process list, back to the box above it
    await pilot.pause()
    assert app.focused is box
    assert "XID 79: GPU has fallen off the bus" in screen_text(app)  # in sight, the worst first
    await pilot.press("end")
    await pilot.pause()
    assert box.scroll_y == box.max_scroll_y
    assert plain(box.border_subtitle) == f"↑ {below} above"
    shown = screen_text(app)
    last_word = text.rstrip().split()[-1]  # of the likely causes, which depend on the PID namespace seen
    assert last_word in shown and "XID 79" not in shown  # the last line in sight, the first not
