"""NvmlSource through the real pynvml against the fake libnvidia-ml.so.1."""

from __future__ import annotations

import ctypes.util
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import pynvml
import pytest
from fakenvml import (
    MEMORY_V2,
    NO_SUCH_PID,
    NOT_AVAILABLE,
    OLD_DRIVER,
    PROCESS_V3,
    FakeNvml,
    GiB,
    MiB,
    Scenario,
)

from gputop.core.model import GpuHealth, GpuSample, MigSample, ProcessSample, RemappedRows
from gputop.core.sources.base import SourceUnavailable
from gputop.core.sources.nvml import NvmlSource, cuda_version_text
from gputop.core.sources.nvml_gateway import PROCESS_LISTS, ProcessList

OpenSource = Callable[..., NvmlSource]
HINT = "run `gputop doctor` to see why, or `gputop --demo` to try gputop without a GPU"


@pytest.fixture
def open_source(nvml_source: OpenSource) -> OpenSource:
    """Write a scenario, load the fake library (minus `omit`), open an NvmlSource on it (conftest's)."""
    return nvml_source


def by_pid(processes: Iterable[ProcessSample]) -> dict[int, ProcessSample]:
    return {process.pid: process for process in processes}


def test_every_gpu_field_comes_out_in_gputop_units(open_source: OpenSource) -> None:
    scenario = Scenario().gpu(
        name="NVIDIA A100-SXM4-80GB",
        uuid="GPU-5e1f7a3c-0000-4000-8000-000000000001",
        pci="00000000:3B:00.0",
        memory_total=80 * GiB,
        memory_used=30 * GiB,
        memory_reserved=600 * MiB,
        memory_free=80 * GiB - 30 * GiB - 600 * MiB,
        util_gpu=87,
        util_memory=45,
        encoder=12,
        decoder=7,
        temperature=71,
        temperature_slowdown=88,
        temperature_shutdown=93,
        fan=64,
        power_mw=312_500,
        power_limit_mw=400_000,
        clock_sm=1410,
        clock_mem=1593,
        pstate=2,
        pcie_rx_kbs=2000,
        pcie_tx_kbs=300,
        mig_mode=0,
    )
    source = open_source(scenario)

    assert source.sample() == (
        GpuSample(
            index=0,
            name="NVIDIA A100-SXM4-80GB",
            uuid="GPU-5e1f7a3c-0000-4000-8000-000000000001",
            pci_bus_id="00000000:3B:00.0",
            memory_total=80 * GiB,
            memory_used=30 * GiB,
            memory_free=80 * GiB - 30 * GiB - 600 * MiB,
            memory_reserved=600 * MiB,
            utilization_gpu=87.0,
            utilization_memory=45.0,
            utilization_encoder=12.0,
            utilization_decoder=7.0,
            temperature=71.0,
            temperature_slowdown=88.0,
            temperature_shutdown=93.0,
            fan_speed=64.0,
            power_draw=312.5,
            power_limit=400.0,
            clock_sm=1410,
            clock_memory=1593,
            clock_sm_max=1980,
            clock_memory_max=2619,
            clock_event_reasons=("gpu_idle",),
            pstate=2,
            pcie_rx=2000.0 * 1024,
            pcie_tx=300.0 * 1024,
            mig_mode=False,
            health=GpuHealth(0, 0, RemappedRows(0, 0, False, False), None, ()),
        ),
    )


def test_driver_and_cuda_versions_are_read_at_open(open_source: OpenSource) -> None:
    source = open_source(Scenario(driver="535.161.08", cuda=12020).gpu())

    assert (source.driver_version, source.cuda_driver_version) == ("535.161.08", "12.2")
    assert source.name == "nvml"
    assert source.simulated is False
    assert source.sample_host() is None
    assert source.signal((1, None), 15) is None


@pytest.mark.parametrize(
    ("version", "text"), [(12040, "12.4"), (11080, "11.8"), (12000, "12.0"), (10010, "10.1")]
)
def test_cuda_version_integer_becomes_major_dot_minor(version: int, text: str) -> None:
    assert cuda_version_text(version) == text


def test_unknown_pstate_is_none(open_source: OpenSource) -> None:
    (gpu,) = open_source(Scenario().gpu(pstate=32)).sample()

    assert gpu.pstate is None


