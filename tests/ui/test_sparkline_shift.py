"""A sparkline moved on by a column each tick draws what drawing it again from its values draws
(issue 27): over seeded random runs of appends (one value, a few skipped frames, more than the width),
unknown values, a history trimmed at its length, new scales, new widths and another history; and a
card's lines drawn tick after tick through a real ``History`` equal the lines drawn afresh."""

from __future__ import annotations

import random
from dataclasses import replace
from unittest import mock

import pytest

from gputop.core.analysis.history import History
from gputop.ui.widgets import sparkline as sparkline_module
from gputop.ui.widgets.card_lines import CardContent, compact_lines, full_lines
from gputop.ui.widgets.sparkline import SparkCells, Sparklines, sparkline

from .factory import NOW, gpu, snapshot

MAXLEN = 40  # the history's length: small, so that runs go past it and the oldest values are dropped


def random_value(rng: random.Random, low: float, high: float) -> float | None:
    if rng.random() < 0.1:
        return None  # a tick the GPU did not answer
    return rng.uniform(low - 10, high + 10)  # out of the scale too: drawn at its ends


@pytest.mark.parametrize("seed", range(12))
def test_a_sparkline_moved_on_draws_what_drawing_it_again_draws(seed: int) -> None:
    rng = random.Random(seed)
    values: list[float | None] = []
    stamps: list[float] = []
    width, low, high = rng.choice([3, 20, MAXLEN + 5]), 0.0, 100.0
    source = object()
    cells = SparkCells()
    clock = NOW
    rebuilds = 0
    rebuilt = mock.patch.object(sparkline_module, "sparkline", wraps=sparkline)
    with rebuilt as full:
        for step in range(300):
            roll = rng.random()
            must_rebuild = step == 0
            if roll < 0.75:
                appended = 1
            elif roll < 0.85:
                appended = rng.randint(2, 5)  # frames the UI skipped: several values at once
            elif roll < 0.88:
                appended = width + rng.randint(0, 3)  # more than the sparkline holds
            elif roll < 0.91:
                appended, before, width = 1, width, rng.choice([3, 12, 20, 25, MAXLEN + 5])  # the card resized
                must_rebuild = width != before
            elif roll < 0.94:
                appended, before_high = 1, high
                high = rng.choice([80.0, 92.0, 100.0, 700.0])  # a new scale (memory size, shutdown point)
                must_rebuild = high != before_high
            elif roll < 0.96:
                appended, source = 1, object()  # another history (a replay rewound)
                values, stamps = [], []
                must_rebuild = True
            else:
                appended = 0  # the same tick drawn again (a repaint, not a tick)
            for _ in range(appended):
                clock += rng.choice([0.5, 1.0, 1.0, 2.0])
                values.append(random_value(rng, low, high))
                stamps.append(clock)
            del values[:-MAXLEN], stamps[:-MAXLEN]
            if appended >= width:
                must_rebuild = True
            expected = sparkline(values, width, low, high)  # drawn afresh (not through the mock)
            calls_before = full.call_count
            drawn = cells.draw(values, stamps, width, low, high, source)
            assert drawn == expected, (seed, step)
            assert len(drawn) == width
            # Drawn again in full exactly when it must be, moved on otherwise.
            assert full.call_count - calls_before == (1 if must_rebuild else 0), (seed, step)
            rebuilds += must_rebuild
        # Most ticks moved the sparkline on: a version that always drew it again fails above.
        assert rebuilds < 100


def test_a_sparkline_no_cell_wide_is_empty() -> None:
    cells = SparkCells()
    assert cells.draw([1.0], [NOW], 0, 0, 100) == ""
    assert cells.draw([1.0, 2.0], [NOW, NOW + 1], 0, 0, 100) == ""


def test_only_the_new_columns_are_drawn_on_a_tick() -> None:
    values: list[float | None] = [10.0, 20.0, 30.0, 40.0]
    stamps = [1.0, 2.0, 3.0, 4.0]
    cells = SparkCells()
    assert cells.draw(values, stamps, 6, 0, 100) == "  ▂▂▃▄"
    # Each cell drawn is one call of ``_cell``, whichever way the sparkline is drawn: only the new one.
    with mock.patch.object(sparkline_module, "_cell", wraps=sparkline_module._cell) as drawn:
        values.append(100.0)
        stamps.append(5.0)
        assert cells.draw(values, stamps, 6, 0, 100) == " ▂▂▃▄█"
    assert [call.args[0] for call in drawn.call_args_list] == [100.0]


def test_a_repeated_stamp_is_not_taken_for_no_new_value() -> None:
    cells = SparkCells()
    assert cells.draw([0.0, 100.0], [1.0, 2.0], 4, 0, 100) == "  ▁█"
    # A third value with the stamp of the second: its count says it is new, so it is drawn.
    assert cells.draw([0.0, 100.0, 0.0], [1.0, 2.0, 2.0], 4, 0, 100) == " ▁█▁"


def card_sequence(seed: int) -> list[object]:
    """Snapshots of two GPUs whose figures wander, one a second, some seconds skipped."""
    rng = random.Random(seed)
    snaps: list[object] = []
    at = NOW
    for _ in range(120):
        at += rng.choice([1.0, 1.0, 1.0, 2.0])
        gpus = [
            replace(
                gpu(index, utilization=rng.uniform(0, 100), temperature=rng.uniform(30, 90)),
                memory_used=rng.randrange(0, 80 * 1024**3),
            )
            for index in range(2)
        ]
        snaps.append(snapshot(*gpus, timestamp=at))
    return snaps


@pytest.mark.parametrize("seed", range(2))
def test_a_cards_lines_moved_on_tick_after_tick_equal_the_lines_drawn_afresh(seed: int) -> None:
    rng = random.Random(seed)
    history = History(gpu_maxlen=MAXLEN)
    sparks = {0: Sparklines(), 1: Sparklines()}
    width, compact = 60, False
    for n, snap in enumerate(card_sequence(seed)):
        history.add(snap)  # type: ignore[arg-type]
        if n % 17 == 5:
            width = rng.choice([44, 60, 90, 120])  # the terminal resized
        if n % 29 == 7:
            compact = not compact  # `c`
        if n == 70:
            history.add(replace(snap, timestamp=NOW))  # type: ignore[type-var]  # rewound: a new history
        for sample in snap.gpus:  # type: ignore[attr-defined]
            content = CardContent(sample, history=history.gpus[sample.index], now=snap.timestamp)  # type: ignore[attr-defined]
            if compact:
                kept = compact_lines(content, width, False, sparks[sample.index])
                fresh = compact_lines(content, width, False)
            else:
                kept = full_lines(content, width, sparks[sample.index])
                fresh = full_lines(content, width)
            assert kept == fresh, (seed, n, sample.index)
