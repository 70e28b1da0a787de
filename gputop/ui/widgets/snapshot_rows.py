"""The process rows of a snapshot: one per process and GPU, with growth and idleness, and the
``(no process)`` rows; who holds GPU processes, and how many rows are processes. Plain logic, no widgets."""

from __future__ import annotations

from collections.abc import Mapping

from gputop.core.analysis.diagnosis import Diagnoses
from gputop.core.analysis.forecast import ProcessGrowth
from gputop.core.model import ProcessIdentity, ProcessSample, Snapshot
from gputop.ui.widgets.rows import ProcessRow, RowKey


def snapshot_rows(
    snapshot: Snapshot,
    growth: Mapping[ProcessIdentity, ProcessGrowth] | None = None,
    diagnoses: Diagnoses | None = None,
    last: Mapping[RowKey, ProcessRow] | None = None,
) -> list[ProcessRow]:
    """Every process row of a snapshot, each with its device's memory total, growth and idleness,
    and one ``(no process)`` row per device whose unattributed memory is above the tolerance.

    ``last``: the rows of the last tick, by key. A process whose sample is the object it was (the sampler
    keeps it while nothing about the process changed) with the same memory total, growth and idleness keeps
    its row, moved on to this snapshot's clock: at 8x128 a thousand rows are not made again a tick. A
    ``(no process)`` row whose memory and total hold is kept alike."""
    growth = growth or {}
    idle = {} if diagnoses is None else diagnoses.processes
    now = snapshot.timestamp
    last = last or {}
    rows: list[ProcessRow] = []
    add = rows.append

    def processes_rows(processes: tuple[ProcessSample, ...], total: int | None) -> None:
        # Once per process a tick (a thousand at 8x128): the lookups are inlined, no call per row.
        for process in processes:
            identity = (process.pid, process.started)
            found = growth.get(identity)
            diagnosis = idle.get(identity)
            if found is None:
                growth_rate, growing = 0.0, False
            else:
                growth_rate = 0.0 if found.growth_rate is None else found.growth_rate
                growing = found.is_growing
            if diagnosis is None:
                idle_seconds, is_idle = None, False
            else:
                idle_seconds, is_idle = diagnosis.idle_seconds, diagnosis.idle
            kept = last.get((*identity, process.gpu_index, process.mig_index)) if last else None
            if (
                kept is not None
                and kept.process is process
                and kept.gpu_memory_total == total
                and kept.growth_rate == growth_rate
                and kept.growing == growing
                and kept.idle_seconds == idle_seconds
                and kept.idle == is_idle
            ):
                kept.now = now
                add(kept)
            else:
                add(ProcessRow(process, total, now, growth_rate, growing, idle_seconds, is_idle))

    def unattributed(gpu_index: int, mig_index: int | None, memory: int | None, total: int | None) -> ProcessRow:
        # Kept while its memory and total hold, as a process's row is: an unchanged tick then gives the
        # rows of the last, every one, and the table need not sort them or make their cells again.
        kept = last.get((0, None, gpu_index, mig_index)) if last else None
        if kept is not None and kept.process.gpu_memory == memory and kept.gpu_memory_total == total:
            kept.now = now
            return kept
        sample = ProcessSample(pid=0, gpu_index=gpu_index, type="", gpu_memory=memory, mig_index=mig_index)
        return ProcessRow(process=sample, gpu_memory_total=total, now=now, unattributed=True)

    for gpu in snapshot.gpus:
        processes_rows(gpu.processes, gpu.memory_total)
        gpu_diagnosis = None if diagnoses is None else diagnoses.gpus.get(gpu.index)
        if gpu_diagnosis is not None and gpu_diagnosis.unattributed.shown:
            add(unattributed(gpu.index, None, gpu_diagnosis.unattributed.memory, gpu.memory_total))
        for mig in gpu.mig_devices:
            processes_rows(mig.processes, mig.memory_total)
            mig_unattributed = None if diagnoses is None else diagnoses.migs.get((gpu.index, mig.index))
            if mig_unattributed is not None and mig_unattributed.shown:
                add(unattributed(gpu.index, mig.index, mig_unattributed.memory, mig.memory_total))
    return rows


def users_with_processes(snapshot: Snapshot) -> list[str]:
    """The users that own GPU processes, sorted."""
    return sorted({p.user for p in snapshot.processes() if p.user is not None})


def process_count(rows: list[ProcessRow]) -> int:
    """How many of ``rows`` are processes (not "(no process)" rows)."""
    return sum(1 for row in rows if not row.unattributed)
