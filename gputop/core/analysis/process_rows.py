"""A snapshot's GPU processes by identity, worked out once a snapshot for the history and the diagnoser.

A process may have a row on several GPUs (and MIG devices): its identity ``(pid, started)`` names
it once, with its first row, and the rows it has beyond one are kept apart for the stages that
merge them. Each stage walked every row of every GPU for this, every tick; the same snapshot now
gives the same answer at once, and so does a snapshot whose every process list is the very tuple
of the one before (the sampler keeps a list that did not change), which is most ticks.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass

from gputop.core.model import ProcessIdentity, ProcessSample, Snapshot


@dataclass(frozen=True, slots=True)
class ProcessRows:
    """Every process of a snapshot once, by identity. Read only: the same object is handed to every reader."""

    first: dict[ProcessIdentity, ProcessSample]  # each identity's first row, in the snapshot's order
    more: dict[ProcessIdentity, list[ProcessSample]]  # all the rows of an identity with more than one


# The last snapshot worked out, its process lists, and its rows: assigned at once, so that a thread
# reading it never sees one snapshot's lists with another's rows.
_last: tuple[Snapshot | None, tuple[tuple[ProcessSample, ...], ...], ProcessRows] = (None, (), ProcessRows({}, {}))


def process_rows(snapshot: Snapshot) -> ProcessRows:
    """The processes of ``snapshot`` by identity."""
    global _last
    last_snapshot, last_lists, last_rows = _last
    if last_snapshot is snapshot:
        return last_rows
    lists = tuple(
        listed for gpu in snapshot.gpus for listed in (gpu.processes, *(mig.processes for mig in gpu.mig_devices))
    )
    if len(lists) == len(last_lists) and all(map(operator.is_, lists, last_lists)):
        _last = (snapshot, lists, last_rows)
        return last_rows
    first: dict[ProcessIdentity, ProcessSample] = {}
    more: dict[ProcessIdentity, list[ProcessSample]] = {}
    for gpu in snapshot.gpus:
        for process in gpu.all_processes():
            identity = (process.pid, process.started)
            row = first.setdefault(identity, process)
            if row is not process:
                more.setdefault(identity, [row]).append(process)
    rows = ProcessRows(first, more)
    _last = (snapshot, lists, rows)
    return rows
