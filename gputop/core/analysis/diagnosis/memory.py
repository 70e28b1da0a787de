"""Memory no process accounts for, per GPU and MIG device.

Used memory minus the memory of the processes listed on the device. A
process NVML lists but this host cannot see (another PID namespace) is
accounted for by its listed memory, and counted apart as hidden. A process
list that could not be read makes it unknown (None): memory held by processes
gputop could not list is not memory no process accounts for.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from gputop.core.model import GpuSample, MigSample, ProcessSample

GIB = 1024**3


@dataclass(frozen=True, slots=True)
class Unattributed:
    """What one device's process list leaves unexplained."""

    memory: int | None  # bytes, never below 0; None when a figure it needs is missing
    shown: bool  # above the tolerance: the panel shows a "(no process)" row
    hidden_processes: int  # listed by NVML, not visible from this host


NOTHING_UNATTRIBUTED = Unattributed(memory=None, shown=False, hidden_processes=0)


def tolerance(memory_total: int | None, min_gib: float, percent: float) -> float:
    """The larger of ``min_gib`` GiB and ``percent`` of the total."""
    share = 0.0 if memory_total is None else memory_total * percent / 100.0
    return max(min_gib * GIB, share)


def _remainder(used: int | None, parts: Iterable[int | None]) -> int | None:
    if used is None:
        return None
    total = 0
    for part in parts:
        if part is None:
            return None
        total += part
    return max(0, used - total)


def _judge(
    memory: int | None,
    memory_total: int | None,
    processes: Iterable[ProcessSample],
    min_gib: float,
    percent: float,
) -> Unattributed:
    hidden = sum(1 for process in processes if not process.visible)
    shown = memory is not None and memory > tolerance(memory_total, min_gib, percent)
    return Unattributed(memory=memory, shown=shown, hidden_processes=hidden)


def gpu_unattributed(gpu: GpuSample, min_gib: float, percent: float) -> Unattributed:
    """A whole GPU; in MIG mode, what is used outside its MIG devices and their processes."""
    if gpu.lost or not gpu.processes_known:
        return NOTHING_UNATTRIBUTED
    parts: list[int | None] = [process.gpu_memory for process in gpu.processes]
    parts += [mig.memory_used for mig in gpu.mig_devices]
    memory = _remainder(gpu.memory_used, parts)
    return _judge(memory, gpu.memory_total, gpu.processes, min_gib, percent)


def mig_unattributed(mig: MigSample, min_gib: float, percent: float) -> Unattributed:
    """One MIG device: its used memory minus its processes'."""
    if not mig.processes_known:
        return NOTHING_UNATTRIBUTED
    memory = _remainder(mig.memory_used, (process.gpu_memory for process in mig.processes))
    return _judge(memory, mig.memory_total, mig.processes, min_gib, percent)
