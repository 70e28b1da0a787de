"""The process rows of a snapshot: one per process and GPU, with growth and idleness, and the
``(no process)`` rows; who holds GPU processes, and how many rows are processes. Plain logic, no widgets."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import compress, count, repeat
from operator import attrgetter, is_not, or_
from types import MappingProxyType
from typing import TypeVar

from gputop.core.analysis.diagnosis import Diagnoses, ProcessDiagnosis, Unattributed
from gputop.core.analysis.forecast import ProcessGrowth
from gputop.core.model import ProcessIdentity, ProcessSample, Snapshot
from gputop.ui.widgets.rows import ProcessRow, RowKey

_IDENTITY = attrgetter("pid", "started")
T = TypeVar("T")


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
    its row, moved on to this snapshot's clock. A ``(no process)`` row whose memory and total hold is kept
    alike. ``SnapshotRows`` does the same tick after tick, looking at a process only where its list changed."""
    growth = growth or {}
    idle = {} if diagnoses is None else diagnoses.processes
    last = last or {}
    rows: list[ProcessRow] = []
    for place, processes, total, unattributed in _lists(snapshot, diagnoses):
        rows += _process_rows(processes, total, snapshot.timestamp, growth, idle, last)
        if unattributed is not None:
            rows.append(_unattributed(place, unattributed, total, snapshot.timestamp, last.get((0, None, *place))))
    return rows


class SnapshotRows:
    """A snapshot's rows, tick after tick (the main panel's): where a device's list of processes, its
    memory total and its processes' growth and idleness are the objects they were (the sampler, the
    forecaster and the diagnoser keep them while unchanged), the rows are last tick's, found by comparing
    the lists in C; only the processes whose sample, growth or idleness changed are looked at one by one.
    At 8x128 a tick then makes a handful of rows and looks at no other."""

    def __init__(self) -> None:
        self._lists: dict[tuple[int, int | None], _ListRows] = {}
        self._unattributed: dict[RowKey, ProcessRow] = {}
        self.processes = 0  # how many of the last rows are processes (not "(no process)" rows)

    def rows(
        self,
        snapshot: Snapshot,
        growth: Mapping[ProcessIdentity, ProcessGrowth] | None = None,
        diagnoses: Diagnoses | None = None,
    ) -> list[ProcessRow]:
        """As ``snapshot_rows(snapshot, growth, diagnoses, last tick's rows)``, the rows kept being the same."""
        growth = _plain(growth or {})
        idle = _plain({} if diagnoses is None else diagnoses.processes)
        now = snapshot.timestamp
        self.processes = 0
        before, self._lists = self._lists, {}
        last_unattributed, self._unattributed = self._unattributed, {}
        rows: list[ProcessRow] = []
        for place, processes, total, unattributed in _lists(snapshot, diagnoses):
            kept = before.get(place)
            listed = _ListRows(processes, total, growth, idle, kept)
            if kept is None or kept.total != total or len(kept.processes) != len(processes):
                by_key = {} if kept is None else {row.key: row for row in kept.rows}
                listed.rows = _process_rows(processes, total, now, growth, idle, by_key)
            else:
                # The places where the process, its growth or its idleness is another object (in C).
                moved = map(or_, map(is_not, listed.growth, kept.growth), map(is_not, listed.idle, kept.idle))
                if processes is not kept.processes:  # the sampler keeps the list while no process in it changed
                    moved = map(or_, moved, map(is_not, processes, kept.processes))
                changed = list(compress(count(), moved))
                listed.rows = kept.rows
                if changed:
                    listed.rows = list(kept.rows)
                    by_key = {row.key: row for row in map(kept.rows.__getitem__, changed)}
                    made = _process_rows([processes[n] for n in changed], total, now, growth, idle, by_key)
                    for n, row in zip(changed, made, strict=True):
                        listed.rows[n] = row
                # The rows kept move on to this snapshot's clock, which only TIME reads.
                list(map(setattr, listed.rows, repeat("now"), repeat(now)))
            self._lists[place] = listed
            rows += listed.rows
            self.processes += len(processes)
            if unattributed is not None:
                key: RowKey = (0, None, *place)
                row = _unattributed(place, unattributed, total, now, last_unattributed.get(key))
                rows.append(row)
                self._unattributed[key] = row
        return rows


