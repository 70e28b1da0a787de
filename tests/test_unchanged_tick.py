"""A tick whose figures did not move costs little: a GPU that reads as it did last tick is the same
object, through the sampler's join, so that what takes the tick from there sees at once that nothing
moved; a figure that moved makes a new one, on that GPU alone."""

from __future__ import annotations

import dataclasses
import subprocess
import threading
import time
from collections.abc import Callable

import pytest
from fakenvml import FakeNvml, Scenario

from gputop.core.analysis.diagnosis.reasons import decode_reasons
from gputop.core.host.procfs import MIN_SPAN_S
from gputop.core.model import GpuSample
from gputop.core.sampler import Sampler
from gputop.core.sources.nvml import STATIC_RETRY_SAMPLES, NvmlSource

GIB = 1 << 30


def _machine(pid: int, power_mw: int = 70_000) -> Scenario:
    return (
        Scenario()
        .gpu(power_mw=power_mw, util_gpu=40)
        .gpu(power_mw=90_000, util_gpu=75)
        .process(gpu=0, pid=pid, used=2 * GIB, sm=30)
    )


def test_a_gpu_that_reads_as_last_tick_is_the_same_object_and_one_that_moved_is_new(
    nvml_source: Callable[[Scenario], NvmlSource], fake_nvml: FakeNvml, sleeper: subprocess.Popen[bytes]
) -> None:
    sampler = Sampler(nvml_source(_machine(sleeper.pid)))
    sampler.sample()
    time.sleep(2 * MIN_SPAN_S)  # the sleeper's CPU figure is known from the next tick on (0.0, then kept)
    for _ in range(3):  # the first ticks learn what the driver's samples start from
        sampler.sample()
    before = sampler.sample()
    again = sampler.sample()
    assert [gpu.power_draw for gpu in again.gpus] == [70.0, 90.0]
    assert [process.pid for process in again.gpus[0].processes] == [sleeper.pid]
    assert again.gpus[0].processes[0].user is not None  # joined with its host facts
    assert again.gpus[0].processes[0].cpu_percent == 0.0
    assert again.gpus[0] is before.gpus[0] and again.gpus[1] is before.gpus[1]

    fake_nvml.write(_machine(sleeper.pid, power_mw=250_000))  # GPU 0's power moves, nothing else
    moved = sampler.sample()
    assert [gpu.power_draw for gpu in moved.gpus] == [250.0, 90.0]
    assert moved.gpus[0] is not again.gpus[0]
    assert moved.gpus[1] is again.gpus[1]
    assert moved.gpus[0].processes is again.gpus[0].processes  # its process list did not move
    assert sampler.sample().gpus[0] is moved.gpus[0]


def _listing(power_mw: int, used_by_second: int) -> Scenario:
    return (
        Scenario()
        .gpu(power_mw=power_mw, util_gpu=40)
        .process(gpu=0, pid=4101, used=2 * GIB)
        .process(gpu=0, pid=4102, used=used_by_second, kind="G")
    )


def test_process_lists_that_read_as_last_tick_give_the_same_processes_even_when_the_gpu_moved(
    nvml_source: Callable[[Scenario], NvmlSource], fake_nvml: FakeNvml
) -> None:
    source = nvml_source(_listing(70_000, GIB))
    for _ in range(3):  # the first ticks learn what the driver's samples start from
        source.sample()
    before = source.sample()[0]
    fake_nvml.write(_listing(250_000, GIB))  # the GPU's power moves, its lists do not
    moved = source.sample()[0]
    assert (before.power_draw, moved.power_draw) == (70.0, 250.0)
    assert [(p.pid, p.type, p.gpu_memory) for p in moved.processes] == [(4101, "C", 2 * GIB), (4102, "G", GIB)]
    assert moved.processes is before.processes

    fake_nvml.write(_listing(250_000, 3 * GIB))  # one process's memory moves: it alone is new
    grown = source.sample()[0]
    assert [(p.pid, p.gpu_memory) for p in grown.processes] == [(4101, 2 * GIB), (4102, 3 * GIB)]
    assert grown.processes[0] is before.processes[0] and grown.processes[1] is not before.processes[1]
    assert source.sample()[0].processes is grown.processes


def _steady(sm: int = 30, **moved: float) -> Scenario:
    figures = {"energy_mj": 1_000, "memory_temp": 45, "pcie_replay": 0, **moved}
    return Scenario().gpu(**figures).process(gpu=0, pid=4101, used=GIB, sm=sm)


def _with_gpm(**moved: float) -> Scenario:
    figures: dict[str, float] = {
        "gpm": 1, "sm_active": 50.0, "tensor_active": 10.0, "gpm_pcie_rx_mibs": 100.0, "gpm_nvlink_tx_mibs": 20.0,
        "nvlink_count": 4, "nvlink_version": 4, "nvlink_crc": 0, "nvlink_replay": 0, "nvlink_recovery": 0, **moved,
    }
    return Scenario().gpu(**figures)


