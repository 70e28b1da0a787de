"""Bounded histories: what the sparklines and forecasts read."""

from __future__ import annotations

import subprocess
import sys

import pytest

from gputop.core.analysis.history import History
from gputop.core.model import GpuSample, HostSample, MigSample, ProcessSample, Snapshot

GIB = 1 << 30


def process(pid: int, gpu: int, memory: int | None, started: float | None = 100.0) -> ProcessSample:
    return ProcessSample(pid=pid, gpu_index=gpu, type="C", gpu_memory=memory, started=started)


def snapshot(t: float, *gpus: GpuSample) -> Snapshot:
    return Snapshot(timestamp=t, hostname="h", host=HostSample(), gpus=gpus)


def test_gpu_series_hold_each_field_in_order_with_none_for_na() -> None:
    history = History()
    history.add(
        snapshot(
            10.0,
            GpuSample(
                index=1, memory_used=GIB, temperature=40.0, utilization_gpu=50.0, power_draw=200.0
            ),
        )
    )
    history.add(snapshot(11.0, GpuSample(index=1, memory_used=2 * GIB)))
    gpu = history.gpu(1)
    assert list(gpu.timestamps) == [10.0, 11.0]
    assert list(gpu.memory_used) == [GIB, 2 * GIB]
    assert list(gpu.temperature) == [40.0, None]
    assert list(gpu.utilization) == [50.0, None]
    assert list(gpu.power) == [200.0, None]
    assert len(gpu) == 2
    assert len(history) == 2
    assert list(history.timestamps) == [10.0, 11.0]


def test_series_are_bounded_by_count() -> None:
    history = History(gpu_maxlen=5, process_maxlen=3)
    for k in range(20):
        history.add(
            snapshot(float(k), GpuSample(index=0, memory_used=k, processes=(process(7, 0, k),)))
        )
    assert list(history.gpu(0).memory_used) == [15, 16, 17, 18, 19]
    assert list(history.process((7, 100.0)).gpu_memory) == [17, 18, 19]
    assert list(history.process((7, 100.0)).timestamps) == [17.0, 18.0, 19.0]
    assert len(history) == 5


def test_an_unchanged_machine_adds_every_ticks_point_to_each_process_bounded_and_dates_the_next_change() -> None:
    # The same GPU object tick after tick (the source's way of saying nothing moved): the same process rows.
    busy = ProcessSample(pid=7, gpu_index=0, type="C", gpu_memory=GIB, sm_utilization=30.0, started=100.0,
                         cpu_percent=2.5, host_memory=None)
    quiet = process(8, 0, None)
    gpu = GpuSample(index=0, memory_used=GIB, processes=(busy, quiet))
    history = History(gpu_maxlen=10, process_maxlen=4)
    for k in range(7):
        history.add(snapshot(float(k), gpu))
    series = history.process((7, 100.0))
    assert list(series.timestamps) == [3.0, 4.0, 5.0, 6.0]
    assert list(series.gpu_memory) == [GIB] * 4
    assert list(series.sm_utilization) == [30.0] * 4
    assert list(series.cpu_percent) == [2.5] * 4
    assert list(series.host_memory) == [None] * 4
    assert series.last_memory_change is None
    assert list(history.process((8, 100.0)).gpu_memory) == [None] * 4
    moved = GpuSample(index=0, memory_used=GIB, processes=(busy, process(8, 0, 2 * GIB)))
    for k in (7, 8):
        history.add(snapshot(float(k), moved))
    assert list(history.process((8, 100.0)).gpu_memory) == [None, None, 2 * GIB, 2 * GIB]
    assert history.process((8, 100.0)).last_memory_change == 7.0
    assert list(history.process((7, 100.0)).timestamps) == [5.0, 6.0, 7.0, 8.0]


