"""The process rows of a snapshot: one per process and GPU, with growth and idleness, and the
``(no process)`` rows; who holds GPU processes, and how many rows are processes. Plain logic, no widgets."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from itertools import compress, count
from operator import is_not
from typing import Any

from gputop.core.analysis.diagnosis import Diagnoses, ProcessDiagnosis, Unattributed
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


class TickFacts:
    """The tick that ``SnapshotRows``' rows are shown at: its clock, and each process's memory growth and
    idleness by identity. One for all its rows, its fields replaced each tick: a row kept from tick to tick
    reads them when asked, so a thousand rows are not moved on one by one."""

    __slots__ = ("growth", "idle", "now")

    def __init__(self) -> None:
        self.now = 0.0
        self.growth: Mapping[ProcessIdentity, ProcessGrowth] = {}
        self.idle: Mapping[ProcessIdentity, ProcessDiagnosis] = {}


def _from_tick(name: str, read: Callable[[TickFacts, ProcessIdentity], object]) -> Any:
    """A ``LiveRow`` property for ProcessRow's field ``name``: ``read`` from the row's tick for its process;
    the field's own value where the row has no tick (a copy). Setting it sets the field."""
    field = ProcessRow.__dict__[name]  # the slot under the property

    def get(row: LiveRow) -> object:
        tick = row.tick
        return field.__get__(row) if tick is None else read(tick, (row.process.pid, row.process.started))

    return property(get, field.__set__)


def _now() -> Any:
    """``LiveRow.now``: the row's tick's clock (asked for every row on screen every tick, by TIME)."""
    field = ProcessRow.__dict__["now"]

    def get(row: LiveRow) -> object:
        tick = row.tick
        return field.__get__(row) if tick is None else tick.now

    return property(get, field.__set__)


def _growth_rate(tick: TickFacts, identity: ProcessIdentity) -> float:
    found = tick.growth.get(identity)
    return 0.0 if found is None or found.growth_rate is None else found.growth_rate


def _growing(tick: TickFacts, identity: ProcessIdentity) -> bool:
    found = tick.growth.get(identity)
    return found is not None and found.is_growing


def _idle_seconds(tick: TickFacts, identity: ProcessIdentity) -> float | None:
    found = tick.idle.get(identity)
    return None if found is None else found.idle_seconds


def _idle(tick: TickFacts, identity: ProcessIdentity) -> bool:
    found = tick.idle.get(identity)
    return found is not None and found.idle


class LiveRow(ProcessRow):
    """A process's row kept from tick to tick while its sample is the object it was: its clock, growth and
    idleness are its tick's (``tick``), read when asked, as ``snapshot_rows`` would have made them this tick.
    A copy (``dataclasses.replace``: the tree's rows) holds the values it was made with."""

    __slots__ = ("tick",)

    # Properties over the fields of the same names (typed as the fields: Any here).
    now = _now()
    growth_rate = _from_tick("growth_rate", _growth_rate)
    growing = _from_tick("growing", _growing)
    idle_seconds = _from_tick("idle_seconds", _idle_seconds)
    idle = _from_tick("idle", _idle)

    def __post_init__(self) -> None:
        ProcessRow.__post_init__(self)
        self.tick: TickFacts | None = None


class SnapshotRows:
    """A snapshot's rows, tick after tick (the main panel's). A process whose sample is the object it was (the
    sampler keeps it while nothing about the process changed) on a device whose memory total holds keeps its
    row (a ``LiveRow``: its clock, growth and idleness are the tick's, read when asked); a device's list that
    is the object it was keeps every row, and one that is not is compared with the last in C: only the
    processes made again are looked at one by one. At 8x128 a tick looks at no row but the few made again."""

    def __init__(self) -> None:
        self._tick = TickFacts()
        self._lists: dict[_Place, tuple[tuple[ProcessSample, ...], int | None, list[ProcessRow]]] = {}
        self._unattributed: dict[RowKey, ProcessRow] = {}
        self.processes = 0  # how many of the last rows are processes (not "(no process)" rows)

    def rows(
        self,
        snapshot: Snapshot,
        growth: Mapping[ProcessIdentity, ProcessGrowth] | None = None,
        diagnoses: Diagnoses | None = None,
    ) -> list[ProcessRow]:
        """The rows ``snapshot_rows(snapshot, growth, diagnoses)`` makes (the same values), last tick's where kept."""
        tick, now = self._tick, snapshot.timestamp
        tick.now, tick.growth, tick.idle = now, growth or {}, {} if diagnoses is None else diagnoses.processes
        self.processes = 0
        before, self._lists = self._lists, {}
        last_unattributed, self._unattributed = self._unattributed, {}
        rows: list[ProcessRow] = []
        for place, processes, total, unattributed in _lists(snapshot, diagnoses):
            kept = before.get(place)
            listed: list[ProcessRow]
            if kept is None or kept[1] != total:
                listed = [self._row(process, total) for process in processes]
            elif kept[0] is processes:  # the sampler keeps the list while no process in it changed
                listed = kept[2]
            elif len(kept[0]) == len(processes):
                listed = list(kept[2])
                for n in compress(count(), map(is_not, processes, kept[0])):  # the processes made again, in C
                    listed[n] = self._row(processes[n], total)
            else:  # processes came or went: each one kept by key where its sample is the object it was
                by_key = {row.key: row for row in kept[2]}
                listed = [
                    row
                    if (row := by_key.get(_row_key(process))) is not None and row.process is process
                    else self._row(process, total)
                    for process in processes
                ]
            self._lists[place] = (processes, total, listed)
            rows += listed
            self.processes += len(processes)
            if unattributed is not None:
                key: RowKey = (0, None, *place)
                row = _unattributed(place, unattributed, total, now, last_unattributed.get(key))
                rows.append(row)
                self._unattributed[key] = row
        return rows

    def _row(self, process: ProcessSample, total: int | None) -> LiveRow:
        row = LiveRow(process, total, self._tick.now)
        row.tick = self._tick
        return row


def _row_key(process: ProcessSample) -> RowKey:
    return (process.pid, process.started, process.gpu_index, process.mig_index)


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
