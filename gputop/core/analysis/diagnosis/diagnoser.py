"""The diagnoses of one tick: idle processes, unattributed memory, throttling, stalls, health.

Like the forecaster, the diagnoser reads each snapshot once, after it joined
the history, and keeps what it needs between ticks:

- **idle**: a process that has not used SM time for ``idle_after_s`` while
  holding at least ``idle_min_memory_gib``. Its ``idle_seconds`` count from the
  last tick its SM utilization was above 0, or from when it was first seen
  (a lower bound). A tick where its SM use is unknown (no per-process
  samples: NOT_SUPPORTED, MIG) makes it unknown and starts the count over;
  idleness is never guessed. Where the source says when a process last used
  SM time (``sm_last_active``), that time is used, even from before gputop
  first saw the process.
- **verdict**: ``"stalled"`` when utilization stays at or above
  ``stall_utilization_percent`` with power at or below
  ``stall_power_percent`` of the limit and memory flat for ``stall_after_s``
  (a job spinning in a collective); else ``"throttled"`` when a reason that
  limits performance holds the clocks down; else None. Either needs a process
  holding memory on the GPU: where nothing runs, nothing is stalled or slowed.
  Where the GPU's SM activity is known (GPM), SM and tensor activity near
  idle stand in for the power test (see ``activity``).
- **busy_few_sms**, **memory_bound** and the PCIe link and NVLink health
  problems: see ``activity``; after ``stalled`` and ``throttled`` in the verdict.
- **unattributed memory** and **health**: see ``memory`` and ``health``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

from gputop.core.analysis.diagnosis.activity import ActivityJudge, stall_activity
from gputop.core.analysis.diagnosis.health import HealthProblem, HealthTracker
from gputop.core.analysis.diagnosis.memory import GIB, Unattributed, gpu_unattributed, mig_unattributed
from gputop.core.analysis.diagnosis.reasons import limiting_reasons
from gputop.core.analysis.history import MigKey
from gputop.core.analysis.process_rows import ProcessRows, process_rows
from gputop.core.frozen_copy import maker
from gputop.core.model import GpuSample, ProcessIdentity, ProcessSample, Snapshot, percent
from gputop.core.settings import Thresholds

Verdict = Literal["throttled", "stalled", "busy_few_sms", "memory_bound"]
MIB = 1024 * 1024
# Memory counts as flat for the stall verdict while it stays this close to where it was.
STALL_MEMORY_SLACK = 64 * MIB


@dataclass(frozen=True, slots=True)
class ProcessDiagnosis:
    idle_seconds: float | None  # since it last ran on the GPU; None when unknown
    idle: bool  # idle long enough, holding enough memory
    memory: int | None  # GPU memory held, over every GPU it uses


@dataclass(frozen=True, slots=True)
class GpuDiagnosis:
    verdict: Verdict | None
    limiting: tuple[str, ...]  # reasons holding the clocks down that cost performance
    unattributed: Unattributed
    health: tuple[HealthProblem, ...]
    new_ecc_errors: bool  # the uncorrected ECC count rose this tick
    busy_few_sms: bool = False  # busy for busy_idle_after_s on few SMs (whatever the verdict)
    memory_bound: bool = False
    # What a card shows of the verdict, held by time (core.analysis.marks): set by the Watcher; None where the
    # diagnosis was made alone (the verdict as it is). Not part of the diagnosis itself (--json, recordings).
    held: HeldMarks | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class HeldMarks:
    """The verdict marks a card shows: ``verdicts`` among "throttled", "stalled" and "busy_few_sms" (more than one
    while one ends and another starts), and the throttle reasons it names (the latest seen while throttled)."""

    verdicts: frozenset[str]
    limiting: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Diagnoses:
    """Every diagnosis for one snapshot."""

    gpus: Mapping[int, GpuDiagnosis]
    migs: Mapping[MigKey, Unattributed]
    processes: Mapping[ProcessIdentity, ProcessDiagnosis]


# ProcessDiagnosis(idle_seconds, idle, memory) in half the time: thousands of idle processes a tick.
_DIAGNOSIS = maker(ProcessDiagnosis)
NO_DIAGNOSES = Diagnoses(MappingProxyType({}), MappingProxyType({}), MappingProxyType({}))


@dataclass(slots=True)
class _Activity:
    since: float  # first seen (or seen again after an unknown tick)
    last_ran: float | None = None
    # The diagnosis given last tick: given again while it holds (a running process's does, tick after
    # tick), so thousands of processes do not make thousands of new objects each tick.
    diagnosis: ProcessDiagnosis | None = None


# A process's identity, whether it ran (None: not known), the GPU memory it holds, its last SM use reported.
_Reading = tuple[ProcessIdentity, bool | None, int | None, float | None]


# A reading, and what is kept of its process from tick to tick.
_Bound = tuple[ProcessIdentity, bool | None, int | None, float | None, _Activity]


@dataclass(slots=True)
class _Stall:
    since: float
    memory: int


class Diagnoser:
    """Diagnoses tick after tick; one per stream of snapshots."""

    def __init__(self, thresholds: Thresholds | None = None) -> None:
        self.thresholds = Thresholds() if thresholds is None else thresholds
        self._activity: dict[ProcessIdentity, _Activity] = {}
        # The process rows last read, and what was read of each (_readings).
        self._rows: ProcessRows | None = None
        self._readings: list[_Bound] = []
        self._stalls: dict[int, _Stall] = {}
        self._health: dict[int, HealthTracker] = {}
        # Each GPU's sample and the thresholds its unattributed memory was judged with, the judgement, and
        # whether a process holds memory on it (_holds_memory).
        self._unattributed: dict[int, tuple[GpuSample, Thresholds, Unattributed, bool]] = {}
        self._judge = ActivityJudge(self.thresholds.busy_idle_after_s)

    def update(self, snapshot: Snapshot) -> Diagnoses:
        now = snapshot.timestamp
        limits = self.thresholds
        gpus: dict[int, GpuDiagnosis] = {}
        migs: dict[MigKey, Unattributed] = {}
        for gpu in snapshot.gpus:
            gpus[gpu.index] = self._gpu(gpu, now)
            for mig in gpu.mig_devices:
                migs[(gpu.index, mig.index)] = mig_unattributed(
                    mig, limits.unattributed_min_gib, limits.unattributed_percent
                )
        self._health = {index: tracker for index, tracker in self._health.items() if index in gpus}
        self._unattributed = {index: last for index, last in self._unattributed.items() if index in gpus}
        self._judge.forget(set(gpus))
        return Diagnoses(
            gpus=MappingProxyType(gpus),
            migs=MappingProxyType(migs),
            processes=MappingProxyType(self._processes(snapshot, now)),
        )

    def _gpu(self, gpu: GpuSample, now: float) -> GpuDiagnosis:
        limits = self.thresholds
        # Pure functions of the GPU's sample: kept while the source gives the same object (an idle GPU's).
        last = self._unattributed.get(gpu.index)
        if last is None or last[0] is not gpu or last[1] is not limits:
            unattributed = gpu_unattributed(gpu, limits.unattributed_min_gib, limits.unattributed_percent)
            last = self._unattributed[gpu.index] = (gpu, limits, unattributed, _holds_memory(gpu))
        unattributed = last[2]
        tracker = self._health.get(gpu.index)
        if tracker is None:  # not setdefault: a tracker made for nothing each GPU each tick
            tracker = self._health[gpu.index] = HealthTracker()
        if gpu.lost:
            # Its counters are not known now: what was outstanding stays so; the XIDs that explain it join.
            health, new_ecc = tracker.update_lost(gpu.health.xid_events, now), False
        elif not gpu.answering:
            # Its counters are not known now: what was outstanding stays so.
            health, new_ecc = tracker.problems, False
        else:
            health, new_ecc = tracker.update(gpu.health, now)
        if gpu.lost or not gpu.answering:
            self._stalls.pop(gpu.index, None)
            return GpuDiagnosis(
                verdict=None, limiting=(), unattributed=unattributed, health=health, new_ecc_errors=new_ecc
            )
        limiting = limiting_reasons(gpu.clock_event_reasons)
        judged = self._judge.update(gpu, now)
        verdict: Verdict | None = None
        # Judged every tick all the same, so a stall's clock runs from when it began.
        stalled = self._stalled(gpu, now)
        holds_memory = last[3]
        if holds_memory:
            if stalled:
                verdict = "stalled"
            elif limiting:
                verdict = "throttled"
            elif judged.busy_few_sms:
                verdict = "busy_few_sms"
            elif judged.memory_bound:
                verdict = "memory_bound"
        # A stalled GPU is busy on few SMs too: the stall says more, and alerts alone.
        busy_few_sms = judged.busy_few_sms and holds_memory and verdict != "stalled"
        memory_bound = judged.memory_bound and holds_memory
        return GpuDiagnosis(
            verdict=verdict,
            limiting=limiting,
            unattributed=unattributed,
            health=health + judged.health,
            new_ecc_errors=new_ecc,
            busy_few_sms=busy_few_sms,
            memory_bound=memory_bound,
        )

    def _stalled(self, gpu: GpuSample, now: float) -> bool:
        limits = self.thresholds
        power = percent(gpu.power_draw, gpu.power_limit)
        memory = gpu.memory_used
        # SM and tensor activity, where known, say directly what low power only suggests.
        idle_sms = stall_activity(gpu)
        low_power = power is not None and power <= limits.stall_power_percent
        if (
            gpu.utilization_gpu is None
            or memory is None
            or gpu.utilization_gpu < limits.stall_utilization_percent
            or not (low_power if idle_sms is None else idle_sms)
        ):
            self._stalls.pop(gpu.index, None)
            return False
        stall = self._stalls.get(gpu.index)
        if stall is None or abs(memory - stall.memory) > STALL_MEMORY_SLACK:
            self._stalls[gpu.index] = stall = _Stall(now, memory)
        return now - stall.since >= limits.stall_after_s

    def _processes(self, snapshot: Snapshot, now: float) -> dict[ProcessIdentity, ProcessDiagnosis]:
        # This runs for every process every tick: a process's one row is read as it is, and only an
        # identity with rows on several GPUs is merged (_merged).
        rows = process_rows(snapshot)
        if rows is not self._rows:
            # Read again only when the rows are new: an idle machine's ticks have last tick's.
            self._rows, self._readings = rows, self._bound(_readings(rows), now)
        idle_after, idle_memory = self.thresholds.idle_after_s, self.thresholds.idle_min_memory_gib * GIB
        diagnoses: dict[ProcessIdentity, ProcessDiagnosis] = {}
        for identity, running, held, reported, seen in self._readings:
            if running is None:
                seen.since, seen.last_ran = now, None  # unknown now: the count starts over
            if reported is not None:
                # The source's own time of the last SM use: exact, and maybe from before it was first seen.
                seen.last_ran = max(seen.last_ran or reported, reported)
            elif running:
                seen.last_ran = now
            if running is None:
                idle_seconds, idle = None, False
            else:
                # Never below 0: the driver's sample clock may run a little ahead of the snapshot's.
                idle_seconds = now - (seen.since if seen.last_ran is None else seen.last_ran)
                if idle_seconds < 0.0:
                    idle_seconds = 0.0
                idle = idle_seconds >= idle_after and held is not None and held >= idle_memory
            last = seen.diagnosis
            if last is None or last.idle_seconds != idle_seconds or last.idle != idle or last.memory != held:
                seen.diagnosis = last = _DIAGNOSIS(idle_seconds, idle, held)  # an idle one's, every tick
            diagnoses[identity] = last
        return diagnoses

    def _bound(self, readings: list[_Reading], now: float) -> list[_Bound]:
        """Each reading with what is kept of its process (new for one not seen last tick); the others are
        forgotten. Done when the rows are new: while they stay, so do the processes."""
        previous = self._activity
        self._activity = activity = {}
        for reading in readings:
            seen = previous.get(reading[0])
            activity[reading[0]] = _Activity(since=now) if seen is None else seen
        return [(*reading, activity[reading[0]]) for reading in readings]


def _readings(rows: ProcessRows) -> list[_Reading]:
    """Each identity's row (its rows merged where it has several): whether it ran, its memory, its last SM use."""
    more = rows.more
    readings: list[_Reading] = []
    for identity, process in rows.first.items():
        if more and identity in more:
            running, held, reported = _merged(more[identity])
        else:
            util = process.sm_utilization
            # A stale row (its GPU not answering) says nothing about now.
            running = None if util is None or process.stale else util > 0
            held, reported = process.gpu_memory, process.sm_last_active
        readings.append((identity, running, held, reported))
    return readings


def _merged(rows: list[ProcessSample]) -> tuple[bool | None, int | None, float | None]:
    """One identity's rows on several GPUs: it ran if it ran on any of them, and it is unknown if it is
    unknown on one and ran on none; its memory summed (None if one's is unknown); the latest SM use reported."""
    ran: bool | None = False
    memory: int | None = 0
    reported: float | None = None
    for at, process in enumerate(rows):
        util = process.sm_utilization
        running = None if util is None or process.stale else util > 0
        if at == 0:
            ran = running
        elif ran is not True:
            ran = True if running else None if running is None or ran is None else False
        held = process.gpu_memory
        memory = None if memory is None or held is None else memory + held
        last_active = process.sm_last_active
        if last_active is not None:
            reported = last_active if reported is None else max(reported, last_active)
    return ran, memory, reported


def _holds_memory(gpu: GpuSample) -> bool:
    """Whether a process listed on the GPU (or a MIG device of it) holds GPU memory."""
    return any(process.gpu_memory for process in gpu.all_processes() if not process.stale)