def test_mig_devices_are_keyed_by_gpu_and_mig_index() -> None:
    history = History()
    for k in range(3):
        migs = (MigSample(index=0, memory_used=k), MigSample(index=1, memory_used=None))
        history.add(snapshot(float(k), GpuSample(index=2, mig_devices=migs)))
    assert list(history.mig(2, 0).memory_used) == [0, 1, 2]
    assert list(history.mig(2, 1).memory_used) == [None, None, None]
    assert set(history.migs) == {(2, 0), (2, 1)}


def test_a_process_is_keyed_by_pid_and_start_time_so_a_reused_pid_starts_afresh() -> None:
    history = History()
    history.add(snapshot(1.0, GpuSample(index=0, processes=(process(42, 0, GIB, 100.0),))))
    history.add(snapshot(2.0, GpuSample(index=0, processes=(process(42, 0, 2 * GIB, 100.0),))))
    history.add(snapshot(3.0, GpuSample(index=0, processes=(process(42, 0, 5, 250.0),))))
    assert set(history.processes) == {(42, 250.0)}
    assert list(history.process((42, 250.0)).gpu_memory) == [5]
    with pytest.raises(KeyError):
        history.process((42, 100.0))


def test_a_process_on_several_gpus_has_its_memory_summed() -> None:
    history = History()
    gpus = (
        GpuSample(index=0, processes=(process(5, 0, GIB),)),
        GpuSample(index=1, processes=(process(5, 1, 2 * GIB),)),
        GpuSample(index=2, mig_devices=(MigSample(index=0, processes=(process(5, 2, None),)),)),
    )
    history.add(snapshot(1.0, *gpus))
    assert list(history.process((5, 100.0)).gpu_memory) == [3 * GIB]


def test_a_process_with_unknown_memory_everywhere_records_none() -> None:
    history = History()
    history.add(snapshot(1.0, GpuSample(index=0, processes=(process(5, 0, None),))))
    assert list(history.process((5, 100.0)).gpu_memory) == [None]


def test_vanished_processes_and_devices_are_dropped_at_once() -> None:
    history = History()
    history.add(snapshot(1.0, GpuSample(index=0, processes=(process(1, 0, 1), process(2, 0, 2)))))
    history.add(snapshot(2.0, GpuSample(index=1, processes=(process(2, 1, 2),))))
    assert set(history.processes) == {(2, 100.0)}
    assert set(history.gpus) == {1}
    with pytest.raises(KeyError):
        history.gpu(0)


def test_a_30_minute_soak_with_a_new_pid_every_second_does_not_grow() -> None:
    history = History()
    for k in range(1800):
        procs = tuple(process(1000 + k + j, 0, GIB, started=float(k + j)) for j in range(3))
        history.add(snapshot(float(k), GpuSample(index=0, memory_used=GIB, processes=procs)))
    assert len(history.processes) == 3
    assert len(history.gpu(0)) == 1800


def test_a_repeated_timestamp_is_ignored_and_an_older_one_starts_over() -> None:
    history = History()
    history.add(snapshot(5.0, GpuSample(index=0, memory_used=1)))
    history.add(snapshot(5.0, GpuSample(index=0, memory_used=2)))
    assert list(history.gpu(0).memory_used) == [1]
    history.add(snapshot(3.0, GpuSample(index=0, memory_used=3)))
    assert list(history.gpu(0).timestamps) == [3.0]
    assert len(history) == 1


def test_last_memory_change_is_the_time_memory_last_moved() -> None:
    history = History()
    for t, memory in [(1.0, 5), (2.0, 5), (3.0, 6), (4.0, 6), (5.0, None)]:
        history.add(snapshot(t, GpuSample(index=0, memory_used=memory)))
        if t == 2.0:
            assert history.gpu(0).last_memory_change is None
        if t == 4.0:
            assert history.gpu(0).last_memory_change == 3.0
    assert history.gpu(0).last_memory_change == 5.0


def test_maxlen_must_be_positive() -> None:
    with pytest.raises(ValueError):
        History(gpu_maxlen=0)


