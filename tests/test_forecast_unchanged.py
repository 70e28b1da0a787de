"""A process's growth on an unchanged machine (the same GPU object tick after tick): not known until its
history spans min_span_s, then not growing, and not known again if a shorter interval makes a full
history span less; growing as soon as its memory climbs. Each tick's answer is the one a forecaster
that never saw the ticks before would give."""

from __future__ import annotations

from gputop.core.analysis.forecast import GROWTH_NOT_YET, NOT_GROWING, Forecaster, ProcessGrowth
from gputop.core.analysis.history import History
from gputop.core.model import GpuSample, HostSample, ProcessSample, Snapshot

GIB = 1 << 30
MIB = 1 << 20
OLD, NEW = (1, 10.0), (2, 50.0)  # (pid, started)


def gpu(new_memory: int = GIB) -> GpuSample:
    old = ProcessSample(pid=1, gpu_index=0, type="C", gpu_memory=GIB, started=10.0)
    new = ProcessSample(pid=2, gpu_index=0, type="C", gpu_memory=new_memory, started=50.0)
    return GpuSample(index=0, memory_used=2 * GIB, memory_total=80 * GIB, processes=(old, new))


def feed(
    history: History, forecaster: Forecaster, ticks: list[tuple[float, GpuSample]], fresh: bool = True
) -> list[dict[object, ProcessGrowth]]:
    """Each tick's process forecasts; with ``fresh``, each checked against a new forecaster's for the same
    history (for processes that are not fitted: a fitted one is refitted every few ticks)."""
    out = []
    for now, sample in ticks:
        snapshot = Snapshot(timestamp=now, hostname="h", host=HostSample(), gpus=(sample,))
        history.add(snapshot)
        kept = dict(forecaster.update(history, snapshot).processes)
        assert not fresh or kept == dict(Forecaster().update(history, snapshot).processes), now
        out.append(kept)
    return out


def test_a_process_on_an_unchanged_machine_is_not_known_until_its_history_spans_30_s_then_not_growing() -> None:
    history, forecaster = History(), Forecaster()
    same = gpu()
    first = [(100.0 + k, same) for k in range(10)]  # the first process alone for 10 s: not known yet
    alone = feed(history, forecaster, [(now, GpuSample(index=0, processes=same.processes[:1])) for now, _ in first])
    assert alone[-1] == {OLD: GROWTH_NOT_YET}
    got = feed(history, forecaster, [(110.0 + k, same) for k in range(35)])
    # The first spans 30 s at 130 s (20 ticks on), the second, seen from 110 s, at 140 s.
    assert [tick[OLD] for tick in got[18:22]] == [GROWTH_NOT_YET, GROWTH_NOT_YET, NOT_GROWING, NOT_GROWING]
    assert [tick[NEW] for tick in got[28:32]] == [GROWTH_NOT_YET, GROWTH_NOT_YET, NOT_GROWING, NOT_GROWING]
    assert got[-1] == {OLD: NOT_GROWING, NEW: NOT_GROWING}


def test_a_shorter_interval_that_makes_a_full_history_span_under_30_s_makes_its_growth_unknown_again() -> None:
    history, forecaster = History(process_maxlen=40), Forecaster()
    same = gpu()
    assert feed(history, forecaster, [(100.0 + k, same) for k in range(50)])[-1][OLD] == NOT_GROWING
    # Ticks of 0.5 s: the 40 newest points span 39 s, then less each tick until 19.5 s.
    got = feed(history, forecaster, [(149.5 + k / 2, same) for k in range(40)])
    spans = [min(39, k + 1) * 0.5 + max(0, 39 - (k + 1)) * 1.0 for k in range(40)]
    assert [tick[OLD] for tick in got] == [NOT_GROWING if span >= 30 else GROWTH_NOT_YET for span in spans]
    assert got[-1] == {OLD: GROWTH_NOT_YET, NEW: GROWTH_NOT_YET}


def test_memory_that_climbs_after_a_flat_while_is_growing_on_the_ticks_it_climbs() -> None:
    history, forecaster = History(), Forecaster()
    same = gpu()
    assert feed(history, forecaster, [(100.0 + k, same) for k in range(40)])[-1][NEW] == NOT_GROWING
    got = feed(history, forecaster, [(140.0 + k, gpu(GIB + (k + 1) * 100 * MIB)) for k in range(130)], fresh=False)
    assert got[-1][OLD] == NOT_GROWING
    growth = got[-1][NEW]
    assert growth.is_growing and growth.growth_rate is not None and abs(growth.growth_rate - 100 * MIB) < MIB
