"""GPM activity, energy, NVLink and the PCIe link through the real pynvml against the fake driver."""

from __future__ import annotations

import ctypes
import re
from dataclasses import replace
from typing import Any

import pynvml
import pytest
from fakenvml import FakeNvml, Scenario, build_scenario
from fakenvml.build import SOURCE

from gputop.core.model import Activity, Energy, NvLink
from gputop.core.sources.nvml_activity import PCIE_LINK_EVERY

MiB = 1024 * 1024

# An H100 SXM with GPM, NVLink 4 (18 links) and a Gen5 x16 link.
HOPPER = dict(
    gpm=1,
    sm_active=34.5,
    sm_occupancy=21,
    tensor_active=12,
    dram_active=61,
    fp64_active=0,
    fp32_active=8,
    fp16_active=3,
    gpm_pcie_rx_mibs=512,
    gpm_pcie_tx_mibs=64,
    gpm_nvlink_rx_mibs=2048,
    gpm_nvlink_tx_mibs=1024,
    energy_mj=3_600_000_000,
    pcie_gen=5,
    pcie_gen_max=5,
    pcie_width=16,
    pcie_width_max=16,
    nvlink_count=18,
    nvlink_version=4,
    nvlink_crc=0,
    nvlink_replay=0,
    nvlink_recovery=0,
)
# 8 GPUs as build_scenario makes them, before this issue: the NVML calls a tick then made.
CALLS_PER_TICK_BEFORE = 177


def test_a_gpm_gpu_reports_its_activity_between_two_ticks_and_its_pcie_rates_from_gpm(
    nvml_source: Any, fake_nvml: FakeNvml
) -> None:
    nvml = nvml_source(Scenario().gpu(**HOPPER))
    first = nvml.sample()[0]
    assert first.activity == Activity()  # one sample: nothing to measure between yet, every figure None
    second = nvml.sample()[0]
    assert second.activity == Activity(
        sm_active=34.5,
        sm_occupancy=21.0,
        tensor_active=12.0,
        dram_active=61.0,
        fp64_active=0.0,
        fp32_active=8.0,
        fp16_active=3.0,
    )
    assert (second.pcie_rx, second.pcie_tx) == (512 * MiB, 64 * MiB)
    # GPM's figures replace the slow PCIe counters, and one GPM sample is taken a tick.
    assert fake_nvml.call_count("nvmlDeviceGetPcieThroughput") == 0
    assert fake_nvml.call_count("nvmlGpmSampleGet") == 2
    assert fake_nvml.call_count("nvmlGpmMetricsGet") == 1
    assert fake_nvml.call_count("nvmlGpmQueryDeviceSupport") == 1


def test_graphics_activity_memory_temperature_and_pcie_replays_come_in_the_calls_already_made(
    nvml_source: Any, fake_nvml: FakeNvml
) -> None:
    scenario = Scenario().gpu(**HOPPER, graphics_active=92.5, memory_temp=67, pcie_replay=4)
    nvml = nvml_source(scenario)
    nvml.sample()
    gpu = nvml.sample()[0]
    assert gpu.activity is not None and gpu.activity.graphics_active == 92.5
    assert (gpu.memory_temperature, gpu.pcie_replay_errors) == (67.0, 4)
    # One GPM request and one field-value batch a tick, as before: the new figures ride in them.
    assert fake_nvml.call_count("nvmlGpmMetricsGet") == 1
    assert fake_nvml.call_count("nvmlDeviceGetFieldValues") == 2 + 1  # + the link facts, read once
    # The counter climbs (a bad riser): the next tick says so.
    fake_nvml.write(replace(scenario, gpus=[replace(scenario.gpus[0], pcie_replay=9)]))
    assert nvml.sample()[0].pcie_replay_errors == 9