def test_fields_the_gpu_does_not_support_are_none_and_the_rest_intact(
    open_source: OpenSource,
) -> None:
    scenario = (
        Scenario()
        .gpu(fan=None, encoder=None, decoder=None, temperature_slowdown=None, pcie_rx_kbs=None)
        .error("nvmlDeviceGetUtilizationRates", "NOT_SUPPORTED")
        .error("nvmlDeviceGetPowerUsage", "NO_PERMISSION")
        .error("nvmlDeviceGetClockInfo", "TIMEOUT")
        .error("nvmlDeviceGetEnforcedPowerLimit", "NO_DATA")
        .error("nvmlDeviceGetMigMode", "NOT_SUPPORTED")
    )
    (gpu,) = open_source(scenario).sample()

    assert (gpu.fan_speed, gpu.utilization_encoder, gpu.utilization_decoder) == (None,) * 3
    assert (gpu.utilization_gpu, gpu.utilization_memory) == (None, None)
    assert (gpu.power_draw, gpu.power_limit) == (None, None)
    assert (gpu.clock_sm, gpu.clock_memory) == (None, None)
    assert (gpu.temperature_slowdown, gpu.temperature_shutdown) == (None, 92.0)
    assert (gpu.pcie_rx, gpu.pcie_tx) == (None, 0.0)
    assert gpu.mig_mode is None
    assert (gpu.lost, gpu.name, gpu.temperature, gpu.memory_used) == (
        False,
        "NVIDIA H100 80GB HBM3",
        35.0,
        1 * GiB,
    )


def test_a_function_missing_from_the_library_reads_as_none(open_source: OpenSource) -> None:
    source = open_source(Scenario().gpu(encoder=40), omit=["nvmlDeviceGetEncoderUtilization"])

    first, second = source.sample()[0], source.sample()[0]

    assert (first.utilization_encoder, first.utilization_decoder) == (None, 0.0)
    assert second == first


@pytest.mark.parametrize(("code", "text"), [("GPU_IS_LOST", "GPU is lost"), ("UNKNOWN", "Unknown Error")])
def test_a_lost_gpu_stays_listed_while_the_others_go_on_and_it_recovers(
    open_source: OpenSource, fake_nvml: FakeNvml, code: str, text: str
) -> None:
    def scenario() -> Scenario:
        return (
            Scenario()
            .gpu(util_gpu=10)
            .gpu(util_gpu=20)
            .gpu(util_gpu=30)
            .process(gpu=1, pid=4321, used=2 * GiB)
        )

    source = open_source(scenario())
    healthy = source.sample()
    fake_nvml.write(scenario().lost(gpu=1, code=code))

    during = source.sample()
    assert during[1] == GpuSample(
        index=1,
        name="NVIDIA H100 80GB HBM3",
        uuid="GPU-00000001-0000-4000-8000-fa4e00000000",
        pci_bus_id="00000000:19:00.0",
        lost=True,
        last_error=text,
        health=GpuHealth(xid_events=()),  # the XID events since it was lost: none
    )
    assert (during[0], during[2]) == (healthy[0], healthy[2])
    assert source.sample()[1].lost  # still lost while the error lasts

    fake_nvml.write(scenario())
    assert source.sample() == healthy


def test_a_gpu_lost_from_the_start_is_listed_by_index_and_gets_its_name_on_recovery(
    open_source: OpenSource, fake_nvml: FakeNvml
) -> None:
    source = open_source(Scenario().gpu().gpu(name="NVIDIA L4").lost(gpu=1))

    first = source.sample()
    # No XID event seen yet, on any GPU: the GPUs are registered for them beside the first tick's reads.
    assert first[1] == GpuSample(index=1, lost=True, last_error="GPU is lost", health=GpuHealth(xid_events=()))
    assert first[0].name == "NVIDIA H100 80GB HBM3"

    fake_nvml.write(Scenario().gpu().gpu(name="NVIDIA L4"))
    recovered = source.sample()[1]
    assert (recovered.lost, recovered.name, recovered.power_draw) == (False, "NVIDIA L4", 70.0)


