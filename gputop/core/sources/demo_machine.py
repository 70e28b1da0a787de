"""The demo machine's hardware: the GPU models it cycles through, the A100's MIG devices, and which
GPU shows which diagnosis.

GPU 1's job hangs in a collective (STALLED?), GPU 2 had an uncorrectable memory error (health),
GPU 3 holds memory no listed process accounts for (a container without --pid=host), and GPU 0
hits its power cap when busy (THROTTLED · power cap). What the performance counters, PCIe links and
NVLink say is at the end: the default four GPUs show each of those answers too.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from gputop.core.model import Activity, GpuHealth, NvLink, RemappedRows, XidEvent

GIB = 1024**3
MIB = 1024**2


@dataclass(frozen=True, slots=True)
class GpuModel:
    name: str
    memory_total: int
    power_limit: float
    slowdown: float
    shutdown: float
    sm_clock_max: int
    memory_clock: int
    has_fan: bool


MODELS = (
    GpuModel(
        name="NVIDIA H100 80GB HBM3",
        memory_total=80 * GIB,
        power_limit=700.0,
        slowdown=87.0,
        shutdown=92.0,
        sm_clock_max=1980,
        memory_clock=2619,
        has_fan=False,
    ),
    GpuModel(
        name="NVIDIA H100 80GB HBM3",
        memory_total=80 * GIB,
        power_limit=700.0,
        slowdown=87.0,
        shutdown=92.0,
        sm_clock_max=1980,
        memory_clock=2619,
        has_fan=False,
    ),
    GpuModel(
        name="NVIDIA A100-SXM4-40GB",
        memory_total=40 * GIB,
        power_limit=400.0,
        slowdown=88.0,
        shutdown=93.0,
        sm_clock_max=1410,
        memory_clock=1215,
        has_fan=False,
    ),
    # A Hopper PCIe card (passively cooled, no NVLink bridge), so that three of the default four
    # GPUs have performance counters: one stalled, one memory-bound, one busy on few SMs.
    GpuModel(
        name="NVIDIA H100 PCIe",
        memory_total=80 * GIB,
        power_limit=350.0,
        slowdown=87.0,
        shutdown=92.0,
        sm_clock_max=1755,
        memory_clock=1593,
        has_fan=False,
    ),
    GpuModel(
        name="NVIDIA L40S",
        memory_total=48 * GIB,
        power_limit=350.0,
        slowdown=89.0,
        shutdown=94.0,
        sm_clock_max=2520,
        memory_clock=9001,
        has_fan=True,
    ),
    GpuModel(
        name="NVIDIA GeForce RTX 4090",
        memory_total=24 * GIB,
        power_limit=450.0,
        slowdown=85.0,
        shutdown=90.0,
        sm_clock_max=2520,
        memory_clock=10501,
        has_fan=True,
    ),
    GpuModel(
        name="Tesla V100-SXM2-32GB",
        memory_total=32 * GIB,
        power_limit=300.0,
        slowdown=86.0,
        shutdown=90.0,
        sm_clock_max=1530,
        memory_clock=877,
        has_fan=False,
    ),
    GpuModel(
        name="NVIDIA H200",
        memory_total=141 * GIB,
        power_limit=700.0,
        slowdown=87.0,
        shutdown=92.0,
        sm_clock_max=1980,
        memory_clock=3201,
        has_fan=False,
    ),
)

STALLED_GPU = 1
SICK_GPU = 2
UNATTRIBUTED = {3: int(4.5 * GIB)}  # memory in use that no listed process accounts for, per GPU
HEALTHY = GpuHealth(0, 0, RemappedRows(0, 0, False, False), None, ())
# Power at or above this share of the limit holds the clocks down: the power cap.
POWER_CAP_SHARE = 0.85
# The A100 (GPU 2) is split into MIG devices: profile name, memory.
MIG_GPU = 2
MIG_PROFILES = (("3g.20gb", 20 * GIB), ("2g.10gb", 10 * GIB), ("1g.5gb", 5 * GIB))


def model_of(index: int) -> GpuModel:
    """The model of GPU ``index``: the list again from the start past its end."""
    return MODELS[index % len(MODELS)]


def is_mig(index: int) -> bool:
    return index == MIG_GPU


def capacity(gpu: int, mig: int | None) -> float:
    """The memory a process on GPU ``gpu`` (or its MIG device ``mig``) can have at most."""
    if mig is not None:
        return float(MIG_PROFILES[mig][1])
    return float(model_of(gpu).memory_total)


def gpu_uuid(index: int) -> str:
    return f"GPU-{index:08x}-d3m0-4{index:03x}-8000-{0xC0FFEE + index:012x}"


def mig_uuid(gpu: int, slot: int) -> str:
    return f"MIG-{gpu:04x}{slot:04x}-d3m0-5000-8000-{0xBEEF00 + slot:012x}"


def clock_reasons(busy: bool, stalled: bool, power: float, limit: float) -> tuple[str, ...]:
    """Why the clocks are held down: idle, or busy at the power cap (a stalled GPU draws too little)."""
    if not busy:
        return ("gpu_idle",)
    if not stalled and power >= POWER_CAP_SHARE * limit:
        return ("sw_power_cap",)
    return ()


def health(index: int, opened: float) -> GpuHealth:
    """GPU ``index``'s memory and driver health; the machine was opened at ``opened``."""
    if index != SICK_GPU:
        return HEALTHY
    # An uncorrectable error 10 minutes before the demo opened: a row remap waits for a reset, XID 94 stopped a job.
    return GpuHealth(1, 1, RemappedRows(0, 1, True, False), None, (XidEvent(94, opened - 600.0),))


