"""Driver faults: every NVML call gputop makes, failing with the errors a driver gives.

Injected through the fake library on one GPU, at start or in the middle of a run:
the value shows N/A (or the GPU shows lost), the other GPUs keep updating, and
everything comes back when the error stops.

The gateway gives an error one of two meanings (`LOST_ERRORS` mark the GPU lost, any
other leaves the value N/A), so each call is tested once per meaning, not once per
code: the codes take turns across the calls, so each of the five is still injected
several times. A call read once and kept (STATIC) has a third behaviour: a fault after
the first read does not reach it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from fakenvml import NO_SUCH_PID, GiB, Scenario
from fakenvml.calls import TEMPERATURE_CALL
from fakenvml.fixture import FakeNvml

from gputop.core.model import GpuSample
from gputop.core.sampler import Sampler
from gputop.core.sources.nvml import STATIC_RETRY_SAMPLES, NvmlSource

NOT_AVAILABLE_CODES = ("NOT_SUPPORTED", "NO_PERMISSION", "TIMEOUT")
LOSING_CODES = ("GPU_IS_LOST", "UNKNOWN")
LOSING = set(LOSING_CODES)

Getter = Callable[[GpuSample], object]


def pids(kind: str) -> Getter:
    return lambda gpu: tuple(sorted(p.pid for p in gpu.all_processes() if kind in p.type))


MPS_PID = NO_SUCH_PID + 3  # the scenario's MPS process (made-up PIDs: no real process answers for them)

# NVML function -> (the GPU it is injected on, what it feeds). GPU 1 is a plain GPU with
# compute, graphics and MPS processes; GPU 2 is in MIG mode.

FUNCTIONS: dict[str, tuple[int, Getter]] = {
    "nvmlDeviceGetName": (1, lambda g: g.name),
    "nvmlDeviceGetUUID": (1, lambda g: g.uuid),
    "nvmlDeviceGetPciInfo_v3": (1, lambda g: g.pci_bus_id),
    "nvmlDeviceGetMemoryInfo": (1, lambda g: (g.memory_total, g.memory_used, g.memory_free)),
    "nvmlDeviceGetUtilizationRates": (1, lambda g: (g.utilization_gpu, g.utilization_memory)),
    "nvmlDeviceGetEncoderUtilization": (1, lambda g: g.utilization_encoder),
    "nvmlDeviceGetDecoderUtilization": (1, lambda g: g.utilization_decoder),
    TEMPERATURE_CALL: (1, lambda g: g.temperature),
    "nvmlDeviceGetTemperatureThreshold": (1, lambda g: (g.temperature_slowdown, g.temperature_shutdown)),
    "nvmlDeviceGetFanSpeed": (1, lambda g: g.fan_speed),
    "nvmlDeviceGetPowerUsage": (1, lambda g: g.power_draw),
    "nvmlDeviceGetEnforcedPowerLimit": (1, lambda g: g.power_limit),
    "nvmlDeviceGetClockInfo": (1, lambda g: (g.clock_sm, g.clock_memory)),
    "nvmlDeviceGetPerformanceState": (1, lambda g: g.pstate),
    "nvmlDeviceGetPcieThroughput": (1, lambda g: (g.pcie_rx, g.pcie_tx)),
    "nvmlDeviceGetMigMode": (2, lambda g: (g.mig_mode, len(g.mig_devices))),
    "nvmlDeviceGetComputeRunningProcesses": (1, pids("C")),
    "nvmlDeviceGetGraphicsRunningProcesses": (1, pids("G")),
    "nvmlDeviceGetMPSComputeRunningProcesses": (1, lambda g: tuple(p.pid for p in g.processes if p.pid == MPS_PID)),
    "nvmlDeviceGetProcessUtilization": (1, lambda g: tuple(p.sm_utilization for p in g.processes)),
    "nvmlDeviceGetMaxMigDeviceCount": (2, lambda g: len(g.mig_devices)),
    "nvmlDeviceGetMigDeviceHandleByIndex": (2, lambda g: len(g.mig_devices)),
    "nvmlDeviceGetGpuInstanceId": (2, lambda g: tuple(m.gpu_instance_id for m in g.mig_devices)),
    "nvmlDeviceGetComputeInstanceId": (2, lambda g: tuple(m.compute_instance_id for m in g.mig_devices)),
}
# Read once per GPU and kept: a fault after the first read does not reach them.
STATIC = {
    "nvmlDeviceGetName", "nvmlDeviceGetUUID", "nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetTemperatureThreshold",
    "nvmlDeviceGetEnforcedPowerLimit", "nvmlDeviceGetMaxMigDeviceCount", "nvmlDeviceGetGpuInstanceId",
    "nvmlDeviceGetComputeInstanceId",
}
# What "no value" looks like for each function, when it is not None.
EMPTY: dict[str, object] = {
    "nvmlDeviceGetMemoryInfo": (None, None, None),
    "nvmlDeviceGetUtilizationRates": (None, None),
    "nvmlDeviceGetTemperatureThreshold": (None, None),
    "nvmlDeviceGetClockInfo": (None, None),
    "nvmlDeviceGetPcieThroughput": (None, None),
    "nvmlDeviceGetMigMode": (None, 0),
    "nvmlDeviceGetComputeRunningProcesses": (MPS_PID,),  # the MPS list still names the MPS process
    "nvmlDeviceGetGraphicsRunningProcesses": (),  # the C+G process is still listed, as C
    "nvmlDeviceGetMPSComputeRunningProcesses": (),
    "nvmlDeviceGetProcessUtilization": (None, None, None, None),
    "nvmlDeviceGetMaxMigDeviceCount": 0,
    "nvmlDeviceGetMigDeviceHandleByIndex": 0,
    "nvmlDeviceGetGpuInstanceId": (None,),
    "nvmlDeviceGetComputeInstanceId": (None,),
}


def machine() -> Scenario:
    return (
        Scenario()
        .gpu(name="NVIDIA H100 80GB HBM3", util_gpu=50, temperature=60, encoder=3, decoder=4)
        .gpu(name="NVIDIA A100-SXM4-80GB", util_gpu=70, temperature=65, encoder=5, decoder=6, pcie_rx_kbs=10)
        .gpu(name="NVIDIA A100-SXM4-40GB", memory_total=40 * GiB, mig_mode=1, max_mig=2)
        .mig(2, 0, name="NVIDIA A100-SXM4-40GB MIG 3g.20gb", memory_total=20 * GiB, memory_used=GiB,
             gpu_instance_id=1)
        .process(gpu=0, pid=NO_SUCH_PID + 0, used=2 * GiB, sm=10)
        .process(gpu=1, pid=NO_SUCH_PID + 1, used=3 * GiB, sm=20)
        .process(gpu=1, pid=NO_SUCH_PID + 2, used=GiB, kind="G")
        .process(gpu=1, pid=MPS_PID, used=GiB, kind="M", sm=30)
        .process(gpu=1, pid=NO_SUCH_PID + 4, used=GiB, kind="CG", sm=40)
        .process(gpu=2, mig=0, pid=NO_SUCH_PID + 5, used=GiB)
    )


def faulty(function: str, code: str) -> Scenario:
    gpu = FUNCTIONS[function][0]
    return machine().error(function, code, gpu=gpu)


@pytest.fixture
def open_sampler() -> Iterator[Callable[[], Sampler]]:
    """Open Samplers on the loaded fake driver; each is closed after the test, passed or failed."""
    opened: list[Sampler] = []

    def start() -> Sampler:
        sampler = Sampler(NvmlSource(), clock=lambda: 1000.0)
        sampler.open()
        opened.append(sampler)
        return sampler

    yield start
    for sampler in opened:
        sampler.close()


def cases() -> list[tuple[str, str, str]]:
    """(when, function, code): per call, N/A and lost where the fault reaches it, and a
    static call's fault mid-run, which must not reach it."""
    chosen: list[tuple[str, str, str]] = []
    for turn, function in enumerate(sorted(FUNCTIONS)):
        not_available = NOT_AVAILABLE_CODES[turn % len(NOT_AVAILABLE_CODES)]
        losing = LOSING_CODES[turn % len(LOSING_CODES)]
        if function in STATIC:
            chosen += [("at start", function, not_available), ("at start", function, losing),
                       ("mid-run", function, losing)]
        else:
            # Alternate the moment too, so both paths are run for N/A and for lost.
            first, second = ("at start", "mid-run") if turn % 2 else ("mid-run", "at start")
            chosen += [(first, function, not_available), (second, function, losing)]
    return chosen