def test_compute_graphics_and_mps_lists_merge_per_pid(open_source: OpenSource) -> None:
    scenario = (
        Scenario()
        .gpu()
        .process(gpu=0, pid=100, used=1 * GiB, kind="C")
        .process(gpu=0, pid=200, used=300 * MiB, kind="G")
        .process(gpu=0, pid=300, used=2 * GiB, kind="CG")
        .process(gpu=0, pid=400, used=512 * MiB, kind="M")
        .process(gpu=0, pid=500, used=64 * MiB, kind="MG")
    )
    (gpu,) = open_source(scenario).sample()

    assert {(p.pid, p.type, p.gpu_memory) for p in gpu.processes} == {
        (100, "C", 1 * GiB),
        (200, "G", 300 * MiB),
        (300, "C+G", 2 * GiB),
        (400, "C", 512 * MiB),
        (500, "C+G", 64 * MiB),
    }
    assert len(gpu.processes) == 5
    assert all(p.gpu_index == 0 and p.mig_index is None for p in gpu.processes)


def test_a_process_list_read_as_before_is_the_list_made_last_time_and_a_changed_one_is_made_anew(
    open_source: OpenSource, fake_nvml: FakeNvml
) -> None:
    def scenario(first_used: int) -> Scenario:
        return Scenario().gpu().gpu().process(gpu=0, pid=100, used=first_used).process(gpu=1, pid=100, used=GiB)

    source = open_source(scenario(GiB))
    gateway = source.gateway
    handles = [gateway.call(pynvml.nvmlDeviceGetHandleByIndex, index) for index in (0, 1)]
    _, family, versions = PROCESS_LISTS[0]  # the compute processes

    def lists() -> list[ProcessList | None]:
        return [gateway.call_versions(family, versions, handle) for handle in handles]

    first = lists()
    again = lists()
    assert first == [[(100, GiB)], [(100, GiB)]]
    assert again[0] is first[0] and again[1] is first[1]  # each GPU's own, as it was: not made again
    fake_nvml.write(scenario(2 * GiB))
    changed = lists()
    assert changed == [[(100, 2 * GiB)], [(100, GiB)]]
    assert changed[1] is first[1]
    assert first[0] == [(100, GiB)]  # the list given before is left as it was given
    gpus = source.sample()
    assert [[(process.pid, process.gpu_memory) for process in gpu.processes] for gpu in gpus] == [
        [(100, 2 * GiB)], [(100, GiB)]
    ]


def test_host_facts_are_left_for_the_sampler(open_source: OpenSource) -> None:
    (gpu,) = open_source(Scenario().gpu().process(gpu=0, pid=os.getpid(), used=GiB)).sample()

    # No utilization sample for it: it did not run, SM 0.
    assert gpu.processes == (
        ProcessSample(pid=os.getpid(), gpu_index=0, type="C", gpu_memory=GiB, sm_utilization=0.0),
    )


def test_memory_not_available_is_none(open_source: OpenSource) -> None:
    scenario = Scenario().gpu().process(gpu=0, pid=77, used=NOT_AVAILABLE, kind="G")
    (gpu,) = open_source(scenario).sample()

    assert gpu.processes == (ProcessSample(pid=77, gpu_index=0, type="G", gpu_memory=None, sm_utilization=0.0),)


def test_real_processes_and_pids_from_another_namespace_are_both_listed(
    open_source: OpenSource,
) -> None:
    absent = NO_SUCH_PID
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"]) as child:
        try:
            scenario = (
                Scenario()
                .gpu()
                .gpu()
                .process(gpu=0, pid=child.pid, used=3 * GiB)
                .process(gpu=1, pid=absent, used=5 * GiB)
            )
            gpus = open_source(scenario).sample()
        finally:
            child.kill()

    assert [(p.pid, p.gpu_memory) for p in gpus[0].processes] == [(child.pid, 3 * GiB)]
    assert [(p.pid, p.gpu_memory) for p in gpus[1].processes] == [(absent, 5 * GiB)]


def test_sm_utilization_per_process_uses_the_most_recent_sample(open_source: OpenSource) -> None:
    scenario = (
        Scenario()
        .gpu()
        .process(gpu=0, pid=10, used=GiB, sm=55)
        .process(gpu=0, pid=20, used=GiB)
        .process(gpu=0, pid=30, used=GiB, sm=20, sm_time=1_000)
        .process(gpu=0, pid=30, used=GiB, sm=70, sm_time=2_000)
    )
    (gpu,) = open_source(scenario).sample()

    # A process absent from the samples did not run: 0, not unknown.
    assert {p.pid: p.sm_utilization for p in gpu.processes} == {10: 55.0, 20: 0.0, 30: 70.0}