# --- what the GPUs' performance counters, PCIe links and NVLink say (issue 29) ---------------------

# GPU 0 streams memory at its power cap (MEMORY-BOUND on its detail screen), GPU 1's stalled job
# spins on next to no SMs, GPU 2's PCIe link trained at x8 in an x16 slot, and GPU 3 (an H100 PCIe)
# is busy on few SMs: BUSY, FEW SMs once it has been so for busy_idle_after_s (2 minutes by
# default), as on a real GPU. Its past is not claimed: the judgement needs GPU-wide history that no
# figure of a sample carries (unlike an idle process's, whose last activity the driver reports).
MEMORY_BOUND_GPU = 0
DEGRADED_LINK_GPU = 2
FEW_SMS_GPU = 3
# Energy the demo's GPUs used before it opened (the driver loaded weeks ago), joules.
ENERGY_BEFORE_J = 9.5e8


def has_gpm(index: int) -> bool:
    """Hopper and later: the GPUs whose performance counters NVML reads (GPM)."""
    name = model_of(index).name
    return "H100" in name or "H200" in name


def activity(index: int, utilization: float, stalled: bool, jitter: float) -> Activity | None:
    """GPM's figures for GPU ``index`` at ``utilization``; None for a GPU without GPM."""
    if not has_gpm(index):
        return None
    # The graphics engine is busy whenever a kernel runs: GPU-Util's figure, measured by GPM.
    return replace(_pipes(index, utilization, stalled, jitter), graphics_active=utilization)


def _pipes(index: int, utilization: float, stalled: bool, jitter: float) -> Activity:
    if stalled:
        return Activity(
            sm_active=1.0,
            sm_occupancy=0.5,
            tensor_active=0.0,
            dram_active=0.4,
            fp64_active=0.0,
            fp32_active=0.2,
            fp16_active=0.0,
        )
    load = utilization / 100.0
    if index == MEMORY_BOUND_GPU:
        return Activity(
            sm_active=round(70 * load + jitter, 1),
            sm_occupancy=round(38 * load, 1),
            tensor_active=4.0,
            dram_active=round(min(100.0, 92 * load + 4 + jitter), 1),
            fp64_active=0.0,
            fp32_active=round(7 * load, 1),
            fp16_active=1.5,
        )
    if index == FEW_SMS_GPU:
        return Activity(
            sm_active=round(14 + jitter, 1),
            sm_occupancy=6.0,
            tensor_active=3.0,
            dram_active=9.0,
            fp64_active=0.0,
            fp32_active=8.0,
            fp16_active=1.0,
        )
    return Activity(
        sm_active=round(88 * load + jitter, 1),
        sm_occupancy=round(45 * load, 1),
        tensor_active=round(62 * load, 1),
        dram_active=round(48 * load, 1),
        fp64_active=0.0,
        fp32_active=round(18 * load, 1),
        fp16_active=round(9 * load, 1),
    )


def pcie_link(index: int, busy: bool) -> tuple[int, int, int, int]:
    """(generation, its maximum, width, its maximum): an idle GPU down-trains to Gen1 to save power."""
    name = model_of(index).name
    gen_max = 5 if "H100" in name or "H200" in name else 3 if "V100" in name else 4
    width = 8 if index == DEGRADED_LINK_GPU else 16
    return (gen_max if busy else 1), gen_max, width, 16


def nvlink(index: int, utilization: float) -> NvLink | None:
    """The SXM boards' NVLink; None on a PCIe card."""
    name = model_of(index).name
    if "PCIe" in name:
        return None
    links = 18 if "H100" in name or "H200" in name else 12 if "A100" in name else 6 if "V100" in name else 0
    if not links:
        return None
    version = 4 if links == 18 else 3 if links == 12 else 2
    rate = utilization * 2.2e9 / 100
    return NvLink(
        version=version,
        links_active=links,
        links_total=links,
        rx=round(rate, 0),
        tx=round(rate * 0.97, 0),
        errors_crc=0,
        errors_replay=0,
        errors_recovery=0,
    )
