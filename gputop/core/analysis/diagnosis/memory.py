"""Memory no process accounts for, per GPU and MIG device.

Used memory minus the memory of the processes listed on the device. A
process NVML lists but this host cannot see (exited, another PID namespace,
no permission: core.host.visibility) is accounted for by its listed memory, and
counted apart as hidden, by its reason. A process
list that could not be read makes it unknown (None): memory held by processes
gputop could not list is not memory no process accounts for.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from gputop.core.model import GpuSample, MigSample, ProcessSample

GIB = 1024**3


@dataclass(frozen=True, slots=True)
class Hidden:
    """The processes NVML lists on a device that this host cannot see, for one reason."""

    reason: str | None  # core.host.visibility's reason; None where gputop cannot tell
    processes: int
    memory: int | None  # bytes they hold, as NVML lists it; None when one's is not given


@dataclass(frozen=True, slots=True)
class Unattributed:
    """What one device's process list leaves unexplained."""

    memory: int | None  # bytes, never below 0; None when a figure it needs is missing
    shown: bool  # above the tolerance: the panel shows a "(no process)" row
    hidden: tuple[Hidden, ...] = ()  # listed by NVML, not visible from this host, by reason

    @property
    def hidden_processes(self) -> int:
        return sum(group.processes for group in self.hidden)


NOTHING_UNATTRIBUTED = Unattributed(memory=None, shown=False)

# The order reasons are told in: the most common cause of a hidden process first.
_REASON_ORDER = ("exited", "pid_namespace", "permission", None)


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
    shown = memory is not None and memory > tolerance(memory_total, min_gib, percent)
    return Unattributed(memory=memory, shown=shown, hidden=hidden_by_reason(processes))


def hidden_by_reason(processes: Iterable[ProcessSample]) -> tuple[Hidden, ...]:
    """The processes not visible from this host, counted and their memory summed per reason."""
    groups: dict[str | None, list[ProcessSample]] = {}
    for process in processes:
        if not process.visible:
            reason = process.not_visible_reason if process.not_visible_reason in _REASON_ORDER else None
            groups.setdefault(reason, []).append(process)
    return tuple(
        Hidden(reason=reason, processes=len(group), memory=_sum(group))
        for reason in _REASON_ORDER
        if (group := groups.get(reason))
    )


def _sum(processes: list[ProcessSample]) -> int | None:
    total = 0
    for process in processes:
        if process.gpu_memory is None:
            return None
        total += process.gpu_memory
    return total


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
