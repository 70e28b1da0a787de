"""The demo machine's hardware: the GPU models it cycles through, the A100's MIG devices, and which
GPU shows which diagnosis.

GPU 1's job hangs in a collective (STALLED?), GPU 2 had an uncorrectable memory error (health),
GPU 3 holds memory no listed process accounts for (a container without --pid=host), and GPU 0
hits its power cap when busy (THROTTLED · power cap).
"""

from __future__ import annotations

from dataclasses import dataclass

from gputop.core.model import GpuHealth, RemappedRows, XidEvent

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
    GpuModel("NVIDIA H100 80GB HBM3", 80 * GIB, 700.0, 87.0, 92.0, 1980, 2619, False),
    GpuModel("NVIDIA H100 80GB HBM3", 80 * GIB, 700.0, 87.0, 92.0, 1980, 2619, False),
    GpuModel("NVIDIA A100-SXM4-40GB", 40 * GIB, 400.0, 88.0, 93.0, 1410, 1215, False),
    GpuModel("NVIDIA GeForce RTX 4090", 24 * GIB, 450.0, 85.0, 90.0, 2520, 10501, True),
    GpuModel("NVIDIA L40S", 48 * GIB, 350.0, 89.0, 94.0, 2520, 9001, True),
    GpuModel("NVIDIA A10", 24 * GIB, 150.0, 88.0, 93.0, 1695, 6251, False),
    GpuModel("Tesla V100-SXM2-32GB", 32 * GIB, 300.0, 86.0, 90.0, 1530, 877, False),
    GpuModel("NVIDIA H200", 141 * GIB, 700.0, 87.0, 92.0, 1980, 3201, False),
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