def test_a_gpu_without_a_memory_sensor_or_replay_counter_has_none_not_zero(
    nvml_source: Any, fake_nvml: FakeNvml
) -> None:
    # Left out: NOT_SUPPORTED; memory_temp=0: the sensorless answer some GDDR boards give.
    for extra in ({}, {"memory_temp": 0}):
        nvml = nvml_source(Scenario().gpu(**HOPPER, **extra))
        nvml.sample()
        gpu = nvml.sample()[0]
        assert (gpu.memory_temperature, gpu.pcie_replay_errors) == (None, None), extra
        assert gpu.activity is not None and gpu.activity.graphics_active is None
    # No field values at all (an old driver): the replay counter through its own call; the memory
    # temperature has no call of its own in NVML, so it stays unknown.
    nvml = nvml_source(Scenario().gpu(memory_temp=60, pcie_replay=1).error("nvmlDeviceGetFieldValues", "NOT_SUPPORTED"))
    gpu = nvml.sample()[0]
    assert (gpu.memory_temperature, gpu.pcie_replay_errors) == (None, 1)


def test_energy_nvlink_and_the_pcie_link_come_out_in_gputop_units(nvml_source: Any, fake_nvml: FakeNvml) -> None:
    scenario = Scenario().gpu(**HOPPER)
    nvml = nvml_source(scenario)
    first = nvml.sample()[0]
    assert first.energy == Energy(since_driver_load_j=3_600_000.0, since_start_j=0.0)
    assert (first.pcie_link_gen, first.pcie_link_gen_max, first.pcie_link_width, first.pcie_link_width_max) == (
        5,
        5,
        16,
        16,
    )
    fake_nvml.write(replace(scenario, gpus=[replace(scenario.gpus[0], energy_mj=3_600_250_000)]))
    second = nvml.sample()[0]
    assert second.energy == Energy(since_driver_load_j=3_600_250.0, since_start_j=250.0)
    assert second.nvlink == NvLink(
        version=4,
        links_active=18,
        links_total=18,
        rx=2048.0 * MiB,
        tx=1024.0 * MiB,
        errors_crc=0,
        errors_replay=0,
        errors_recovery=0,
    )


def test_links_are_counted_from_the_link_count_and_a_link_down_or_erring_is_named(
    nvml_source: Any, fake_nvml: FakeNvml
) -> None:
    scenario = Scenario().gpu(**HOPPER)
    nvml = nvml_source(scenario)
    nvml.sample()
    broken = replace(scenario.gpus[0], nvlink_down=1 << 5, nvlink_crc=7, nvlink_replay=2, nvlink_error_link=11)
    fake_nvml.write(replace(scenario, gpus=[broken]))
    link = nvml.sample()[0].nvlink
    assert link is not None
    # The fake answers "inactive" for link indices past the count, as drivers do: 18 links, not 36.
    assert (link.links_active, link.links_total, link.links_down) == (17, 18, (5,))
    assert (link.errors_crc, link.errors_replay, link.errors_recovery) == (7, 2, 0)
    assert link.errors_by_link == ((11, 9),)


def test_a_gpu_without_nvlink_has_none_and_without_field_values_energy_comes_from_its_own_call(
    nvml_source: Any, fake_nvml: FakeNvml
) -> None:
    nvml = nvml_source(Scenario().gpu(energy_mj=5_000).error("nvmlDeviceGetFieldValues", "NOT_SUPPORTED"))
    gpu = nvml.sample()[0]
    assert gpu.nvlink is None
    assert gpu.energy == Energy(since_driver_load_j=5.0, since_start_j=0.0)
    assert fake_nvml.call_count("nvmlDeviceGetTotalEnergyConsumption") == 1
    assert gpu.health.ecc_uncorrected_volatile == 0  # asked the old way


