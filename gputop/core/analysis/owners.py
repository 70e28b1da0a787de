"""Who holds the GPUs: the processes of a snapshot grouped by user, job, pod or container.

A pure function of a snapshot (and of what is judged over it: which processes are idle, each GPU's
energy since gputop started), shared by the owner screen, ``--once --by`` and ``--json``'s
``"owners"``. Processes in no job, pod or container are in no entry of that grouping; a process
gputop cannot see (another PID namespace) has no user, and is in no entry by user.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from gputop.core.analysis.diagnosis import Diagnoses
from gputop.core.model import GpuSample, MigSample, ProcessSample, Snapshot

OWNER_KINDS = ("user", "job", "pod", "container")


def owner_name(process: ProcessSample, by: str) -> str | None:
    """The name of the owner of ``process`` by ``by`` (one of OWNER_KINDS); None when it has none.

    A user's name; a job's id (``1234``); a pod's ``namespace/name`` (its uid when the name is
    unknown); a container's name, else ``runtime:id12``.
    """
    if by == "user":
        return process.user
    if by == "job":
        return None if process.job is None else process.job.id
    if by == "pod":
        if process.pod_uid is None:
            return None
        return process.container_name or process.pod_uid
    if by == "container":
        if process.container_id is None:
            return None
        # In a pod, container_name holds the pod's name, not the container's.
        if process.container_name and process.pod_uid is None:
            return process.container_name
        return f"{process.container_runtime or 'container'}:{process.container_id[:12]}"
    raise ValueError(f"no such owner kind: {by!r} (one of {', '.join(OWNER_KINDS)})")


def _owner(gpu: GpuSample, process: ProcessSample, by: str) -> str | None:
    """The owner of a process on ``gpu``: by pod, the pod the kubelet allocated its device to when its
    cgroup names none (a process invisible from a pod without hostPID)."""
    name = owner_name(process, by)
    if name is None and by == "pod":
        device: GpuSample | MigSample | None = gpu
        if process.mig_index is not None:
            device = next((mig for mig in gpu.mig_devices if mig.index == process.mig_index), None)
        if device is not None and device.allocation is not None:
            return device.allocation.pod_name
    return name


@dataclass(frozen=True, slots=True)
class OwnerRow:
    """One owner's share of the machine's GPUs."""

    name: str
    gpus: tuple[int, ...]  # GPUs where it holds memory
    gpu_memory: int | None  # bytes; None when no process of it has a known figure
    memory_share: float | None  # of the machine's GPU memory, 0-1
    sm_share: float | None  # its SM time in GPUs' worth (1.0 = one GPU fully busy)
    power_share_w: float | None
    energy_since_start_j: float | None
    idle_memory: int  # bytes held by its idle processes
    processes: int
    longest_pid: int | None = None  # its longest-running process, and when that started
    longest_started: float | None = None


def _sum(values: Iterable[float | None]) -> float | None:
    known = [value for value in values if value is not None]
    return sum(known) if known else None


def memory_share(memory: float | None, total: float | None) -> float | None:
    """``memory`` as a share of ``total`` (0-1), a machine's GPU memory or a fleet's; None when either is unknown."""
    return None if memory is None or not total else memory / total


def _gpu_parts(gpu: GpuSample, by: str) -> dict[str, float]:
    """Each owner's part of one GPU (0-1): of its processes' SM time, or of their memory where no
    process has a known SM % above 0 (an idle GPU, or one that does not say)."""
    processes = gpu.all_processes()
    for figure in ("sm_utilization", "gpu_memory"):
        total = sum(getattr(p, figure) or 0 for p in processes)
        if total > 0:
            parts: dict[str, float] = {}
            for process in processes:
                name = _owner(gpu, process, by)
                if name is not None:
                    parts[name] = parts.get(name, 0.0) + (getattr(process, figure) or 0) / total
            return parts
    return {}


def _split(
    name: str, gpus: Iterable[GpuSample], parts: Mapping[int, dict[str, float]], figure: Mapping[int, float | None]
) -> float | None:
    """``figure`` (per GPU) split among owners by their parts; None when a GPU's figure or split is unknown."""
    total = 0.0
    for gpu in gpus:
        value = figure.get(gpu.index)
        if value is None or not parts[gpu.index]:
            return None
        total += value * parts[gpu.index].get(name, 0.0)
    return total


