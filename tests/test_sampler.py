"""The sampler: GPU processes joined with host facts, one tick after another."""

from __future__ import annotations

import subprocess
import threading
import time

import psutil
import pytest
from fakenvml import NO_SUCH_PID

from gputop.core.host.procfs import MIN_SPAN_S
from gputop.core.host.signals import SignalResult
from gputop.core.model import GpuSample, HostSample, MigSample, ProcessIdentity, ProcessSample, Snapshot
from gputop.core.sampler import Sampler, SamplerThread, clamp_interval

MISSING_PID = NO_SUCH_PID


class ListedProcesses:
    """A GPU source that lists the PIDs it is given, like NVML would."""

    name = "test"
    simulated = False
    driver_version = "550.1"
    cuda_driver_version = "12.4"

    def __init__(self, pids: list[int], mig_pids: list[int] | None = None, delay_s: float = 0.0) -> None:
        self.pids = pids
        self.mig_pids = mig_pids or []
        self.delay_s = delay_s
        self.running = 0
        self.most_running = 0
        self.calls = 0

    def open(self) -> None: ...

    def close(self) -> None: ...

    def sample(self) -> tuple[GpuSample, ...]:
        self.running += 1
        self.most_running = max(self.most_running, self.running)
        self.calls += 1
        time.sleep(self.delay_s)
        self.running -= 1
        mig = MigSample(
            index=0,
            processes=tuple(
                ProcessSample(pid=p, gpu_index=0, type="C", gpu_memory=1 << 30, mig_index=0) for p in self.mig_pids
            ),
        )
        return (
            GpuSample(
                index=0,
                name="Fake GPU",
                mig_devices=(mig,) if self.mig_pids else (),
                processes=tuple(ProcessSample(pid=pid, gpu_index=0, type="C", gpu_memory=2 << 30) for pid in self.pids),
            ),
        )

    def sample_host(self) -> HostSample | None:
        return HostSample(cpu_percent=1.0)

    def signal(self, identity: ProcessIdentity, signal_number: int) -> SignalResult | None:
        return None


def test_gpu_processes_are_joined_with_host_facts(sleeper: subprocess.Popen[bytes]) -> None:
    other = subprocess.Popen(["sleep", "601"])
    try:
        source = ListedProcesses([sleeper.pid, MISSING_PID], mig_pids=[other.pid])
        snapshot = Sampler(source, clock=lambda: 1000.0).sample()
    finally:
        other.kill()
        other.wait()
    assert snapshot.timestamp == 1000.0
    assert snapshot.driver_version == "550.1" and snapshot.cuda_driver_version == "12.4"
    assert snapshot.host == HostSample(cpu_percent=1.0)
    by_pid = {p.pid: p for p in snapshot.processes()}
    visible = by_pid[sleeper.pid]
    assert (visible.command, visible.visible, visible.gpu_memory) == ("sleep 600", True, 2 << 30)
    assert visible.started == psutil.Process(sleeper.pid).create_time()
    in_mig = by_pid[other.pid]
    assert (in_mig.command, in_mig.mig_index, in_mig.gpu_memory) == ("sleep 601", 0, 1 << 30)
    # Listed by the GPU but not visible here (another PID namespace): kept, with its GPU memory.
    hidden = by_pid[MISSING_PID]
    assert (hidden.visible, hidden.gpu_memory, hidden.user, hidden.started) == (False, 2 << 30, None, None)


def test_the_first_look_has_no_host_facts_and_the_next_sample_completes_the_same_readings(
    sleeper: subprocess.Popen[bytes],
) -> None:
    source = ListedProcesses([sleeper.pid])
    sampler = Sampler(source, clock=lambda: 1000.0)
    first = sampler.first_look()
    process = next(first.processes())
    assert (process.pid, process.gpu_memory, process.user, process.command, process.visible) == (
        sleeper.pid, 2 << 30, None, None, False
    )
    assert first.host == HostSample() and first.driver_version == "550.1"
    source.pids = []  # what the GPU lists a moment later
    joined = sampler.sample()
    assert source.calls == 1, "the GPUs were read again instead of completing the first look"
    assert [(p.pid, p.command, p.visible) for p in joined.processes()] == [(sleeper.pid, "sleep 600", True)]
    assert joined.host == HostSample(cpu_percent=1.0)
    assert list(sampler.sample().processes()) == [] and source.calls == 2


class ChangingMemory(ListedProcesses):
    """Lists one process whose GPU memory (and then its type) the test changes between ticks."""

    def __init__(self, pid: int) -> None:
        super().__init__([pid])
        self.memory = 1 << 30
        self.kind = "C"

    def sample(self) -> tuple[GpuSample, ...]:
        self.calls += 1
        return (
            GpuSample(
                index=0,
                processes=(ProcessSample(pid=self.pids[0], gpu_index=0, type=self.kind, gpu_memory=self.memory),),
            ),
        )


def test_what_nvml_says_of_an_idle_process_shows_every_tick(sleeper: subprocess.Popen[bytes]) -> None:
    # The host facts of a sleeping process stay the same tick after tick: its joined row may be kept,
    # but never when what the GPU says of it changed.
    source = ChangingMemory(sleeper.pid)
    sampler = Sampler(source)
    seen = []
    for memory, kind in [(1 << 30, "C"), (1 << 30, "C"), (1 << 30, "C"), (3 << 30, "C"), (3 << 30, "C+G")]:
        source.memory, source.kind = memory, kind
        process = next(sampler.sample().processes())
        time.sleep(MIN_SPAN_S)  # the ticks far enough apart for a CPU figure
        seen.append((process.gpu_memory, process.type, process.command, process.cpu_percent))
    assert seen == [
        (1 << 30, "C", "sleep 600", None),
        (1 << 30, "C", "sleep 600", 0.0),
        (1 << 30, "C", "sleep 600", 0.0),
        (3 << 30, "C", "sleep 600", 0.0),
        (3 << 30, "C+G", "sleep 600", 0.0),
    ]


def test_a_slow_sample_delays_the_next_one_instead_of_overlapping_it() -> None:
    source = ListedProcesses([], delay_s=0.15)
    snapshots: list[Snapshot] = []
    done = threading.Event()

    def on_snapshot(snapshot: Snapshot) -> None:
        snapshots.append(snapshot)
        if len(snapshots) == 4:
            done.set()

    thread = SamplerThread(Sampler(source), 0.1, on_snapshot, on_error=lambda error: None)
    thread.start()
    try:
        assert done.wait(10)
    finally:
        thread.stop()
        thread.join(5)
    assert not thread.is_alive()
    assert source.most_running == 1


def test_an_error_in_one_sample_is_reported_and_sampling_goes_on() -> None:
    source = ListedProcesses([])
    failures: list[BaseException] = []
    successes = threading.Event()
    original = source.sample

    def flaky() -> tuple[GpuSample, ...]:
        if source.calls == 0:
            source.calls += 1
            raise RuntimeError("driver hiccup")
        return original()

    source.sample = flaky  # type: ignore[method-assign]
    thread = SamplerThread(Sampler(source), 0.1, lambda snapshot: successes.set(), failures.append)
    thread.start()
    try:
        assert successes.wait(10)
    finally:
        thread.stop()
        thread.join(5)
    assert [str(error) for error in failures] == ["driver hiccup"]


@pytest.mark.parametrize(("asked", "used"), [(0.01, 0.1), (0.5, 0.5), (1e9, 3600.0)])
def test_intervals_are_kept_within_what_the_sampler_supports(asked: float, used: float) -> None:
    assert clamp_interval(asked) == used