MiB = 1 << 20
# Each answer a GPU's read is made of, moved alone after reads that answered alike: (the machine, the fake
# GPU's figure, its new value, the sample's figure made of it, what that figure must then be).
MOVES: list[tuple[Callable[..., Scenario], str, float, Callable[[GpuSample], object], object]] = [
    (_steady, "memory_used", 5 * GIB, lambda gpu: gpu.memory_used, 5 * GIB),
    (_steady, "util_gpu", 55, lambda gpu: gpu.utilization_gpu, 55.0),
    (_steady, "util_memory", 7, lambda gpu: gpu.utilization_memory, 7.0),
    (_steady, "encoder", 12, lambda gpu: gpu.utilization_encoder, 12.0),
    (_steady, "decoder", 9, lambda gpu: gpu.utilization_decoder, 9.0),
    (_steady, "power_mw", 250_000, lambda gpu: gpu.power_draw, 250.0),
    (_steady, "pstate", 2, lambda gpu: gpu.pstate, 2),
    (_steady, "temperature", 61, lambda gpu: gpu.temperature, 61.0),
    (_steady, "fan", 80, lambda gpu: gpu.fan_speed, 80.0),
    (_steady, "clock_sm", 1500, lambda gpu: gpu.clock_sm, 1500),
    (_steady, "clock_mem", 1200, lambda gpu: gpu.clock_memory, 1200),
    (_steady, "clocks_event_reasons", 0x4, lambda gpu: gpu.clock_event_reasons, decode_reasons(0x4)),
    (_steady, "ecc_volatile", 3, lambda gpu: gpu.health.ecc_uncorrected_volatile, 3),
    (_steady, "remap_pending", 1, lambda gpu: gpu.health.remapped_rows and gpu.health.remapped_rows.pending, True),
    (_steady, "energy_mj", 5_000, lambda gpu: gpu.energy and gpu.energy.since_driver_load_j, 5.0),
    (_steady, "memory_temp", 71, lambda gpu: gpu.memory_temperature, 71.0),
    (_steady, "pcie_replay", 4, lambda gpu: gpu.pcie_replay_errors, 4),
    (_steady, "mig_mode", 1, lambda gpu: gpu.mig_mode, True),
    # With GPM and NVLink (GPM's figures come from a GPU's second sample on).
    (_with_gpm, "sm_active", 70.0, lambda gpu: gpu.activity and gpu.activity.sm_active, 70.0),
    (_with_gpm, "tensor_active", 12.0, lambda gpu: gpu.activity and gpu.activity.tensor_active, 12.0),
    (_with_gpm, "gpm_pcie_rx_mibs", 300.0, lambda gpu: gpu.pcie_rx, 300.0 * MiB),
    (_with_gpm, "gpm_nvlink_tx_mibs", 40.0, lambda gpu: gpu.nvlink and gpu.nvlink.tx, 40.0 * MiB),
    (_with_gpm, "nvlink_down", 0b100, lambda gpu: gpu.nvlink and gpu.nvlink.links_down, (2,)),
    (_with_gpm, "nvlink_crc", 5, lambda gpu: gpu.nvlink and gpu.nvlink.errors_crc, 5),
]


# The GpuSample field each row of MOVES moves.
MOVED_FIELD = {
    "memory_used": "memory_used", "util_gpu": "utilization_gpu", "util_memory": "utilization_memory",
    "encoder": "utilization_encoder", "decoder": "utilization_decoder", "power_mw": "power_draw",
    "pstate": "pstate", "temperature": "temperature", "fan": "fan_speed", "clock_sm": "clock_sm",
    "clock_mem": "clock_memory", "clocks_event_reasons": "clock_event_reasons", "ecc_volatile": "health",
    "remap_pending": "health", "energy_mj": "energy", "memory_temp": "memory_temperature",
    "pcie_replay": "pcie_replay_errors", "mig_mode": "mig_mode", "sm_active": "activity",
    "tensor_active": "activity", "gpm_pcie_rx_mibs": "pcie_rx", "gpm_nvlink_tx_mibs": "nvlink",
    "nvlink_down": "nvlink", "nvlink_crc": "nvlink",
}
# Fields of a tick's answers that MOVES does not move on their own, and what shows them moving.
MOVED_ELSEWHERE = {
    "memory_total": "the memory call's one answer, moved as memory_used",
    "memory_free": "the memory call's one answer, moved as memory_used",
    "memory_reserved": "the memory call's one answer, moved as memory_used",
    "pcie_tx": "the PCIe counters' (or GPM's) one answer, moved as pcie_rx",
    "pcie_link_gen": "the activity reads' one Reading, moved as pcie_replay_errors (the link read every few ticks)",
    "pcie_link_width": "the activity reads' one Reading, moved as pcie_replay_errors (the link read every few ticks)",
    "mig_devices": "test_a_mig_device_that_appears_with_a_fact_missing_has_it_read_again_after_the_gpus_were_complete",
    "processes": "test_process_lists_that_read_as_last_tick_give_the_same_processes_even_when_the_gpu_moved",
    "processes_known": "the process lists' answers, moved with the processes",
}
# Fields that are no answer of a tick's read: the GPU's identity and state, its static facts, the sampler's join.
NOT_A_TICKS_ANSWER = {
    "index", "name", "uuid", "pci_bus_id", "lost", "answering", "not_answering_since", "last_error", "read_failed",
    "temperature_slowdown", "temperature_shutdown", "power_limit", "clock_sm_max", "clock_memory_max",
    "pcie_link_gen_max", "pcie_link_width_max", "allocation",
}


