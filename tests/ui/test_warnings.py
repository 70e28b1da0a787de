"""Warnings stay readable: a card in alarm shows what is wrong and its forecast before anything else,
at 80x24 and 120x40, the MIG line included."""

from __future__ import annotations

import pytest

from gputop.core.model import MigSample
from gputop.ui.widgets.gpu_card import GpuCard

from .factory import GIB, NOW, gpu, make_app, proc, snapshot

MIB = 1024**2


def filling_mig(tick: int):  # noqa: ANN201 - a Snapshot
    """GPU 0, an A100 in MIG mode: MIG 2 (5 GiB) fills at 20 MiB/s from 1 GiB, full in about 3 minutes."""
    used = GIB + 20 * MIB * tick
    migs = (
        MigSample(index=0, name="NVIDIA A100-SXM4-40GB MIG 3g.20gb", memory_total=20 * GIB, memory_used=4 * GIB),
        MigSample(index=1, name="NVIDIA A100-SXM4-40GB MIG 2g.10gb", memory_total=10 * GIB, memory_used=2 * GIB),
        MigSample(
            index=2, name="NVIDIA A100-SXM4-40GB MIG 1g.5gb", memory_total=5 * GIB, memory_used=used,
            processes=(proc(301, 0, used / GIB, mig=2, command="python leak.py"),),
        ),
    )
    return snapshot(
        gpu(0, [], total_gib=40, name="NVIDIA A100-SXM4-40GB", migs=migs),
        gpu(1, [proc(101, 1, 20)]),
        timestamp=NOW + tick,
    )


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_a_card_in_alarm_shows_what_and_when_first(size: tuple[int, int]) -> None:
    app = make_app()
    async with app.run_test(size=size) as pilot:
        for tick in range(60):
            app.apply_snapshot(filling_mig(tick))
        await pilot.pause()
        card = app.query_one("#gpu-0", GpuCard)
        text = [line.plain for line in card._lines]
        forecast = app.tick.foresight.forecasts.migs[(0, 2)].seconds_to_full  # type: ignore[union-attr]
        assert forecast == pytest.approx((5 * 1024 - 1024 - 20 * 59) / 20)
        assert not card.compact
        assert card._titles[0] is not None and card._titles[0].plain.startswith(" 0  ⚠ FILLING NVIDIA")
        mig_line = next(line for line in text if line.startswith("MIG2"))
        assert "full in ~" in mig_line
        await pilot.press("c")  # one-line cards: the forecast comes first, and says FILLING by itself
        await pilot.pause()
        text = [line.plain for line in card._lines]
        assert card.compact and "⚠ full ~" in text[0]
        assert "· 2 " in text[1] and "full ~" in text[1]
        assert all(len(line) <= card.content_size.width for line in text)