def test_only_samples_newer_than_the_last_seen_count(open_source: OpenSource) -> None:
    scenario = Scenario().gpu().process(gpu=0, pid=10, used=GiB, sm=55, sm_time=5_000)
    source = open_source(scenario)

    assert source.sample()[0].processes[0].sm_utilization == 55.0
    # The next call passes lastSeenTimeStamp=5000: no newer sample, NOT_FOUND: it did not run since.
    assert source.sample()[0].processes[0].sm_utilization == 0.0


@pytest.mark.parametrize(("code", "sm"), [("NOT_SUPPORTED", None), ("NO_PERMISSION", None), ("NOT_FOUND", 0.0)])
def test_process_utilization_errors_leave_sm_utilization_unknown_but_no_sample_is_zero(
    open_source: OpenSource, code: str, sm: float | None
) -> None:
    scenario = (
        Scenario()
        .gpu()
        .process(gpu=0, pid=10, used=GiB, sm=55)
        .error("nvmlDeviceGetProcessUtilization", code)
    )
    (gpu,) = open_source(scenario).sample()

    assert gpu.processes == (ProcessSample(pid=10, gpu_index=0, type="C", gpu_memory=GiB, sm_utilization=sm),)


def mixed_processes() -> Scenario:
    return (
        Scenario()
        .gpu()
        .process(gpu=0, pid=100, used=1 * GiB, kind="C")
        .process(gpu=0, pid=200, used=NOT_AVAILABLE, kind="G")
        .process(gpu=0, pid=300, used=2 * GiB, kind="CG")
        .process(gpu=0, pid=400, used=3 * GiB, kind="M")
    )


EXPECTED_MIXED = {
    (100, "C", 1 * GiB),
    (200, "G", None),
    (300, "C+G", 2 * GiB),
    (400, "C", 3 * GiB),
}


@pytest.mark.parametrize(
    ("omit", "version"),
    [((), 0), (PROCESS_V3, 1), (OLD_DRIVER, 2)],
    ids=["v3", "v2 driver", "v1 driver"],
)
def test_process_lists_are_read_through_the_newest_symbol_the_library_has_and_no_other(
    open_source: OpenSource, fake_nvml: FakeNvml, omit: tuple[str, ...], version: int
) -> None:
    source = open_source(mixed_processes(), omit=omit)

    for _ in range(2):
        fake_nvml.reset_counts()
        (gpu,) = source.sample()
        assert {(p.pid, p.type, p.gpu_memory) for p in gpu.processes} == EXPECTED_MIXED
        # Each list is read through its newest symbol the library has, and through no other.
        for family in ("Compute", "Graphics", "MPSCompute"):
            symbols = [f"nvmlDeviceGet{family}RunningProcesses{suffix}" for suffix in ("_v3", "_v2", "")]
            called = [name for name in symbols if fake_nvml.call_count(name)]
            assert called == [symbols[version]]


@pytest.mark.parametrize("omit", [MEMORY_V2, OLD_DRIVER], ids=["memory v1", "v1 driver"])
def test_memory_info_falls_back_to_v1_where_used_includes_reserved(
    open_source: OpenSource, fake_nvml: FakeNvml, omit: tuple[str, ...]
) -> None:
    scenario = Scenario().gpu(memory_total=24 * GiB, memory_used=4 * GiB, memory_reserved=GiB)
    source = open_source(scenario, omit=omit)

    fake_nvml.reset_counts()
    (gpu,) = source.sample()
    assert (gpu.memory_total, gpu.memory_used, gpu.memory_free, gpu.memory_reserved) == (
        24 * GiB,
        5 * GiB,
        19 * GiB,
        None,
    )
    calls = [fake_nvml.call_count(name) for name in ("nvmlDeviceGetMemoryInfo", "nvmlDeviceGetMemoryInfo_v2")]
    assert calls == [1, 0]