def test_every_figure_of_a_gpu_sample_is_moved_alone_somewhere_or_is_no_answer_of_a_tick() -> None:
    # A new figure read in NvmlDevice._read but left out of its answers would keep the last sample while only it
    # moves: the figure must have a row in MOVES (which moves it alone and fails until its answer is in them).
    assert sorted(MOVED_FIELD) == sorted(move[1] for move in MOVES)
    fields = {field.name for field in dataclasses.fields(GpuSample)}
    moved = set(MOVED_FIELD.values())
    unplaced = fields - moved - set(MOVED_ELSEWHERE) - NOT_A_TICKS_ANSWER
    assert not unplaced, f"GpuSample fields with no row in MOVES: {sorted(unplaced)}"
    assert not (moved & set(MOVED_ELSEWHERE)) and not (moved | set(MOVED_ELSEWHERE)) & NOT_A_TICKS_ANSWER
    assert (moved | set(MOVED_ELSEWHERE) | NOT_A_TICKS_ANSWER) <= fields  # no name left of a field gone


@pytest.mark.parametrize(("machine", "figure", "value", "shown", "expected"), MOVES, ids=[move[1] for move in MOVES])
def test_an_answer_that_moves_after_reads_that_answered_alike_shows_on_that_tick(
    nvml_source: Callable[[Scenario], NvmlSource],
    fake_nvml: FakeNvml,
    machine: Callable[..., Scenario],
    figure: str,
    value: float,
    shown: Callable[[GpuSample], object],
    expected: object,
) -> None:
    source = nvml_source(machine())
    for _ in range(3):  # the first ticks learn what the driver's samples start from
        source.sample()
    steady = source.sample()[0]
    assert source.sample()[0] is steady  # answered alike: the same sample
    assert shown(steady) is not None and shown(steady) != expected

    fake_nvml.write(machine(**{figure: value}))
    moved = source.sample()[0]
    assert shown(moved) == expected
    assert source.sample()[0] is moved


def test_a_gpu_read_in_turn_one_tick_and_on_its_own_threads_the_next_is_one_object_while_nothing_moved(
    nvml_source: Callable[[Scenario], NvmlSource], fake_nvml: FakeNvml
) -> None:
    # A GPU slower than its 5 ms turn for a few ticks (as on a loaded machine) is read on its own two
    # threads, its PCIe counters joined to its read; then in turn again. Its figures never move.
    def machine(slow: bool) -> Scenario:
        scenario = _steady().gpu(power_mw=90_000)
        return scenario.delay("nvmlDeviceGetPowerUsage", 0.02, gpu=0) if slow else scenario

    source = nvml_source(machine(slow=False))
    for _ in range(3):  # the first ticks learn what the driver's samples start from
        source.sample()
    steady = source.sample()
    fake_nvml.write(machine(slow=True))
    slow = [source.sample() for _ in range(3)]
    assert "gputop-gpu0-pcie" in {thread.name for thread in threading.enumerate()}  # read on its own threads
    fake_nvml.write(machine(slow=False))
    again = [source.sample() for _ in range(3)]

    assert [gpu.power_draw for gpu in steady] == [70.0, 90.0]
    for tick in [*slow, *again]:
        assert tick[0] is steady[0] and tick[1] is steady[1]


def test_a_process_whose_sm_samples_move_shows_them_on_that_tick(
    nvml_source: Callable[[Scenario], NvmlSource], fake_nvml: FakeNvml
) -> None:
    source = nvml_source(_steady())
    for _ in range(3):
        source.sample()
    steady = source.sample()[0]
    assert [process.sm_utilization for process in steady.processes] == [30.0]
    fake_nvml.write(_steady(sm=65))
    assert [process.sm_utilization for process in source.sample()[0].processes] == [65.0]


def test_a_mig_device_that_appears_with_a_fact_missing_has_it_read_again_after_the_gpus_were_complete(
    nvml_source: Callable[[Scenario], NvmlSource], fake_nvml: FakeNvml
) -> None:
    source = nvml_source(Scenario().gpu(mig_mode=1))
    for _ in range(STATIC_RETRY_SAMPLES + 2):  # the GPU's facts complete, and known to be
        assert source.sample()[0].mig_devices == ()
    fake_nvml.write(Scenario().gpu(mig_mode=1).mig(0, 0).error("nvmlDeviceGetName", "TIMEOUT", gpu=0, mig=0))
    assert [mig.name for mig in source.sample()[0].mig_devices] == [None]
    fake_nvml.write(Scenario().gpu(mig_mode=1).mig(0, 0))
    # The GPU's facts were read over STATIC_RETRY_SAMPLES samples ago: every fact is asked again at once.
    assert [mig.name for mig in source.sample()[0].mig_devices] == ["NVIDIA H100 80GB HBM3 MIG 1g.10gb"]
