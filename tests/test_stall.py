"""A driver that hangs, through the real pynvml and the fake libnvidia-ml.so.1: the sampler never freezes."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fakenvml import INIT_FUNCTIONS, NO_SUCH_PID, FakeNvml, GiB, Scenario

from gputop.core.model import Snapshot
from gputop.core.sampler import Sampler, SamplerThread
from gputop.core.sources import nvml
from gputop.core.sources.base import SourceUnavailable
from gputop.core.sources.nvml import CLOSE_WAIT_S, NvmlSource
from gputop.core.sources.nvml_device import NvmlDevice

DEADLINE_S = 0.4
# A hung call comes back after this long: giving up on it means answering well before.
HUNG_S = 1.5
INTERVAL_S = 0.1


def machine(util: int = 10) -> Scenario:
    return (
        Scenario()
        .gpu(util_gpu=util, memory_used=3 * GiB)
        .gpu(util_gpu=util + 1, memory_used=5 * GiB)
        .process(gpu=1, pid=NO_SUCH_PID, used=2 * GiB)
    )


@pytest.fixture
def source(fake_nvml: FakeNvml) -> Iterator[NvmlSource]:
    fake_nvml.write(machine())
    fake_nvml.load()
    nvml = NvmlSource(deadline_s=DEADLINE_S)
    nvml.open()
    yield nvml
    nvml.close()


def test_a_hung_gpu_is_listed_as_not_answering_and_the_other_goes_on(
    source: NvmlSource, fake_nvml: FakeNvml
) -> None:
    source.sample()
    fake_nvml.write(machine(util=50).stall(1, HUNG_S, "nvmlDeviceGetMemoryInfo"))

    started = time.monotonic()
    first, second = source.sample()
    took = time.monotonic() - started

    assert DEADLINE_S <= took < HUNG_S - 0.4
    assert first.utilization_gpu == 50.0 and first.answering
    assert not second.answering
    assert second.last_error == f"nvmlDeviceGetMemoryInfo_v2 did not answer within {DEADLINE_S:g}s"
    assert second.not_answering_since is not None
    assert abs(second.not_answering_since - (time.time() - took)) < 0.2
    assert (second.name, second.memory_used, second.utilization_gpu, second.temperature) == (
        "NVIDIA H100 80GB HBM3", None, None, None
    )
    # Its processes as last seen, marked stale.
    assert [(p.pid, p.gpu_memory, p.stale) for p in second.processes] == [(NO_SUCH_PID, 2 * GiB, True)]
    assert not second.lost


def test_a_hung_gpu_is_not_waited_for_again_nor_asked_again(source: NvmlSource, fake_nvml: FakeNvml) -> None:
    source.sample()
    fake_nvml.write(machine().stall(1, HUNG_S, "nvmlDeviceGetMemoryInfo"))
    since = source.sample()[1].not_answering_since
    fake_nvml.reset_counts()

    for _ in range(3):
        started = time.monotonic()
        first, second = source.sample()
        assert time.monotonic() - started < DEADLINE_S  # not the deadline again
        assert first.answering and not second.answering
        assert second.not_answering_since == since
    # GPU 0's calls only: the hung GPU is not asked again while its call is out.
    assert fake_nvml.call_count("nvmlDeviceGetMemoryInfo_v2") == 3
    assert fake_nvml.call_count("nvmlDeviceGetUtilizationRates") == 3


def test_a_gpu_that_answers_again_recovers_by_itself(source: NvmlSource, fake_nvml: FakeNvml) -> None:
    fake_nvml.write(machine(util=70).stall(0, 0.8, "*"))
    assert not source.sample()[0].answering

    deadline = time.monotonic() + 5
    while not source.sample()[0].answering:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    first = source.sample()[0]
    assert (first.answering, first.not_answering_since, first.last_error) == (True, None, None)
    assert first.utilization_gpu == 70.0


def test_a_slow_call_is_waited_for_without_a_mark(source: NvmlSource, fake_nvml: FakeNvml) -> None:
    fake_nvml.write(machine(util=33).delay("nvmlDeviceGetMemoryInfo", 0.3))

    gpus = source.sample()

    assert [(gpu.answering, gpu.utilization_gpu, gpu.memory_used) for gpu in gpus] == [
        (True, 33.0, 3 * GiB),
        (True, 34.0, 5 * GiB),
    ]


def test_gpus_are_read_in_parallel(source: NvmlSource, fake_nvml: FakeNvml) -> None:
    # Both GPUs' slow calls are asleep in the driver at the same moment: seen by the fake
    # itself, not by the wall clock, which a loaded machine stretches.
    fake_nvml.write(machine().delay("nvmlDeviceGetMemoryInfo", 0.3))
    sampling = threading.Thread(target=source.sample)
    most_asleep = 0

    sampling.start()
    while sampling.is_alive():
        most_asleep = max(most_asleep, fake_nvml.sleeping())
        time.sleep(0.002)
    sampling.join()

    assert most_asleep == 2


class _Reads:
    """Which NvmlDevice read ran on which thread, and when (monotonic start, end)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.log: list[tuple[str, int, str, float, float]] = []
        self._inside = threading.local()
        for name in ("sample", "pcie", "sample_with_pcie"):
            monkeypatch.setattr(NvmlDevice, name, self._wrap(name, getattr(NvmlDevice, name)))

    def _wrap(self, name: str, read: Callable[..., Any]) -> Callable[..., Any]:
        def recorded(device: NvmlDevice) -> Any:
            if getattr(self._inside, "reading", False):
                return read(device)  # sample_with_pcie's own sample() and pcie()
            self._inside.reading = True
            started = time.monotonic()
            try:
                return read(device)
            finally:
                self._inside.reading = False
                self.log.append((name, device.index, threading.current_thread().name, started, time.monotonic()))

        return recorded

    def of(self, source: NvmlSource) -> list[tuple[str, int, str, float, float]]:
        """The reads of one sample, by start."""
        self.log.clear()
        source.sample()
        return sorted(self.log, key=lambda read: read[3])