def test_without_gpm_activity_is_null_and_support_is_not_asked_again(nvml_source: Any, fake_nvml: FakeNvml) -> None:
    nvml = nvml_source(Scenario().gpu(util_gpu=80, pcie_rx_kbs=1000).gpu(gpm=1, sm_active=5).error(
        "nvmlGpmSampleGet", "NOT_SUPPORTED", gpu=1
    ))
    for _ in range(3):
        gpus = nvml.sample()
    assert [gpu.activity for gpu in gpus] == [None, None]
    assert gpus[0].pcie_rx == 1000 * 1024  # the PCIe counters, as before
    assert fake_nvml.call_count("nvmlGpmQueryDeviceSupport") == 2  # once a GPU
    assert fake_nvml.call_count("nvmlGpmSampleGet") == 1  # GPU 1's first sample failed: decided


def test_a_gpm_call_failing_after_it_worked_is_a_gap_then_the_figures_come_back(
    nvml_source: Any, fake_nvml: FakeNvml
) -> None:
    scenario = Scenario().gpu(**HOPPER)
    nvml = nvml_source(scenario)
    nvml.sample()
    assert nvml.sample()[0].activity is not None
    fake_nvml.write(Scenario().gpu(**HOPPER).error("nvmlGpmMetricsGet", "TIMEOUT"))
    gap = nvml.sample()[0]
    assert gap.activity == Activity() and gap.pcie_rx is None  # a gap, the GPU still one with GPM
    assert not gap.lost
    fake_nvml.write(scenario)
    assert nvml.sample()[0].activity is not None


def test_each_mig_device_has_its_own_activity(nvml_source: Any) -> None:
    scenario = (
        Scenario()
        .gpu(gpm=1, mig_mode=1, sm_active=50)
        .mig(gpu=0, slot=0, sm_active=80, tensor_active=40)
        .mig(gpu=0, slot=1, sm_active=10)
    )
    nvml = nvml_source(scenario)
    nvml.sample()
    migs = nvml.sample()[0].mig_devices
    assert [(mig.activity.sm_active, mig.activity.tensor_active) for mig in migs if mig.activity] == [
        (80.0, 40.0),
        (10.0, None),
    ]


def test_the_current_pcie_link_is_read_once_in_a_few_ticks(nvml_source: Any, fake_nvml: FakeNvml) -> None:
    scenario = Scenario().gpu(**HOPPER)
    nvml = nvml_source(scenario)
    for _ in range(PCIE_LINK_EVERY):
        nvml.sample()
    assert fake_nvml.call_count("nvmlDeviceGetCurrPcieLinkWidth") == 1
    fake_nvml.write(replace(scenario, gpus=[replace(scenario.gpus[0], pcie_gen=4, pcie_width=8)]))
    gpu = nvml.sample()[0]
    assert (gpu.pcie_link_gen, gpu.pcie_link_width) == (4, 8)


def _all_calls(fake_nvml: FakeNvml) -> int:
    names = set(re.findall(r"X\((nvml\w+)\)", SOURCE.read_text()))
    return sum(fake_nvml.call_count(name) for name in names)


@pytest.mark.parametrize("gpm", [False, True], ids=["without GPM", "with GPM and NVLink"])
def test_a_tick_at_8_gpus_makes_no_more_nvml_calls_than_before(
    nvml_source: Any, fake_nvml: FakeNvml, gpm: bool
) -> None:
    scenario = build_scenario(8, 16)
    if gpm:
        scenario = replace(scenario, gpus=[replace(gpu, **HOPPER) for gpu in scenario.gpus])
    nvml = nvml_source(scenario)
    for _ in range(3):
        nvml.sample()
    fake_nvml.reset_counts()
    ticks = 2 * PCIE_LINK_EVERY
    for _ in range(ticks):
        nvml.sample()
    assert _all_calls(fake_nvml) / ticks < CALLS_PER_TICK_BEFORE