def owner_rollup(
    snapshot: Snapshot,
    by: str,
    diagnoses: Diagnoses | None = None,
    energy_since_start_j: Mapping[int, float | None] | None = None,
) -> list[OwnerRow]:
    """Each owner by ``by``, most GPU memory first (then by name).

    ``energy_since_start_j``: each GPU's energy since gputop started, by index (by default the
    snapshot's own ``GpuSample.energy``); a GPU missing or unknown gives ``energy_since_start_j`` None.
    """
    idle = {} if diagnoses is None else diagnoses.processes
    machine_memory = _sum(gpu.memory_total for gpu in snapshot.gpus)
    parts = {gpu.index: _gpu_parts(gpu, by) for gpu in snapshot.gpus}
    power = {gpu.index: gpu.power_draw for gpu in snapshot.gpus}
    energy = (
        dict(energy_since_start_j)
        if energy_since_start_j is not None
        else {gpu.index: None if gpu.energy is None else gpu.energy.since_start_j for gpu in snapshot.gpus}
    )
    grouped: dict[str, list[tuple[GpuSample, ProcessSample]]] = {}
    for gpu in snapshot.gpus:
        for process in gpu.all_processes():
            name = _owner(gpu, process, by)
            if name is not None:
                grouped.setdefault(name, []).append((gpu, process))
    rows = []
    for name, held in grouped.items():
        on = {gpu.index: gpu for gpu, _ in held}.values()
        processes = {process.identity: process for _, process in held}
        memory = _sum(process.gpu_memory for _, process in held)
        sm = _sum(process.sm_utilization for _, process in held)
        idle_memory = sum(
            process.gpu_memory or 0
            for _, process in held
            if (found := idle.get(process.identity)) is not None and found.idle
        )
        started = [p for p in processes.values() if p.started is not None]
        longest = min(started, key=lambda p: (p.started, p.pid)) if started else None
        rows.append(
            OwnerRow(
                name=name,
                gpus=tuple(sorted({gpu.index for gpu, process in held if (process.gpu_memory or 0) > 0})),
                gpu_memory=None if memory is None else int(memory),
                memory_share=memory_share(memory, machine_memory),
                sm_share=None if sm is None else sm / 100.0,
                power_share_w=_split(name, on, parts, power),
                energy_since_start_j=_split(name, on, parts, energy),
                idle_memory=idle_memory,
                processes=len(processes),
                longest_pid=None if longest is None else longest.pid,
                longest_started=None if longest is None else longest.started,
            )
        )
    rows.sort(key=lambda row: (-(row.gpu_memory or 0), row.name))
    return rows


def all_rollups(
    snapshot: Snapshot,
    diagnoses: Diagnoses | None = None,
    energy_since_start_j: Mapping[int, float | None] | None = None,
) -> dict[str, list[OwnerRow]]:
    """The rollup by every kind of owner, for ``--json``'s ``"owners"``."""
    return {by: owner_rollup(snapshot, by, diagnoses, energy_since_start_j) for by in OWNER_KINDS}


def owner_to_dict(row: OwnerRow) -> dict[str, object]:
    """One entry of ``"owners"`` (the README's schema)."""
    return {
        "name": row.name,
        "gpus": list(row.gpus),
        "gpu_memory": row.gpu_memory,
        "memory_share": row.memory_share,
        "sm_share": row.sm_share,
        "power_share_w": row.power_share_w,
        "energy_since_start_j": row.energy_since_start_j,
        "idle_memory": row.idle_memory,
        "processes": row.processes,
    }


def owners_document(
    snapshot: Snapshot,
    diagnoses: Diagnoses | None = None,
    energy_since_start_j: Mapping[int, float | None] | None = None,
) -> dict[str, list[dict[str, object]]]:
    """``--json``'s ``"owners"``: every kind of owner, each a list of entries."""
    return {
        by: [owner_to_dict(row) for row in rows]
        for by, rows in all_rollups(snapshot, diagnoses, energy_since_start_j).items()
    }
