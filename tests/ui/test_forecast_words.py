"""Words that are true on the cards: "full in" only while memory rises, gone on the next tick after
it falls, and FULL at 100 %."""

from __future__ import annotations

import pytest

from gputop.ui.app import GpuTopApp
from gputop.ui.widgets.gpu_card import GpuCard

from .factory import NOW, gpu, make_app, proc, snapshot


def card_text(card: GpuCard) -> str:
    return "\n".join("".join(s.text for s in card.render_line(y)) for y in range(card.content_size.height))


def tick(app: GpuTopApp, second: int, gib: float) -> None:
    """GPU 0 (80 GiB) with one process of ``gib`` (the card adds half a GiB of its own) at NOW + second."""
    app.apply_snapshot(snapshot(gpu(0, [proc(101, 0, gib, command="python leak.py")]), timestamp=NOW + second))


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_full_in_goes_on_the_tick_memory_falls_and_full_reads_full(size: tuple[int, int]) -> None:
    app = make_app()
    async with app.run_test(size=size) as pilot:
        for second in range(60):  # 0.5 GiB a second, from 20 to 49.5 GiB
            tick(app, second, 19.5 + second / 2)
        await pilot.pause()
        (card,) = app.query(GpuCard)
        assert "full in ~1m01s" in card_text(card)  # (80 - 49.5) GiB at 0.5 GiB/s
        tick(app, 60, 10)  # the job freed 40 GiB
        await pilot.pause()
        assert "full" not in card_text(card).lower()
        for second in range(61, 70):
            tick(app, second, 79.5)  # then it filled the GPU: 80.0 of 80.0 GiB
        await pilot.pause()
        text = card_text(card)
        assert "FULL" in text and "full in" not in text and "~0s" not in text
