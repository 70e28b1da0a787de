"""Every figure of the field batch has its classic call behind it (issue 35): a driver that answers
nvmlDeviceGetFieldValues but refuses a field, on one GPU and not the next, or after it answered, still
gives the figure through the classic call; unknown only when both fail. Through the real nvidia-ml-py
against the fake libnvidia-ml.so.1, whose refuse_fields mode refuses field ids while the classic calls
answer."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
from fakenvml import FakeNvml, Scenario

from gputop.core.model import Energy, GpuSample, NvLink, RemappedRows
from gputop.core.sources.nvml_fallback import DECIDE_AGAIN
from gputop.core.sources.nvml_fields import (
    ALL_LINKS,
    FI_ECC_AGGREGATE,
    FI_ECC_VOLATILE,
    FI_ENERGY,
    FI_ERROR_TOTALS,
    FI_LINK_COUNT,
    FI_LINK_ERRORS,
    FI_LINK_STATE,
    FI_LINK_VERSION,
    FI_NVLINK_RX,
    FI_NVLINK_TX,
    FI_PCIE_REPLAY,
    FI_REMAPPED,
    FI_RETIRED_PENDING,
)

# Four NVLinks, version 4, link 2 down; no GPM, so throughput comes from the NVLink counters.
NVLINK = dict(nvlink_count=4, nvlink_version=4, nvlink_down=1 << 2, nvlink_crc=0, nvlink_replay=0, nvlink_recovery=0)


def _links(gpu: GpuSample) -> NvLink:
    assert gpu.nvlink is not None
    return gpu.nvlink


# (GPU keys, the field ids refused, the classic call that must answer instead, the figure, its value)
FIGURES: dict[str, tuple[dict[str, Any], tuple[int, ...], str, Callable[[GpuSample], object], object]] = {
    "ECC volatile": (
        dict(ecc_volatile=3), (FI_ECC_VOLATILE,), "nvmlDeviceGetTotalEccErrors",
        lambda gpu: gpu.health.ecc_uncorrected_volatile, 3,
    ),
    "ECC aggregate": (
        dict(ecc_aggregate=7), (FI_ECC_AGGREGATE,), "nvmlDeviceGetTotalEccErrors",
        lambda gpu: gpu.health.ecc_uncorrected_aggregate, 7,
    ),
    "energy": (
        dict(energy_mj=5_250_000), (FI_ENERGY,), "nvmlDeviceGetTotalEnergyConsumption",
        lambda gpu: gpu.energy, Energy(since_driver_load_j=5250.0, since_start_j=0.0),
    ),
    "NVLink state": (
        NVLINK, (FI_LINK_STATE,), "nvmlDeviceGetNvLinkState",
        lambda gpu: (_links(gpu).links_active, _links(gpu).links_down), (3, (2,)),
    ),
    "NVLink count and version": (
        NVLINK, (FI_LINK_COUNT, FI_LINK_VERSION), "nvmlDeviceGetNvLinkVersion",
        lambda gpu: (_links(gpu).links_total, _links(gpu).version, _links(gpu).links_active), (4, 4, 3),
    ),
    "NVLink error totals": (
        dict(NVLINK, nvlink_crc=7, nvlink_replay=2, nvlink_recovery=1, nvlink_error_link=1), FI_ERROR_TOTALS,
        "nvmlDeviceGetNvLinkErrorCounter",
        lambda gpu: (_links(gpu).errors_crc, _links(gpu).errors_replay, _links(gpu).errors_recovery), (7, 2, 1),
    ),
    "NVLink error totals of healthy links": (
        NVLINK, FI_ERROR_TOTALS, "nvmlDeviceGetNvLinkErrorCounter",
        lambda gpu: (_links(gpu).errors_crc, _links(gpu).errors_replay, _links(gpu).errors_recovery), (0, 0, 0),
    ),
    "PCIe replays": (
        dict(pcie_replay=4), (FI_PCIE_REPLAY,), "nvmlDeviceGetPcieReplayCounter",
        lambda gpu: gpu.pcie_replay_errors, 4,
    ),
    "remapped rows": (
        dict(remap_corrected=2, remap_uncorrected=3, remap_pending=1), FI_REMAPPED, "nvmlDeviceGetRemappedRows",
        lambda gpu: gpu.health.remapped_rows, RemappedRows(corrected=2, uncorrected=3, pending=True, failure=False),
    ),
    "retired pages": (
        dict(remap_corrected=None, retired_pending=1), (FI_RETIRED_PENDING,), "nvmlDeviceGetRetiredPagesPendingStatus",
        lambda gpu: gpu.health.retired_pages_pending, True,
    ),
}


@pytest.mark.parametrize("figure", list(FIGURES))
def test_a_field_the_batch_refuses_comes_from_its_classic_call(
    nvml_source: Any, fake_nvml: FakeNvml, figure: str
) -> None:
    keys, refused, classic, read, expected = FIGURES[figure]
    nvml = nvml_source(Scenario().gpu(**keys).refuse_fields(refused))
    for _ in range(2):  # decided in the first read, and the same path the next
        assert read(nvml.sample()[0]) == expected
    assert fake_nvml.call_count(classic) > 0


def test_nvlink_throughput_refused_for_all_links_is_summed_from_each_links_counter(
    nvml_source: Any, fake_nvml: FakeNvml
) -> None:
    # No call but the fields counts NVLink data (see nvml_fallback.py): a driver that refuses the
    # all-links scope is asked link by link.
    scenario = Scenario().gpu(**NVLINK, nvlink_rx_kib=1_000, nvlink_tx_kib=1_000)
    nvml = nvml_source(scenario.refuse_fields([FI_NVLINK_RX, FI_NVLINK_TX], scope=ALL_LINKS))
    first = _links(nvml.sample()[0])
    assert (first.rx, first.tx) == (None, None)  # one count: nothing to measure between yet
    changed = replace(scenario, gpus=[replace(scenario.gpus[0], nvlink_rx_kib=31_000, nvlink_tx_kib=11_000)])
    fake_nvml.write(changed.refuse_fields([FI_NVLINK_RX, FI_NVLINK_TX], scope=ALL_LINKS))
    second = _links(nvml.sample()[0])
    assert second.rx is not None and second.tx is not None
    assert second.rx / second.tx == pytest.approx(3.0)  # 30 000 KiB against 10 000 KiB, over the same time


def test_a_links_errors_refused_in_the_batch_are_named_from_the_classic_counter(
    nvml_source: Any, fake_nvml: FakeNvml
) -> None:
    scenario = Scenario().gpu(**NVLINK).refuse_fields(FI_LINK_ERRORS)
    nvml = nvml_source(scenario)
    assert _links(nvml.sample()[0]).errors_by_link == ()
    erring = replace(scenario.gpus[0], nvlink_crc=5, nvlink_replay=1, nvlink_error_link=3)
    fake_nvml.write(replace(scenario, gpus=[erring]))
    link = _links(nvml.sample()[0])
    assert (link.errors_crc, link.errors_replay, link.errors_by_link) == (5, 1, ((3, 6),))


def test_a_driver_whose_batch_call_fails_gives_every_figure_through_the_classic_calls(
    nvml_source: Any, fake_nvml: FakeNvml
) -> None:
    scenario = (
        Scenario()
        .gpu(
            **dict(NVLINK, nvlink_crc=1), ecc_volatile=1, ecc_aggregate=4, energy_mj=9_000, pcie_replay=2,
            memory_temp=60, remap_corrected=1, remap_uncorrected=0, retired_pending=0,
        )
        .error("nvmlDeviceGetFieldValues", "NOT_SUPPORTED")
    )
    gpu = nvml_source(scenario).sample()[0]
    assert (gpu.health.ecc_uncorrected_volatile, gpu.health.ecc_uncorrected_aggregate) == (1, 4)
    assert gpu.health.remapped_rows == RemappedRows(corrected=1, uncorrected=0, pending=False, failure=False)
    assert gpu.health.retired_pages_pending is False
    assert gpu.energy == Energy(since_driver_load_j=9.0, since_start_j=0.0)
    assert gpu.pcie_replay_errors == 2
    assert gpu.nvlink == NvLink(
        version=4, links_active=3, links_total=4, errors_crc=1, errors_replay=0, errors_recovery=0, links_down=(2,)
    )
    assert gpu.memory_temperature is None  # NVML has no other call for it


def test_a_field_answered_on_gpu_0_and_refused_on_gpu_1_is_asked_the_classic_way_on_gpu_1_alone(
    nvml_source: Any, fake_nvml: FakeNvml
) -> None:
    scenario = (
        Scenario()
        .gpu(ecc_volatile=2, energy_mj=4_000)
        .gpu(ecc_volatile=5, energy_mj=8_000)
        .refuse_fields([FI_ECC_VOLATILE, FI_ENERGY], gpu=1)
    )
    nvml = nvml_source(scenario)
    for _ in range(3):
        zero, one = nvml.sample()
        assert (zero.health.ecc_uncorrected_volatile, one.health.ecc_uncorrected_volatile) == (2, 5)
        assert (zero.energy, one.energy) == (Energy(4.0, 0.0), Energy(8.0, 0.0))
    # GPU 1's figures, once a sample each; GPU 0's stay in its batch.
    assert fake_nvml.call_count("nvmlDeviceGetTotalEccErrors") == 3
    assert fake_nvml.call_count("nvmlDeviceGetTotalEnergyConsumption") == 3


def test_a_path_that_fails_after_it_worked_is_decided_again_in_the_same_sample(
    nvml_source: Any, fake_nvml: FakeNvml
) -> None:
    nvml = nvml_source(Scenario().gpu(ecc_volatile=2))
    assert nvml.sample()[0].health.ecc_uncorrected_volatile == 2  # the field
    assert fake_nvml.call_count("nvmlDeviceGetTotalEccErrors") == 0
    # The driver starts refusing the field: the classic call answers, in the same sample.
    fake_nvml.write(Scenario().gpu(ecc_volatile=5).refuse_fields([FI_ECC_VOLATILE]))
    assert nvml.sample()[0].health.ecc_uncorrected_volatile == 5
    # Then the classic call fails and the field answers again: the field, in the same sample.
    fake_nvml.write(Scenario().gpu(ecc_volatile=6).error("nvmlDeviceGetTotalEccErrors", "TIMEOUT"))
    assert nvml.sample()[0].health.ecc_uncorrected_volatile == 6
    fake_nvml.reset_counts()
    assert nvml.sample()[0].health.ecc_uncorrected_volatile == 6
    assert fake_nvml.call_count("nvmlDeviceGetTotalEccErrors") == 0  # back on the field


def test_fields_read_the_classic_way_after_a_failed_batch_return_to_the_batch_when_it_answers_again(
    nvml_source: Any, fake_nvml: FakeNvml
) -> None:
    scenario = Scenario().gpu(**NVLINK, ecc_volatile=2)
    nvml = nvml_source(replace(scenario, errors=[]).error("nvmlDeviceGetFieldValues", "TIMEOUT"))
    gpu = nvml.sample()[0]  # the batch call times out: every figure through its classic call
    assert (gpu.health.ecc_uncorrected_volatile, _links(gpu).links_active) == (2, 3)
    fake_nvml.write(scenario)
    for _ in range(DECIDE_AGAIN - 2):
        nvml.sample()
    # Volatile and aggregate, one call each a sample till now.
    assert fake_nvml.call_count("nvmlDeviceGetTotalEccErrors") == 2 * (DECIDE_AGAIN - 1)
    fake_nvml.reset_counts()
    for _ in range(2):  # the batch is asked for them again in the 30th sample, and they stay there
        gpu = nvml.sample()[0]
        assert (gpu.health.ecc_uncorrected_volatile, _links(gpu).links_active) == (2, 3)
    for classic in ("nvmlDeviceGetTotalEccErrors", "nvmlDeviceGetNvLinkState", "nvmlDeviceGetNvLinkErrorCounter"):
        assert fake_nvml.call_count(classic) == 0, classic


def test_a_figure_neither_path_gives_is_unknown_and_its_classic_call_is_asked_again_now_and_then(
    nvml_source: Any, fake_nvml: FakeNvml
) -> None:
    def refused() -> Scenario:
        return Scenario().gpu(ecc_volatile=3, energy_mj=7_000).refuse_fields([FI_ECC_VOLATILE, FI_ENERGY])

    both = "nvmlDeviceGetTotalEccErrors,nvmlDeviceGetTotalEnergyConsumption"
    nvml = nvml_source(refused().error(both, "NOT_SUPPORTED"))
    gpu = nvml.sample()[0]
    assert (gpu.health.ecc_uncorrected_volatile, gpu.energy) == (None, None)  # unknown, never 0
    fake_nvml.reset_counts()
    for _ in range(DECIDE_AGAIN - 1):  # a GPU without the figure costs no call a sample
        nvml.sample()
    assert fake_nvml.call_count("nvmlDeviceGetTotalEnergyConsumption") == 0
    fake_nvml.write(refused())  # the classic calls answer now
    gpu = nvml.sample()[0]
    assert (gpu.health.ecc_uncorrected_volatile, gpu.energy) == (3, Energy(7.0, 0.0))


def test_json_gives_the_classic_figures_where_the_driver_refuses_every_field(fake_nvml: FakeNvml) -> None:
    fake_nvml.write(
        Scenario()
        .gpu(**NVLINK, ecc_volatile=1, ecc_aggregate=2, energy_mj=3_000_000, pcie_replay=5, memory_temp=61)
        .refuse_fields("*")
    )
    result = subprocess.run(
        [sys.executable, "-m", "gputop", "--json"], capture_output=True, text=True, timeout=60, env=fake_nvml.env()
    )
    assert result.returncode == 0, result.stderr
    (gpu,) = json.loads(result.stdout)["gpus"]
    assert (gpu["health"]["ecc_uncorrected_volatile"], gpu["health"]["ecc_uncorrected_aggregate"]) == (1, 2)
    assert gpu["energy"]["since_driver_load_j"] == 3000.0
    assert gpu["pcie"]["replay_errors"] == 5
    assert gpu["temperature"]["memory"] is None
    nvlink = gpu["nvlink"]
    assert (nvlink["version"], nvlink["links_active"], nvlink["links_total"], nvlink["links_down"]) == (4, 3, 4, [2])
    assert nvlink["errors"] == {"crc": 0, "replay": 0, "recovery": 0}


def test_a_classic_call_that_says_the_gpu_is_lost_marks_it_lost_as_every_call_does(
    nvml_source: Any, fake_nvml: FakeNvml
) -> None:
    scenario = Scenario().gpu(ecc_volatile=1).gpu(ecc_volatile=1).refuse_fields([FI_ECC_VOLATILE], gpu=1)
    nvml = nvml_source(scenario.error("nvmlDeviceGetTotalEccErrors", "GPU_IS_LOST", gpu=1))
    zero, one = nvml.sample()
    assert (zero.lost, zero.health.ecc_uncorrected_volatile) == (False, 1)
    assert one.lost and one.last_error == "GPU is lost"