def test_history_holds_8_gpus_and_1024_processes() -> None:
    snapshots = [
        snapshot(
            float(k),
            *(
                GpuSample(
                    index=g,
                    memory_used=k,
                    temperature=50.0,
                    processes=tuple(process(g * 1000 + p, g, k * p) for p in range(128)),
                )
                for g in range(8)
            ),
        )
        for k in range(50)
    ]
    history = History()
    for item in snapshots:
        history.add(item)
    assert len(history.processes) == 1024
    assert list(history.gpu(7).memory_used) == list(range(50))
    assert len(history.process((7127, 100.0)).gpu_memory) == 50


def test_the_data_side_modules_do_not_import_textual() -> None:
    code = (
        "import sys\n"
        "import gputop.core.analysis.alerts, gputop.core.analysis.forecast, gputop.core.analysis.history,"
        " gputop.core.settings\n"
        "assert 'textual' not in sys.modules, 'textual imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_process_history_keeps_its_busiest_gpus_sm_its_cpu_and_host_memory() -> None:
    history = History()
    for k, (sm0, sm1) in enumerate([(10.0, 70.0), (None, 40.0), (None, None)]):
        shared = {"pid": 9, "type": "C", "started": 1.0, "cpu_percent": 100.0 + k, "host_memory": (k + 1) * GIB}
        gpus = tuple(
            GpuSample(index=i, processes=(ProcessSample(gpu_index=i, gpu_memory=GIB, sm_utilization=sm, **shared),))
            for i, sm in enumerate((sm0, sm1))
        )
        history.add(Snapshot(timestamp=float(k), hostname="h", host=HostSample(), gpus=gpus))
    process = history.process((9, 1.0))
    assert list(process.gpu_memory) == [2 * GIB] * 3
    assert list(process.sm_utilization) == [70.0, 40.0, None]
    assert list(process.cpu_percent) == [100.0, 101.0, 102.0]
    assert list(process.host_memory) == [GIB, 2 * GIB, 3 * GIB]


def test_a_process_memory_change_is_dated_and_unknown_memory_staying_unknown_is_no_change() -> None:
    history = History()
    for t, memory in [(1.0, None), (2.0, None), (3.0, GIB), (4.0, GIB), (5.0, None), (6.0, None)]:
        history.add(snapshot(t, GpuSample(index=0, processes=(process(3, 0, memory),))))
        if t == 2.0:
            assert history.process((3, 100.0)).last_memory_change is None
        if t == 4.0:
            assert history.process((3, 100.0)).last_memory_change == 3.0
    series = history.process((3, 100.0))
    assert series.last_memory_change == 5.0
    assert list(series.gpu_memory) == [None, None, GIB, GIB, None, None]
    assert series.gpu_memory[2] == GIB and isinstance(series.gpu_memory[2], int)
    assert series.gpu_memory[-2:] == [None, None]


def test_a_series_read_from_the_newest_gives_none_for_what_was_not_known() -> None:
    history = History()
    for k, temperature in enumerate([40.0, None, 42.5]):
        history.add(snapshot(float(k), GpuSample(index=0, memory_used=k * GIB, temperature=temperature)))
    gpu = history.gpu(0)
    assert list(reversed(gpu.temperature)) == [42.5, None, 40.0]
    assert list(reversed(gpu.memory_used)) == [2 * GIB, GIB, 0]
    assert gpu.memory_used[-1] == 2 * GIB and isinstance(gpu.memory_used[-1], int)
    assert gpu.temperature[1:] == [None, 42.5]


def test_an_hour_of_a_gpu_takes_about_eight_bytes_a_value() -> None:
    import tracemalloc

    history = History(gpu_maxlen=3600)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for k in range(3600):
            gpu = GpuSample(index=0, memory_used=GIB + k, temperature=40.0 + k / 7, utilization_gpu=k / 36,
                            power_draw=300.0 + k / 3)
            history.add(snapshot(1000.0 + k, gpu))
        used = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    values = 3600 * 6  # the history's timestamps and the GPU's five series
    # Arrays of floats: 8 bytes a value and their spare room; a deque of Python floats took 40.
    assert used < values * 12, used
    assert list(history.gpu(0).memory_used)[-1] == GIB + 3599