# nvml.h (NVIDIA/go-nvml pkg/nvml/nvml.h, commit 2f9e261f): sizes and offsets on x86-64 / aarch64.
NVML_H_LAYOUT = {
    "sizeof nvmlGpmSample_t": 8,
    "sizeof nvmlGpmMetric_t": 40,
    "nvmlGpmMetric_t.nvmlReturn": 4,
    "nvmlGpmMetric_t.value": 8,
    "nvmlGpmMetric_t.metricInfo": 16,
    "nvmlGpmMetricsGet_t.numMetrics": 4,
    "nvmlGpmMetricsGet_t.sample1": 8,
    "nvmlGpmMetricsGet_t.sample2": 16,
    "nvmlGpmMetricsGet_t.metrics": 24,
    "sizeof nvmlGpmMetricsGet_t": 24 + 333 * 40,  # NVML_GPM_METRIC_MAX = 333 there
    "sizeof nvmlGpmSupport_t": 8,
    "sizeof nvmlFieldValue_t": 40,
    "nvmlFieldValue_t.timestamp": 8,
    "nvmlFieldValue_t.valueType": 24,
    "nvmlFieldValue_t.nvmlReturn": 28,
    "nvmlFieldValue_t.value": 32,
}


def _binding_layout() -> dict[str, int]:
    """The same figures from the binding gputop uses (its metrics array may be longer than nvml.h's)."""
    metric, get, field = pynvml.c_nvmlGpmMetric_t, pynvml.c_nvmlGpmMetricsGet_t, pynvml.c_nvmlFieldValue_t
    return {
        "sizeof nvmlGpmSample_t": ctypes.sizeof(pynvml.c_nvmlGpmSample_t),
        "sizeof nvmlGpmMetric_t": ctypes.sizeof(metric),
        "nvmlGpmMetric_t.nvmlReturn": metric.nvmlReturn.offset,
        "nvmlGpmMetric_t.value": metric.value.offset,
        "nvmlGpmMetric_t.metricInfo": metric.metricInfo.offset,
        "nvmlGpmMetricsGet_t.numMetrics": get.numMetrics.offset,
        "nvmlGpmMetricsGet_t.sample1": get.sample1.offset,
        "nvmlGpmMetricsGet_t.sample2": get.sample2.offset,
        "nvmlGpmMetricsGet_t.metrics": get.metrics.offset,
        "sizeof nvmlGpmSupport_t": ctypes.sizeof(pynvml.c_nvmlGpmSupport_t),
        "sizeof nvmlFieldValue_t": ctypes.sizeof(field),
        "nvmlFieldValue_t.timestamp": field.timestamp.offset,
        "nvmlFieldValue_t.valueType": field.valueType.offset,
        "nvmlFieldValue_t.nvmlReturn": field.nvmlReturn.offset,
        "nvmlFieldValue_t.value": field.value.offset,
    }


def test_the_fakes_gpm_and_field_value_structs_are_laid_out_as_nvml_h_and_the_binding(fake_nvml: FakeNvml) -> None:
    library = fake_nvml.load()
    layout = library.fake_nvml_layout
    layout.restype, layout.argtypes = ctypes.c_longlong, [ctypes.c_char_p]
    fake = {name: layout(name.encode()) for name in NVML_H_LAYOUT}
    assert fake == NVML_H_LAYOUT
    binding = _binding_layout()
    assert binding == {name: NVML_H_LAYOUT[name] for name in binding}



def test_without_gpm_nvlink_rates_come_from_the_throughput_counters_between_ticks(
    nvml_source: Any, fake_nvml: FakeNvml
) -> None:
    ampere = dict(nvlink_count=12, nvlink_version=3, nvlink_rx_kib=1_000, nvlink_tx_kib=1_000)
    scenario = Scenario().gpu(**ampere)
    nvml = nvml_source(scenario)
    first = nvml.sample()[0].nvlink
    assert first is not None and (first.rx, first.tx, first.version, first.links_active) == (None, None, 3, 12)
    fake_nvml.write(replace(scenario, gpus=[replace(scenario.gpus[0], nvlink_rx_kib=31_000, nvlink_tx_kib=11_000)]))
    second = nvml.sample()[0].nvlink
    assert second is not None and second.rx is not None and second.tx is not None
    assert second.rx / second.tx == pytest.approx(3.0)  # 30 000 KiB against 10 000 KiB, over the same time