def test_every_call_and_code_is_still_injected() -> None:
    injected = cases()
    assert {function for _, function, _ in injected} == set(FUNCTIONS)
    assert {code for _, _, code in injected} == set(NOT_AVAILABLE_CODES) | LOSING
    for meaning in (set(NOT_AVAILABLE_CODES), LOSING):
        assert {when for when, function, code in injected if code in meaning and function not in STATIC} == {
            "at start", "mid-run"}


@pytest.mark.parametrize(("when", "function", "code"), cases())
def test_a_failing_call_shows_na_or_lost_leaves_other_gpus_alone_and_recovers(
    fake_nvml: FakeNvml, open_sampler: Callable[[], Sampler], function: str, code: str, when: str
) -> None:
    target, getter = FUNCTIONS[function]
    fake_nvml.write(machine())
    fake_nvml.load()
    healthy_source = open_sampler()
    healthy = healthy_source.sample().gpus
    healthy_source.close()

    sampler = open_sampler()
    if when == "mid-run":
        assert sampler.sample().gpus == healthy
    fake_nvml.write(faulty(function, code))
    faulted = sampler.sample().gpus

    assert [gpu.index for gpu in faulted] == [0, 1, 2], "every GPU stays listed"
    for other in (0, 1, 2):
        if other != target:
            assert faulted[other] == healthy[other], f"GPU {other} was disturbed"
    reached = when == "at start" or function not in STATIC
    gpu = faulted[target]
    if not reached:
        assert gpu == healthy[target]
    elif code in LOSING:
        assert gpu.lost is True
        assert gpu.memory_used is None and gpu.processes == ()
    else:
        assert gpu.lost is False
        assert getter(gpu) == EMPTY.get(function), "the failed value reads as N/A"
        assert getter(healthy[target]) != getter(gpu)

    fake_nvml.write(machine())
    for _ in range(STATIC_RETRY_SAMPLES + 1):
        recovered = sampler.sample().gpus
    assert recovered == healthy
