"""The diagnoses' NVML reads, through the real nvidia-ml-py against the fake libnvidia-ml.so.1."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from fakenvml import NO_SUCH_PID, FakeNvml, Scenario
from fakenvml.scenario import GiB

from gputop.core.analysis.foresight import Watcher
from gputop.core.model import RemappedRows, XidEvent
from gputop.core.sampler import Sampler
from gputop.core.settings import Thresholds
from gputop.core.sources.nvml import NvmlSource


@pytest.fixture
def source(fake_nvml: FakeNvml) -> Iterator[NvmlSource]:
    fake_nvml.write(Scenario().gpu())
    fake_nvml.load()
    nvml = NvmlSource()
    nvml.open()
    yield nvml
    nvml.close()


def test_clock_event_reasons_max_clocks_ecc_and_remapped_rows(fake_nvml: FakeNvml, source: NvmlSource) -> None:
    fake_nvml.write(
        Scenario()
        .gpu(clocks_event_reasons=0x4 | 0x40, ecc_volatile=2, ecc_aggregate=5, remap_uncorrected=3, remap_pending=1)
        .gpu(clocks_event_reasons=None, ecc_volatile=None, ecc_aggregate=None, remap_corrected=None, retired_pending=1)
    )
    first, second = source.sample()
    assert (first.clock_sm_max, first.clock_memory_max) == (1980, 2619)
    assert first.clock_event_reasons == ("sw_power_cap", "hw_thermal")
    assert (first.health.ecc_uncorrected_volatile, first.health.ecc_uncorrected_aggregate) == (2, 5)
    assert first.health.remapped_rows == RemappedRows(corrected=0, uncorrected=3, pending=True, failure=False)
    assert first.health.retired_pages_pending is None
    # A GPU that retires pages instead of remapping rows, without ECC or reasons: None, never 0.
    assert second.clock_event_reasons is None
    assert (second.health.ecc_uncorrected_volatile, second.health.remapped_rows) == (None, None)
    assert second.health.retired_pages_pending is True


def test_an_older_driver_answers_through_the_throttle_reasons_name(fake_nvml: FakeNvml) -> None:
    fake_nvml.write(Scenario().gpu(clocks_event_reasons=0x8))
    fake_nvml.load(omit=("nvmlDeviceGetCurrentClocksEventReasons",))
    source = NvmlSource()
    source.open()
    try:
        fake_nvml.reset_counts()
        assert source.sample()[0].clock_event_reasons == ("hw_slowdown",)
        assert fake_nvml.call_count("nvmlDeviceGetCurrentClocksThrottleReasons") == 1
    finally:
        source.close()


def test_xid_events_are_taken_from_the_driver_and_join_the_next_sample(
    fake_nvml: FakeNvml, source: NvmlSource
) -> None:
    assert source.sample()[0].health.xid_events == ()
    fake_nvml.write(Scenario().gpu().xid(0, 79))
    before = time.time()
    deadline = time.monotonic() + 10.0
    events: tuple[XidEvent, ...] | None = ()
    while not events and time.monotonic() < deadline:
        events = source.sample()[0].health.xid_events
        time.sleep(0.05)
    assert events is not None and [event.code for event in events] == [79]
    assert before <= events[0].time <= time.time()
    # Delivered once: later samples still list it, and it is not repeated.
    fake_nvml.write(Scenario().gpu().xid(0, 79).xid(0, 13))
    deadline = time.monotonic() + 10.0
    while len(events or ()) < 2 and time.monotonic() < deadline:
        events = source.sample()[0].health.xid_events
        time.sleep(0.05)
    assert [event.code for event in events or ()] == [79, 13]


def test_a_gpu_that_cannot_register_for_events_reports_none(fake_nvml: FakeNvml) -> None:
    fake_nvml.write(Scenario().gpu().gpu().error("nvmlDeviceRegisterEvents", "NOT_SUPPORTED", gpu=1))
    fake_nvml.load()
    source = NvmlSource()
    source.open()
    try:
        first, second = source.sample()
        # The GPUs are registered beside the first tick's reads: none seen yet, on either.
        assert (first.health.xid_events, second.health.xid_events) == ((), ())
        deadline = time.monotonic() + 5.0
        while second.health.xid_events is not None and time.monotonic() < deadline:  # a tick after it
            time.sleep(0.05)
            first, second = source.sample()
        assert (first.health.xid_events, second.health.xid_events) == ((), None)
    finally:
        source.close()


def test_an_idle_hog_through_nvml_is_idle_raises_its_alert_and_clears_when_it_runs(
    fake_nvml: FakeNvml, source: NvmlSource
) -> None:
    now = [1000.0]
    sampler = Sampler(source, clock=lambda: now[0])
    watcher = Watcher(Thresholds(idle_after_s=20.0))
    fake_nvml.write(Scenario().gpu(memory_used=40 * GiB).process(gpu=0, pid=NO_SUCH_PID + 1, used=30 * GiB))
    kinds = []
    idle_seconds = []
    for _ in range(4):
        foresight = watcher.update(sampler.sample())
        idle_seconds.append(foresight.diagnoses.processes[(NO_SUCH_PID + 1, None)].idle_seconds)
        kinds += [(e.kind, e.cleared) for e in foresight.events]
        now[0] += 10.0
    assert idle_seconds == [0.0, 10.0, 20.0, 30.0]
    assert kinds == [("idle", False)]
    # The unattributed 10 GiB is above max(1 GiB, 4 GiB): shown.
    assert foresight.diagnoses.gpus[0].unattributed.memory == 10 * GiB
    assert foresight.diagnoses.gpus[0].unattributed.shown is True
    fake_nvml.write(Scenario().gpu(memory_used=40 * GiB).process(gpu=0, pid=NO_SUCH_PID + 1, used=30 * GiB, sm=40))
    foresight = watcher.update(sampler.sample())
    assert foresight.diagnoses.processes[(NO_SUCH_PID + 1, None)].idle_seconds == 0.0
    assert [(e.kind, e.cleared) for e in foresight.events] == [("idle", True)]


def test_without_per_process_samples_nvml_idleness_is_unknown(fake_nvml: FakeNvml, source: NvmlSource) -> None:
    fake_nvml.write(
        Scenario()
        .gpu()
        .process(gpu=0, pid=NO_SUCH_PID + 2, used=30 * GiB)
        .error("nvmlDeviceGetProcessUtilization", "NOT_SUPPORTED")
    )
    watcher = Watcher(Thresholds(idle_after_s=1.0))
    sampler = Sampler(source)
    for _ in range(3):
        foresight = watcher.update(sampler.sample())
        time.sleep(0.6)
    assert foresight.diagnoses.processes[(NO_SUCH_PID + 2, None)].idle_seconds is None
    assert [e for e in watcher.monitor.log if e.kind == "idle"] == []


def test_an_event_wait_that_fails_is_asked_again_once_a_tick_never_in_a_spin(fake_nvml: FakeNvml) -> None:
    fake_nvml.write(Scenario().gpu().error("nvmlEventSetWait_v2", "UNKNOWN"))
    fake_nvml.load()
    source = NvmlSource()
    source.open()
    try:
        source.sample()  # the first sample counts the GPUs and registers them for events, beside its reads
        deadline = time.monotonic() + 10.0
        # That first poll's wait, failed, is over (on a loaded machine it may end after the sample returned).
        while fake_nvml.call_count("nvmlEventSetWait_v2") < 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.1)
        fake_nvml.reset_counts()
        for _ in range(3):
            source.sample()
        while fake_nvml.call_count("nvmlEventSetWait_v2") < 3 and time.monotonic() < deadline:
            time.sleep(0.01)  # the last tick's poll may end after its sample returned
        time.sleep(0.5)  # between ticks nothing asks
        waits = fake_nvml.call_count("nvmlEventSetWait_v2")
    finally:
        source.close()
    # Asked again each tick (the events are not given up on), and once: a failure does not spin.
    assert waits == 3