def _read_in_turn(source: NvmlSource, monkeypatch: pytest.MonkeyPatch) -> _Reads:
    """A short turn, and two samples: both GPUs answered in their turn, and are read on the shared thread now."""
    monkeypatch.setattr(nvml, "TURN_S", 0.05)
    reads = _Reads(monkeypatch)
    reads.of(source)
    reads.of(source)
    return reads


def test_gpus_that_answer_in_their_turn_are_read_one_after_another_on_one_shared_thread(
    source: NvmlSource, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A turn long enough for a loaded machine: here nothing is slow.
    monkeypatch.setattr(nvml, "TURN_S", 1.0)
    reads = _Reads(monkeypatch)
    source.sample()  # the first: the GPUs are found as they are counted, and all read at once
    # In turn: GPU 1 once GPU 0 has answered, still with the PCIe counters on their own thread.
    second = reads.of(source)
    assert sorted(read[:3] for read in second) == [
        ("pcie", 0, "gputop-gpu0-pcie"), ("pcie", 1, "gputop-gpu1-pcie"),
        ("sample", 0, "gputop-gpu0"), ("sample", 1, "gputop-gpu1"),
    ]
    assert min(read[3] for read in second if read[1] == 1) >= max(read[4] for read in second if read[1] == 0)
    # Having answered in turn, the GPUs are read with their PCIe counters, one after another on the
    # one thread they share in turn (no thread woken per GPU).
    for _ in range(2):
        read = reads.of(source)
        assert [one[:3] for one in read] == [
            ("sample_with_pcie", 0, "gputop-gpus"), ("sample_with_pcie", 1, "gputop-gpus"),
        ]
        # GPU 1's read started once GPU 0's had ended.
        assert read[1][3] >= read[0][4]


def test_a_gpu_slower_than_its_turn_sets_the_rest_going_and_gets_its_own_threads_back(
    source: NvmlSource, fake_nvml: FakeNvml, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads = _read_in_turn(source, monkeypatch)
    fake_nvml.write(machine().delay("nvmlDeviceGetMemoryInfo", 0.3))
    slow = reads.of(source)
    assert slow[0][:3] == ("sample_with_pcie", 0, "gputop-gpus")
    # GPU 1 did not wait for GPU 0's 0.3 s: it started while GPU 0 was still being read, on its own
    # threads, its PCIe counters on theirs, as when a GPU is not read in turn.
    assert sorted(read[:3] for read in slow[1:]) == [("pcie", 1, "gputop-gpu1-pcie"), ("sample", 1, "gputop-gpu1")]
    assert all(read[3] < slow[0][4] for read in slow[1:])
    # Slower than its turn, GPU 0 has its own two threads again.
    assert sorted(read[:3] for read in reads.of(source) if read[1] == 0) == [
        ("pcie", 0, "gputop-gpu0-pcie"), ("sample", 0, "gputop-gpu0"),
    ]


def test_a_gpu_hung_in_its_turn_keeps_the_shared_thread_and_the_others_are_read_on_another(
    source: NvmlSource, fake_nvml: FakeNvml, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads = _read_in_turn(source, monkeypatch)
    fake_nvml.write(machine(util=40).stall(0, HUNG_S, "nvmlDeviceGetMemoryInfo"))
    first, second = source.sample()
    assert not first.answering and first.last_error == (
        f"nvmlDeviceGetMemoryInfo_v2 did not answer within {DEADLINE_S:g}s"
    )
    assert second.answering and second.utilization_gpu == 41.0
    stuck = {thread.ident for thread in threading.enumerate() if thread.name == "gputop-gpus"}
    # GPU 0 is not asked again while its call is out; GPU 1 goes on, at once, in its turn on a thread
    # that is not the one GPU 0 is stuck on.
    started = time.monotonic()
    read = reads.of(source)
    assert time.monotonic() - started < DEADLINE_S
    assert [one[:2] for one in read] == [("sample_with_pcie", 1)]
    assert read[0][2] == "gputop-gpus"
    assert len(stuck) == 1
    assert {thread.ident for thread in threading.enumerate() if thread.name == "gputop-gpus"} > stuck
    first, second = source.sample()
    assert not first.answering and first.not_answering_since is not None
    assert second.answering and second.utilization_gpu == 41.0
    # Once the hung call has come back, GPU 0 answers again.
    time.sleep(HUNG_S)
    fake_nvml.write(machine(util=70))
    assert [gpu.utilization_gpu for gpu in source.sample()] == [70.0, 71.0]


def test_the_sampler_thread_keeps_the_interval_through_a_stall(
    source: NvmlSource, fake_nvml: FakeNvml
) -> None:
    snapshots: list[Snapshot] = []
    arrived = threading.Condition()

    def on_snapshot(snapshot: Snapshot) -> None:
        with arrived:
            snapshots.append(snapshot)
            arrived.notify_all()

    thread = SamplerThread(Sampler(source), INTERVAL_S, on_snapshot, lambda error: None)
    fake_nvml.write(machine().stall(1, 3.0, "nvmlDeviceGetUtilizationRates"))
    stalled = time.monotonic()
    thread.start()
    try:
        with arrived:
            arrived.wait_for(lambda: len(snapshots) >= 12, timeout=10)
    finally:
        thread.stop()
    first_marked = next(s for s in snapshots if not s.gpus[1].answering)
    # Marked once the deadline is out, long before the hung call comes back (3 s).
    assert first_marked.timestamp - time.time() + time.monotonic() - stalled < DEADLINE_S + INTERVAL_S + 0.5
    # After the first tick, ticks come at the interval (waiting out the deadline again would take
    # longer than it) and GPU 0 and the host are fresh in each.
    gaps = [b.timestamp - a.timestamp for a, b in zip(snapshots[1:], snapshots[2:], strict=False)]
    assert max(gaps) < DEADLINE_S
    assert all(s.gpus[0].answering and not s.gpus[1].answering for s in snapshots[1:])
    assert len({s.host.memory_used for s in snapshots} | {s.timestamp for s in snapshots}) > 1


def test_quitting_during_a_stall_is_quick(source: NvmlSource, fake_nvml: FakeNvml) -> None:
    fake_nvml.write(machine().stall(None, 2.0, "nvmlDeviceGetMemoryInfo"))
    source.sample()

    started = time.monotonic()
    source.close()

    assert time.monotonic() - started < 1.0  # the stall has 2 s to run


def test_a_hung_nvml_shutdown_holds_closing_no_longer_than_its_wait(source: NvmlSource, fake_nvml: FakeNvml) -> None:
    source.sample()
    fake_nvml.write(machine().stall(None, 5.0, "nvmlShutdown"))

    started = time.monotonic()
    source.close()

    assert time.monotonic() - started < CLOSE_WAIT_S + 1.0  # the shutdown hangs for 5 s


def test_a_sample_at_once_never_asks_a_driver_that_may_hang(source: NvmlSource, fake_nvml: FakeNvml) -> None:
    sampler = Sampler(source)
    fake_nvml.reset_counts()

    assert sampler.sample_at_once() is None
    assert fake_nvml.call_count("nvmlDeviceGetCount_v2") == 0
    first = sampler.first_look()
    counted = fake_nvml.call_count("nvmlDeviceGetCount_v2")
    joined = sampler.sample_at_once()  # the first look's readings, with the host's facts

    assert joined is not None and [gpu.memory_used for gpu in joined.gpus] == [3 * GiB, 5 * GiB]
    assert [gpu.memory_used for gpu in first.gpus] == [3 * GiB, 5 * GiB]
    assert fake_nvml.call_count("nvmlDeviceGetCount_v2") == counted == 1


def test_gpus_that_cannot_be_counted_at_start_are_not_zero_gpus(fake_nvml: FakeNvml) -> None:
    fake_nvml.write(machine().delay("nvmlDeviceGetCount", 5.0))
    fake_nvml.load()
    nvml = NvmlSource(deadline_s=DEADLINE_S)
    nvml.open()
    fake_nvml.reset_counts()
    try:
        for _ in range(2):  # the first sample waits out the deadline, the next one asks nothing
            with pytest.raises(SourceUnavailable) as raised:
                nvml.sample()
            assert str(raised.value) == (
                f"NVML is not available: nvmlDeviceGetCount did not answer within {DEADLINE_S:g}s"
                " — run `gputop doctor` to see why, or `gputop --demo` to try gputop without a GPU"
            )
        assert fake_nvml.call_count("nvmlDeviceGetCount_v2") == 1
    finally:
        nvml.close()


def test_a_hung_nvml_init_gives_up_with_one_line(fake_nvml: FakeNvml) -> None:
    fake_nvml.write(machine().delay(INIT_FUNCTIONS, HUNG_S))
    fake_nvml.load()

    started = time.monotonic()
    with pytest.raises(SourceUnavailable) as raised:
        NvmlSource(deadline_s=DEADLINE_S).open()

    assert time.monotonic() - started < HUNG_S - 0.4
    assert str(raised.value) == (
        f"NVML is not available: nvmlInit did not answer within {DEADLINE_S:g}s"
        " — run `gputop doctor` to see why, or `gputop --demo` to try gputop without a GPU"
    )


def test_a_slow_nvml_init_is_told_and_waited_for(fake_nvml: FakeNvml) -> None:
    fake_nvml.write(machine().delay(INIT_FUNCTIONS, 0.6))
    fake_nvml.load()
    told: list[float] = []
    source = NvmlSource(deadline_s=0.2, on_init_slow=told.append)

    source.open()
    try:
        assert told == [0.2]
        assert [gpu.memory_used for gpu in source.sample()] == [3 * GiB, 5 * GiB]
    finally:
        source.close()
