"""A snapshot's processes by identity, worked out once for every stage that reads them, and again only
when a process list is not the one of the snapshot before."""

from __future__ import annotations

from gputop.core.analysis.process_rows import process_rows
from gputop.core.model import GpuSample, HostSample, MigSample, ProcessSample, Snapshot


def _process(pid: int, gpu: int, mig: int | None = None, memory: int = 1 << 30) -> ProcessSample:
    return ProcessSample(pid=pid, gpu_index=gpu, type="C", gpu_memory=memory, started=100.0 + pid, mig_index=mig)


def _snapshot(t: float, *gpus: GpuSample) -> Snapshot:
    return Snapshot(timestamp=t, hostname="h", host=HostSample(), gpus=gpus)


def test_a_process_on_several_devices_is_named_once_with_every_row_kept_apart() -> None:
    on_both = (_process(7, 0), _process(8, 0))
    mig = MigSample(index=0, processes=(_process(9, 1, mig=0), _process(7, 1, mig=0)))
    rows = process_rows(_snapshot(1.0, GpuSample(index=0, processes=on_both), GpuSample(index=1, mig_devices=(mig,))))
    assert list(rows.first) == [(7, 107.0), (8, 108.0), (9, 109.0)]
    assert rows.first[(7, 107.0)] is on_both[0]
    assert rows.more == {(7, 107.0): [on_both[0], mig.processes[1]]}


def test_the_same_lists_give_the_same_rows_and_a_list_that_changed_gives_new_ones() -> None:
    listed = (_process(1, 0), _process(2, 0))
    other = (_process(3, 1),)
    first = process_rows(_snapshot(1.0, GpuSample(index=0, processes=listed), GpuSample(index=1, processes=other)))
    # The next tick: new GPU samples (their figures moved), the very same process lists.
    again = process_rows(
        _snapshot(2.0, GpuSample(index=0, power_draw=90.0, processes=listed), GpuSample(index=1, processes=other))
    )
    assert again is first
    # An equal list that is another tuple, or a process that moved: worked out again, and right.
    moved = (listed[0], _process(2, 0, memory=2 << 30))
    changed = process_rows(_snapshot(3.0, GpuSample(index=0, processes=moved), GpuSample(index=1, processes=other)))
    assert changed is not first
    assert changed.first[(2, 102.0)] is moved[1] and changed.more == {}
    fewer = process_rows(_snapshot(4.0, GpuSample(index=0, processes=moved)))
    assert list(fewer.first) == [(1, 101.0), (2, 102.0)]