def test_mig_devices_have_their_own_memory_ids_and_processes(open_source: OpenSource) -> None:
    scenario = (
        Scenario()
        .gpu(mig_mode=1, max_mig=7)
        .mig(0, 0, memory_total=20 * GiB, memory_used=6 * GiB, gpu_instance_id=3)
        .mig(
            0,
            2,
            name="NVIDIA H100 80GB HBM3 MIG 3g.40gb",
            memory_total=40 * GiB,
            gpu_instance_id=2,
            compute_instance_id=1,
        )  # fmt: skip
        .process(gpu=0, pid=111, used=6 * GiB, mig=0, sm=30)
        .process(gpu=0, pid=222, used=9 * GiB, mig=2, kind="CG")
        .process(gpu=0, pid=333, used=1 * GiB)
    )
    (gpu,) = open_source(scenario).sample()

    assert gpu.mig_mode is True
    assert gpu.mig_devices == (
        MigSample(
            index=0,
            uuid="MIG-00000000-0000-4000-8000-fa4e00000000",
            name="NVIDIA H100 80GB HBM3 MIG 1g.10gb",
            gpu_instance_id=3,
            compute_instance_id=0,
            memory_total=20 * GiB,
            memory_used=6 * GiB,
            memory_free=14 * GiB,
            processes=(
                ProcessSample(
                    pid=111,
                    gpu_index=0,
                    type="C",
                    gpu_memory=6 * GiB,
                    sm_utilization=30.0,  # used in MIG mode too, where the driver gives it
                    mig_index=0,
                ),  # fmt: skip
            ),
        ),
        MigSample(
            index=2,
            uuid="MIG-00000002-0000-4000-8000-fa4e00000000",
            name="NVIDIA H100 80GB HBM3 MIG 3g.40gb",
            gpu_instance_id=2,
            compute_instance_id=1,
            memory_total=40 * GiB,
            memory_used=0,
            memory_free=40 * GiB,
            processes=(
                # Absent from the driver's samples: it did not run since the last ones.
                ProcessSample(pid=222, gpu_index=0, type="C+G", gpu_memory=9 * GiB, sm_utilization=0.0, mig_index=2),
            ),
        ),
    )
    # The driver lists MIG processes on the parent too; they count once, in their MIG device.
    assert gpu.processes == (ProcessSample(pid=333, gpu_index=0, type="C", gpu_memory=GiB, sm_utilization=0.0),)
    assert sorted(p.pid for p in gpu.all_processes()) == [111, 222, 333]


def test_scenario_changes_are_seen_by_the_next_sample(
    open_source: OpenSource, fake_nvml: FakeNvml
) -> None:
    source = open_source(Scenario().gpu(util_gpu=5).process(gpu=0, pid=10, used=GiB))
    assert [(g.utilization_gpu, len(g.processes)) for g in source.sample()] == [(5.0, 1)]

    fake_nvml.write(
        Scenario()
        .gpu(util_gpu=99)
        .gpu()
        .process(gpu=0, pid=10, used=2 * GiB)
        .process(gpu=1, pid=20, used=GiB)
    )
    gpus = source.sample()

    assert [(g.utilization_gpu, [p.pid for p in g.processes]) for g in gpus] == [
        (99.0, [10]),
        (0.0, [20]),
    ]
    assert gpus[0].processes[0].gpu_memory == 2 * GiB


def test_lists_that_outgrow_the_room_kept_from_the_last_sample_are_read_whole(
    open_source: OpenSource, fake_nvml: FakeNvml
) -> None:
    """The arrays NVML fills are kept from one sample to the next; a longer list is read in full."""
    source = open_source(Scenario().gpu().process(gpu=0, pid=10, used=GiB, sm=5))
    assert [(p.pid, p.sm_utilization) for p in source.sample()[0].processes] == [(10, 5.0)]

    grown = Scenario().gpu()
    for pid in range(100, 400):
        grown.process(gpu=0, pid=pid, used=pid * MiB, kind="CG" if pid % 3 else "C", sm=pid % 100)
    fake_nvml.write(grown)
    (gpu,) = source.sample()

    assert [(p.pid, p.type, p.gpu_memory, p.sm_utilization) for p in gpu.processes] == [
        (pid, "C+G" if pid % 3 else "C", pid * MiB, float(pid % 100)) for pid in range(100, 400)
    ]
    fake_nvml.write(Scenario().gpu().process(gpu=0, pid=20, used=GiB, kind="G"))
    assert [(p.pid, p.type) for p in source.sample()[0].processes] == [(20, "G")]


def test_an_unchanged_process_is_the_same_sample_and_a_changed_one_a_new_one(
    open_source: OpenSource, fake_nvml: FakeNvml
) -> None:
    """What lets the sampler keep last tick's joined process without comparing every field."""

    def scenario(memory: int, kind: str) -> Scenario:
        return Scenario().gpu().process(gpu=0, pid=10, used=GiB).process(gpu=0, pid=20, used=memory, kind=kind)

    source = open_source(scenario(GiB, "C"))
    first = by_pid(source.sample()[0].processes)
    second = by_pid(source.sample()[0].processes)
    assert second[10] is first[10] and second[20] is first[20]

    fake_nvml.write(scenario(2 * GiB, "C"))
    third = by_pid(source.sample()[0].processes)
    assert third[10] is first[10]
    assert (third[20].gpu_memory, third[20].type) == (2 * GiB, "C")

    fake_nvml.write(scenario(2 * GiB, "CG"))
    assert by_pid(source.sample()[0].processes)[20].type == "C+G"