class _ListRows:
    """One device's list of processes, its memory total, each process's growth and idleness, and their rows."""

    __slots__ = ("growth", "identities", "idle", "processes", "rows", "total")
    identities: list[ProcessIdentity]

    def __init__(
        self,
        processes: tuple[ProcessSample, ...],
        total: int | None,
        growth: Mapping[ProcessIdentity, ProcessGrowth],
        idle: Mapping[ProcessIdentity, ProcessDiagnosis],
        kept: _ListRows | None,
    ) -> None:
        self.processes, self.total = processes, total
        if kept is not None and kept.processes is processes:
            identities = kept.identities
        else:
            identities = list(map(_IDENTITY, processes))
        self.identities = identities
        self.growth = list(map(growth.get, identities))
        self.idle = list(map(idle.get, identities))
        self.rows: list[ProcessRow] = []


def _plain(mapping: Mapping[ProcessIdentity, T]) -> Mapping[ProcessIdentity, T]:
    """A read-only view's dictionary (a copy, made in C): looked up a thousand times a tick, a view's ``get``
    costs a third more."""
    return mapping.copy() if isinstance(mapping, MappingProxyType) else mapping


_Place = tuple[int, "int | None"]  # a GPU's index and a MIG device's (None: the GPU itself)


def _lists(
    snapshot: Snapshot, diagnoses: Diagnoses | None
) -> list[tuple[_Place, tuple[ProcessSample, ...], int | None, Unattributed | None]]:
    """Each device's place, processes, memory total, and the memory no process accounts for where the
    panel shows it (None: not shown), in the panel's order: a GPU, then its MIG devices."""
    lists: list[tuple[_Place, tuple[ProcessSample, ...], int | None, Unattributed | None]] = []
    for gpu in snapshot.gpus:
        gpu_diagnosis = None if diagnoses is None else diagnoses.gpus.get(gpu.index)
        found = None if gpu_diagnosis is None else gpu_diagnosis.unattributed
        lists.append(((gpu.index, None), gpu.processes, gpu.memory_total, _shown(found)))
        for mig in gpu.mig_devices:
            found = None if diagnoses is None else diagnoses.migs.get((gpu.index, mig.index))
            lists.append(((gpu.index, mig.index), mig.processes, mig.memory_total, _shown(found)))
    return lists


def _shown(found: Unattributed | None) -> Unattributed | None:
    return found if found is not None and found.shown else None


def _process_rows(
    processes: Sequence[ProcessSample],
    total: int | None,
    now: float,
    growth: Mapping[ProcessIdentity, ProcessGrowth],
    idle: Mapping[ProcessIdentity, ProcessDiagnosis],
    last: Mapping[RowKey, ProcessRow],
) -> list[ProcessRow]:
    """The rows of ``processes`` on one device; a process's row in ``last`` is kept where its sample is the
    object it was and its total, growth and idleness hold (moved on to ``now``)."""
    rows: list[ProcessRow] = []
    add = rows.append
    # Once per process (a thousand at 8x128 when every list changed): the lookups are inlined, no call per row.
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
    return rows


def _unattributed(
    place: _Place, found: Unattributed, total: int | None, now: float, kept: ProcessRow | None
) -> ProcessRow:
    """The ``(no process)`` row of a device; ``kept`` (last tick's) while its memory and total hold, as a
    process's row is: an unchanged tick then gives the rows of the last, every one."""
    memory = found.memory
    if kept is not None and kept.process.gpu_memory == memory and kept.gpu_memory_total == total:
        kept.now = now
        return kept
    gpu_index, mig_index = place
    sample = ProcessSample(pid=0, gpu_index=gpu_index, type="", gpu_memory=memory, mig_index=mig_index)
    return ProcessRow(process=sample, gpu_memory_total=total, now=now, unattributed=True)


def users_with_processes(snapshot: Snapshot) -> list[str]:
    """The users that own GPU processes, sorted."""
    return sorted({p.user for p in snapshot.processes() if p.user is not None})


def process_count(rows: list[ProcessRow]) -> int:
    """How many of ``rows`` are processes (not "(no process)" rows)."""
    return sum(1 for row in rows if not row.unattributed)
