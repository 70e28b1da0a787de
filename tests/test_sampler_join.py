"""Host facts joined to GPUs that read as last tick: a process's CPU % that moves shows on that tick, though
the source gives the very same GPU objects (an idle GPU's), and what did not move is the same object."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from gputop.core.model import GpuSample, HostSample, ProcessSample
from gputop.core.sampler import Sampler


class Unchanging:
    """A GPU source whose every sample is the same GPU objects, listing the PID it is given."""

    name = "test"
    simulated = False
    driver_version = "550.1"
    cuda_driver_version = "12.4"

    def __init__(self, pid: int) -> None:
        process = ProcessSample(pid=pid, gpu_index=0, type="C", gpu_memory=1 << 30)
        self.gpus = (GpuSample(index=0, name="Fake GPU", processes=(process,)), GpuSample(index=1, name="Fake GPU"))

    def open(self) -> None: ...

    def close(self) -> None: ...

    def sample(self) -> tuple[GpuSample, ...]:
        return self.gpus

    def sample_host(self) -> HostSample | None:
        return HostSample()


@pytest.fixture
def spinning() -> Iterator[subprocess.Popen[bytes]]:
    child = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        yield child
    finally:
        child.kill()
        child.wait()


def cpu_of(sampler: Sampler) -> float | None:
    time.sleep(0.3)
    return sampler.sample().gpus[0].processes[0].cpu_percent


def test_a_process_cpu_that_moves_shows_on_that_tick_while_the_gpus_read_as_last_tick(
    spinning: subprocess.Popen[bytes],
) -> None:
    source = Unchanging(spinning.pid)
    sampler = Sampler(source)  # type: ignore[arg-type]
    sampler.sample()
    busy = cpu_of(sampler)
    assert busy is not None and busy > 20.0
    os.kill(spinning.pid, signal.SIGSTOP)
    try:
        cpu_of(sampler)  # the interval the stop fell in
        time.sleep(0.3)
        stopped = sampler.sample()
        time.sleep(0.3)
        again = sampler.sample()
    finally:
        os.kill(spinning.pid, signal.SIGCONT)
    assert [snapshot.gpus[0].processes[0].cpu_percent for snapshot in (stopped, again)] == [0.0, 0.0]
    assert again.gpus[0].processes[0].pid == spinning.pid and again.gpus[0].processes[0].visible
    # Nothing moved between the last two ticks: the GPUs joined then, the same objects.
    assert again.gpus[0] is stopped.gpus[0] and again.gpus[1] is stopped.gpus[1]
