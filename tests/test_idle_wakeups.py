"""An idle monitor stays idle: how many times the process's threads wake for one tick of the sampler.

Each wake-up of a sleeping thread costs CPU before any work (about 100 us on a virtual machine), so
the GPUs' threads hand the work on without waking a thread per GPU. Counted by the kernel: each
thread's voluntary context switches (a wait that ended, or a turn at the interpreter's lock)."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator

import pytest
from fakenvml import FakeNvml, GiB, Scenario

from gputop.core.model import GpuSample, HostSample, Snapshot
from gputop.core.sampler import Sampler, SamplerThread
from gputop.core.sources import nvml
from gputop.core.sources.nvml import NvmlSource

GPUS = 8
TICKS = 20
INTERVAL_S = 0.05


def wake_ups() -> int:
    """Voluntary context switches of every thread of this process so far."""
    total = 0
    for tid in os.listdir("/proc/self/task"):
        with contextlib.suppress(OSError), open(f"/proc/self/task/{tid}/status") as status:
            total += sum(int(line.split()[1]) for line in status if line.startswith("voluntary_ctxt_switches"))
    return total


@pytest.fixture
def source(fake_nvml: FakeNvml, monkeypatch: pytest.MonkeyPatch) -> Iterator[NvmlSource]:
    # A turn long enough for a loaded machine: every GPU answers in its turn.
    monkeypatch.setattr(nvml, "TURN_S", 1.0)
    scenario = Scenario()
    for index in range(GPUS):
        scenario.gpu(util_gpu=10 + index, memory_used=(index + 1) * GiB)
        scenario.process(gpu=index, pid=os.getpid(), used=GiB)
    fake_nvml.write(scenario)
    fake_nvml.load()
    opened = NvmlSource()
    opened.open()
    yield opened
    opened.close()


def test_a_tick_of_eight_gpus_wakes_the_process_a_few_times_not_once_per_gpu(source: NvmlSource) -> None:
    ticks: list[int] = []  # the process's wake-ups when each snapshot arrived
    arrived = threading.Condition()

    def on_snapshot(snapshot: Snapshot) -> None:
        assert len(snapshot.gpus) == GPUS and all(gpu.answering for gpu in snapshot.gpus)
        with arrived:
            ticks.append(wake_ups())
            arrived.notify_all()

    thread = SamplerThread(Sampler(source), INTERVAL_S, on_snapshot, lambda error: None)
    thread.start()
    try:
        with arrived:
            assert arrived.wait_for(lambda: len(ticks) > TICKS + 2, timeout=30)
    finally:
        thread.stop()
        thread.join(2)
    # From the third tick (the GPUs are found and read in turn by then), this thread's waits for the
    # snapshots included: the sampler's waits for the tick and for the GPUs, the one thread that reads
    # the GPUs, counts them and takes the driver's XID events in turn, and each thread's turns at the
    # interpreter's lock (7 to 8 in all here, with the XID thread that woke 5 times a second). A thread
    # woken per GPU, and one more that only waits for them, made 34.
    per_tick = (ticks[TICKS + 2] - ticks[2]) / TICKS
    assert per_tick <= 12, f"{per_tick:.1f} wake-ups a tick"


class HostOnThisThread:
    """A host reader that notes which thread read the host, and how often."""

    def __init__(self) -> None:
        self.threads: list[int] = []

    def sample(self) -> HostSample:
        self.threads.append(threading.get_ident())
        return HostSample(cpu_percent=12.0)


def test_the_host_is_read_once_a_tick_on_the_sampling_thread_through_a_source_that_extends_sample(
    source: NvmlSource,
) -> None:
    class Extended(NvmlSource):  # as a source that notes each tick before reading the GPUs does
        ticks = 0

        def sample(self) -> tuple[GpuSample, ...]:
            self.ticks += 1
            return super().sample()

    extended = Extended()
    extended.open()
    host = HostOnThisThread()
    try:
        sampler = Sampler(extended, host_reader=host)  # type: ignore[arg-type]
        snapshots = [sampler.sample() for _ in range(3)]
    finally:
        extended.close()
    assert extended.ticks == 3
    assert host.threads == [threading.get_ident()] * 3
    assert [snapshot.host.cpu_percent for snapshot in snapshots] == [12.0] * 3
    assert all(len(snapshot.gpus) == GPUS for snapshot in snapshots)