def test_closing_the_source_frees_its_xid_event_set(open_source: OpenSource, fake_nvml: FakeNvml) -> None:
    source = open_source(Scenario().gpu().gpu())
    before = fake_nvml.event_sets_in_use()
    source.sample()
    deadline = time.monotonic() + 10.0
    while fake_nvml.call_count("nvmlDeviceRegisterEvents") < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert fake_nvml.event_sets_in_use() == before + 1
    source.close()
    # The event thread frees its set as it ends, within one wait on the set.
    while fake_nvml.event_sets_in_use() > before and time.monotonic() < deadline:
        time.sleep(0.01)
    assert fake_nvml.event_sets_in_use() == before


def test_static_facts_are_read_once_and_changing_values_every_sample(
    open_source: OpenSource, fake_nvml: FakeNvml
) -> None:
    source = open_source(Scenario().gpu().gpu())
    fake_nvml.reset_counts()
    for _ in range(3):
        source.sample()
    # The XID event thread registers each GPU once, on its own thread; wait for it to be done.
    deadline = time.monotonic() + 10.0
    while fake_nvml.call_count("nvmlDeviceRegisterEvents") < 2 and time.monotonic() < deadline:
        time.sleep(0.01)

    assert fake_nvml.call_count("nvmlDeviceGetName") == 2
    assert fake_nvml.call_count("nvmlDeviceGetPciInfo_v3") == 2
    assert fake_nvml.call_count("nvmlDeviceGetEnforcedPowerLimit") == 2
    assert fake_nvml.call_count("nvmlDeviceGetTemperatureThreshold") == 4
    # Once per GPU for its sampler, once for the event thread.
    assert fake_nvml.call_count("nvmlDeviceGetHandleByIndex_v2") == 4
    assert fake_nvml.call_count("nvmlDeviceRegisterEvents") == 2
    assert fake_nvml.call_count("nvmlDeviceGetUtilizationRates") == 6
    assert fake_nvml.call_count("nvmlDeviceGetPowerUsage") == 6


def test_failing_nvml_init_is_one_clear_line(fake_nvml: FakeNvml) -> None:
    fake_nvml.write(Scenario().gpu().fail_init("DRIVER_NOT_LOADED"))
    fake_nvml.load()

    with pytest.raises(SourceUnavailable) as raised:
        NvmlSource().open()

    assert str(raised.value) == (
        f"NVML is not available: nvmlInit failed: Driver Not Loaded — {HINT}"
    )


def run_source_in_subprocess(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    code = (
        "import json\n"
        "from gputop.core.sources.base import SourceUnavailable\n"
        "from gputop.core.sources.nvml import NvmlSource\n"
        "source = NvmlSource()\n"
        "try:\n"
        "    source.open()\n"
        "except SourceUnavailable as error:\n"
        "    print(json.dumps({'error': str(error)}))\n"
        "else:\n"
        "    gpus = source.sample()\n"
        "    print(json.dumps({'gpus': [[g.name, [p.pid for p in g.processes]] for g in gpus]}))\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )


def test_a_subprocess_finds_the_fake_driver_through_its_env(fake_nvml: FakeNvml) -> None:
    fake_nvml.write(Scenario().gpu(name="NVIDIA L40S").process(gpu=0, pid=999, used=GiB))

    result = run_source_in_subprocess(fake_nvml.env())

    assert json.loads(result.stdout) == {"gpus": [["NVIDIA L40S", [999]]]}, result.stderr


def test_a_missing_library_is_one_clear_line(tmp_path: Path) -> None:
    if ctypes.util.find_library("nvidia-ml"):
        pytest.skip("a real libnvidia-ml is installed on this machine")
    env = dict(os.environ, LD_LIBRARY_PATH=str(tmp_path))

    result = run_source_in_subprocess(env)

    assert json.loads(result.stdout) == {
        "error": f"NVML is not available: libnvidia-ml.so.1 was not found — {HINT}"
    }, result.stderr
