"""Answers a driver unlike the tests' usual fake must not turn into false ones (issue 28), through the
real nvidia-ml-py against the fake libnvidia-ml.so.1."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from fakenvml import NO_SUCH_PID, NOT_AVAILABLE, FakeNvml, GiB, Scenario
from prometheus_client.exposition import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from gputop.core.analysis.diagnosis.problems import problem_counts
from gputop.core.analysis.foresight import Watcher
from gputop.core.model import HostSample, Snapshot
from gputop.core.output.exporter import SnapshotCollector, make_registry
from gputop.core.output.once_table import render_text
from gputop.core.output.snapshot_decode import snapshot_from_dict
from gputop.core.output.snapshot_json import snapshot_to_dict
from gputop.core.run_config import RunConfig
from gputop.core.sampler import Sampler
from gputop.core.sources import nvml_gateway
from gputop.core.sources.nvml import NvmlSource
from gputop.ui.app import GpuTopApp
from gputop.ui.screens.detail import DetailScreen
from gputop.ui.terminal.first_frame import first_frame_lines
from gputop.ui.widgets.gpu_card import GpuCard

HOG = NO_SUCH_PID + 7


@pytest.fixture
def source(fake_nvml: FakeNvml) -> Iterator[NvmlSource]:
    fake_nvml.write(Scenario().gpu())
    fake_nvml.load()
    nvml = NvmlSource()
    nvml.open()
    yield nvml
    nvml.close()


def _series(collector: SnapshotCollector, name: str, **labels: str) -> dict[str, float]:
    """GPU index -> value of the samples of ``name`` with ``labels``."""
    text = generate_latest(make_registry(collector)).decode()
    return {
        sample.labels["gpu"]: sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items())
    }


def _tick(source: NvmlSource, watcher: Watcher, t: float) -> tuple[Snapshot, dict[str, object]]:
    snapshot = Snapshot(timestamp=t, hostname="h", host=HostSample(), gpus=source.sample())
    foresight = watcher.update(snapshot)
    document = snapshot_to_dict(snapshot, foresight.forecasts, foresight.events, foresight.diagnoses)
    return snapshot, document


def test_a_size_probe_answered_with_success_and_a_count_is_read_again_with_room(
    fake_nvml: FakeNvml, source: NvmlSource
) -> None:
    fake_nvml.write(
        Scenario(size_probe="success")
        .gpu(memory_used=31 * GiB)
        .process(gpu=0, pid=HOG, used=30 * GiB)
        .process(gpu=0, pid=HOG + 1, used=1 * GiB, kind="G")
    )
    watcher = Watcher()
    snapshot, document = _tick(source, watcher, 1000.0)
    [gpu] = snapshot.gpus
    assert sorted((p.pid, p.type, p.gpu_memory) for p in gpu.processes) == [
        (HOG, "C", 30 * GiB),
        (HOG + 1, "G", 1 * GiB),
    ]
    gpus = document["gpus"]
    assert isinstance(gpus, list)
    assert gpus[0]["unattributed_memory"] == 0
    assert problem_counts(snapshot, watcher.diagnoser.update(snapshot)) == {0: {}}


def test_a_process_list_that_cannot_be_read_makes_unattributed_memory_unknown(
    fake_nvml: FakeNvml, source: NvmlSource
) -> None:
    fake_nvml.write(
        Scenario()
        .gpu(memory_used=31 * GiB)
        .gpu(memory_used=31 * GiB)
        .process(gpu=0, pid=HOG, used=30 * GiB)
        .process(gpu=1, pid=HOG + 1, used=1 * GiB)
        .error("nvmlDeviceGetComputeRunningProcesses", "NO_PERMISSION", gpu=0)
    )
    watcher = Watcher()
    collector = SnapshotCollector(hostname="h")
    for t in (1000.0, 1001.0):
        snapshot, document = _tick(source, watcher, t)
        collector.update(snapshot, {}, watcher.diagnoser.update(snapshot))
    unread, read = snapshot.gpus
    assert (unread.processes_known, unread.processes) == (False, ())
    assert read.processes_known is True
    gpus = document["gpus"]
    assert isinstance(gpus, list)
    assert (gpus[0]["processes_known"], gpus[0]["unattributed_memory"]) == (False, None)
    # GPU 1's list was read: 30 GiB that no process holds is a figure, and a problem, there.
    assert (gpus[1]["processes_known"], gpus[1]["unattributed_memory"]) == (True, 30 * GiB)
    assert document["alerts"] == []
    assert _series(collector, "gputop_gpu_problems", kind="unattributed") == {"0": 0.0, "1": 1.0}
    assert _series(collector, "gputop_gpu_memory_unattributed_bytes") == {"1": 30.0 * GiB}
    # A recording keeps the difference: replayed, GPU 0's unattributed memory is still unknown.
    replayed = snapshot_from_dict(snapshot_to_dict(snapshot))
    assert [gpu.processes_known for gpu in replayed.gpus] == [False, True]
    assert [d.unattributed.memory for d in Watcher().update(replayed).diagnoses.gpus.values()] == [None, 30 * GiB]


def test_a_list_the_library_lacks_altogether_is_no_list_not_an_unread_one(fake_nvml: FakeNvml) -> None:
    fake_nvml.write(Scenario().gpu(memory_used=31 * GiB).process(gpu=0, pid=HOG, used=30 * GiB))
    mps = [f"nvmlDeviceGetMPSComputeRunningProcesses{suffix}" for suffix in ("", "_v2", "_v3")]
    fake_nvml.load(omit=mps)
    nvml = NvmlSource()
    nvml.open()
    try:
        [gpu] = nvml.sample()
    finally:
        nvml.close()
    assert gpu.processes_known is True
    assert [(p.pid, p.gpu_memory) for p in gpu.processes] == [(HOG, 30 * GiB)]


def test_one_gpus_unexpected_exception_stays_on_that_gpu(fake_nvml: FakeNvml, source: NvmlSource) -> None:
    # A name that is not UTF-8: pynvml's decode raises UnicodeDecodeError, which is no NVMLError.
    fake_nvml.write(
        Scenario()
        .gpu(name="NVIDIA H100 \udcff", util_gpu=40)
        .gpu(util_gpu=87)
        .process(gpu=0, pid=HOG, used=2 * GiB)
        .process(gpu=1, pid=HOG + 1, used=3 * GiB)
    )
    broken, healthy = source.sample()
    assert (broken.lost, broken.answering, broken.utilization_gpu, broken.memory_used) == (False, False, None, None)
    assert broken.last_error is not None
    assert broken.last_error.startswith("read failed: nvmlDeviceGetName: UnicodeDecodeError: 'utf-8' codec can't")
    assert broken.read_failed and not healthy.read_failed
    assert (healthy.answering, healthy.last_error, healthy.utilization_gpu) == (True, None, 87.0)
    assert [(p.pid, p.gpu_memory) for p in healthy.processes] == [(HOG + 1, 3 * GiB)]
    # No alert and no diagnosis from a read that failed; the GPU answers again once the driver does.
    watcher = Watcher()
    foresight = watcher.update(Snapshot(timestamp=1.0, hostname="h", host=HostSample(), gpus=(broken, healthy)))
    assert foresight.events == ()
    fake_nvml.write(Scenario().gpu(util_gpu=40).gpu(util_gpu=87).process(gpu=0, pid=HOG, used=2 * GiB))
    again, _ = source.sample()
    assert (again.answering, again.last_error, again.utilization_gpu) == (True, None, 40.0)
    assert [(p.pid, p.gpu_memory) for p in again.processes] == [(HOG, 2 * GiB)]


async def test_a_read_that_raised_is_read_failed_not_a_hung_driver_everywhere(
    fake_nvml: FakeNvml, source: NvmlSource
) -> None:
    fake_nvml.write(Scenario().gpu(name="NVIDIA H100 \udcff").gpu(util_gpu=87).process(gpu=1, pid=HOG, used=GiB))
    words = "read failed: nvmlDeviceGetName: UnicodeDecodeError: 'utf-8' codec can't"
    snapshot, document = _tick(source, Watcher(), time.time())
    gpus = document["gpus"]
    assert isinstance(gpus, list)
    assert (gpus[0]["answering"], gpus[0]["read_failed"], gpus[1]["read_failed"]) == (False, True, False)
    assert str(gpus[0]["last_error"]).startswith(words)
    assert snapshot_from_dict(document).gpus[0].read_failed  # a recording replays it
    lines = render_text(snapshot, colour=False).splitlines()
    assert lines[1] == "[0] N/A  READ FAILED" and lines[2].startswith(f"    {words}")
    assert "NOT ANSWERING" not in "\n".join(lines)
    assert first_frame_lines(snapshot, 120, 10)[1].startswith(f"[0] N/A  {words}")  # the frame at start
    # The card and the detail screen: its own words, not "not answering" with an age.
    app = GpuTopApp(Sampler(source), RunConfig(), start_sampler=False)
    async with app.run_test(size=(160, 40)) as pilot:
        app.apply_snapshot(snapshot)
        await pilot.pause()
        title = str(app.query(GpuCard).first().border_title)
        assert f"[ansi_red bold]{words}" in title and "not answering" not in title
        await pilot.click("#gpu-0")
        await pilot.pause()
        assert isinstance(app.screen, DetailScreen) and app.screen.index == 0
        title = str(app.screen.query_one("#detail-title").content)
        assert words in title and "not answering" not in title


def test_a_pynvml_without_its_private_lookup_is_read_through_its_public_calls(
    fake_nvml: FakeNvml, source: NvmlSource, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As a pynvml that no longer has _nvmlGetFunctionPointer (gputop's name for it is changed, not pynvml).
    monkeypatch.setattr(nvml_gateway, "PRIVATE_LOOKUP", "_nvmlGetFunctionPointer_gone")
    fake_nvml.write(
        Scenario()
        .gpu(memory_used=31 * GiB, energy_mj=7_500_000)
        .gpu()
        .process(gpu=0, pid=HOG, used=30 * GiB, sm=55)
        .process(gpu=0, pid=HOG + 1, used=NOT_AVAILABLE, kind="G")
        .process(gpu=1, pid=HOG + 2, used=1 * GiB)
    )
    first, second = source.sample()
    assert sorted((p.pid, p.type, p.gpu_memory, p.sm_utilization) for p in first.processes) == [
        (HOG, "C", 30 * GiB, 55.0),
        (HOG + 1, "G", None, 0.0),
    ]
    assert [(p.pid, p.gpu_memory) for p in second.processes] == [(HOG + 2, 1 * GiB)]
    # The field-value batch (energy, NVLink, ECC) goes through the public call too.
    assert first.energy is not None and first.energy.since_driver_load_j == 7_500.0
    assert nvml_gateway.binding_notice() == (
        "pynvml has no _nvmlGetFunctionPointer_gone: process lists are read through its public calls"
    )


def test_a_lost_gpu_shows_the_xid_the_event_thread_received_while_it_was_lost(
    fake_nvml: FakeNvml, source: NvmlSource
) -> None:
    fake_nvml.write(Scenario().gpu().gpu())
    watcher = Watcher()
    _tick(source, watcher, time.time())
    fake_nvml.write(Scenario().gpu().gpu().lost(0).xid(0, 79))
    deadline = time.monotonic() + 10.0
    while True:
        snapshot, document = _tick(source, watcher, time.time())
        lost = snapshot.gpus[0]
        if lost.health.xid_events or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert lost.lost and [event.code for event in lost.health.xid_events or ()] == [79]
    gpus = document["gpus"]
    assert isinstance(gpus, list)
    assert [event["code"] for event in gpus[0]["health"]["xid_events"]] == [79]
    # Raised while the GPU is lost, beside the lost alert; not when it answers again.
    assert [(event.kind, event.message) for event in watcher.monitor.active.values()] == [
        ("lost", "GPU 0 is lost: it stopped answering the driver"),
        ("health", "GPU 0 health: XID 79: GPU has fallen off the bus"),
    ]
    text = render_text(snapshot, colour=False, diagnoses=watcher.diagnoser.update(snapshot))
    assert "[0] NVIDIA H100 80GB HBM3  GPU LOST: XID 79: GPU has fallen off the bus" in text.splitlines()
    fake_nvml.write(Scenario().gpu().gpu().xid(0, 79))
    _, document = _tick(source, watcher, time.time())
    alerts = document["alerts"]
    assert isinstance(alerts, list)
    # Back: the lost alert clears; the XID, raised while lost, is not raised again as new.
    assert [(alert["kind"], alert["cleared"], alert["message"]) for alert in alerts] == [
        ("lost", True, "GPU 0 is answering again")
    ]


def test_mig_mode_without_instances_is_said_in_once(fake_nvml: FakeNvml, source: NvmlSource) -> None:
    fake_nvml.write(Scenario().gpu(mig_mode=1).gpu(mig_mode=1).mig(1, 0, memory_used=2 * GiB))
    snapshot, document = _tick(source, Watcher(), 1000.0)
    lines = render_text(snapshot, colour=False).splitlines()
    assert lines[3] == "    └ MIG on · no instances"  # GPU 0: its name line, its memory line, then this
    assert lines[6].startswith("    └ MIG 0 1g.10gb")  # GPU 1 lists its instance instead
    assert "MIG on · no instances" not in "\n".join(lines[4:])
    gpus = document["gpus"]
    assert isinstance(gpus, list)
    assert (gpus[0]["mig_mode"], gpus[0]["mig_devices"]) == (True, [])


async def test_debug_says_in_one_line_that_pynvml_is_read_through_its_public_calls(
    fake_nvml: FakeNvml, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(nvml_gateway, "PRIVATE_LOOKUP", "_nvmlGetFunctionPointer_gone")
    fake_nvml.write(Scenario().gpu())
    fake_nvml.load()
    app = GpuTopApp(Sampler(NvmlSource()), RunConfig(debug=True), start_sampler=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        said = [n.message for n in app.messages.shown() if n.title == "NVML binding"]
    assert said == ["pynvml has no _nvmlGetFunctionPointer_gone: process lists are read through its public calls"]


def test_insufficient_size_without_a_count_leaves_the_list_unread_and_its_array_as_it_was(
    fake_nvml: FakeNvml, source: NvmlSource
) -> None:
    # Found by the property test: the array kept between ticks doubled at every try of every tick, until
    # making it raised MemoryError (or the machine ran out of memory first).
    fake_nvml.write(
        Scenario()
        .gpu(memory_used=31 * GiB)
        .process(gpu=0, pid=HOG, used=30 * GiB)
        .process(gpu=0, pid=HOG + 1, used=1 * GiB, kind="G")
        .error("nvmlDeviceGetComputeRunningProcesses", "INSUFFICIENT_SIZE", gpu=0)
    )
    for _ in range(20):
        [gpu] = source.sample()
        assert (gpu.answering, gpu.processes_known) == (True, False)
        assert [(p.pid, p.type) for p in gpu.processes] == [(HOG + 1, "G")]
