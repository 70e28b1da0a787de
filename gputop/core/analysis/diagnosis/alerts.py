"""Alert changes the diagnoses call for: idle hogs, throttling, stalls, health.

The alert monitor applies them like its own: an alert is raised once when its
condition starts and cleared once when it ends.

- ``idle``: per process, while it is idle (see the diagnoser); cleared when it
  runs again or exits. Unknown idleness leaves the alert as it is.
- ``throttle``: while HW slowdown, HW or SW thermal slowdown, or HW power
  brake holds the clocks down (a power cap alone is the GPU working as set).
- ``stall``: while the verdict is ``stalled``.
- ``busy``: while the GPU is busy on few SMs (``busy_few_sms``, see ``activity``).
- ``health``: per outstanding problem; new uncorrected ECC errors update it
  with the new count (one alert per problem, however often the count climbs).
  An XID alert leaves the active set without a cleared event when it stops
  being outstanding: it was an event, not a state.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Literal

from gputop.core.analysis.diagnosis.diagnoser import Diagnoses, GpuDiagnosis
from gputop.core.analysis.diagnosis.reasons import ALERTING, reason_words
from gputop.core.format import fmt_bytes, fmt_duration, fmt_percent, safe_text
from gputop.core.frozen_copy import keyword_maker
from gputop.core.model import GpuSample, ProcessSample, Snapshot, percent

DiagnosisKind = Literal["idle", "throttle", "stall", "health", "busy"]
# (kind, gpu index, MIG device index or None, subject: a process or a health problem)
DiagnosisKey = tuple[DiagnosisKind, int, "int | None", "str | None"]
# The messages an alert is raised and cleared with, written only when it is (most ticks raise nothing).
Words = Callable[[], tuple[str, str]]


def _no_words() -> tuple[str, str]:
    return "", ""


@dataclass(frozen=True, slots=True)
class Change:
    """Raise (condition True) or clear (False) the alert ``key``; None leaves it."""

    key: DiagnosisKey
    condition: bool | None
    words: Words = _no_words
    update: bool = False  # while raised, its message says more now (a count that climbed)
    silent: bool = False  # clear without an event


# Change(...) at two thirds of the cost: a few for every GPU every tick.
_CHANGE = keyword_maker(Change)

# What it means when a health problem is no longer reported.
_RESOLVED = {
    "ecc": "no uncorrected ECC errors since the driver loaded (it was reloaded)",
    "remap_pending": "the pending row remap was applied",
    "remap_failure": "no row remap failure reported any more",
    "retired_pending": "the pending page retirement was applied",
    "pcie_link": "the PCIe link is back at its maximum",
}


_IDLE = operator.attrgetter("idle")


def _subject(process: ProcessSample) -> str:
    return f"{process.pid}@{process.started}"


def _who(process: ProcessSample) -> str:
    name = safe_text(process.name) if process.name else "?"
    user = safe_text(process.user) if process.user else "unknown user"
    return f"PID {process.pid} ({name}, {user})"


def _raised_while_lost(gpu_index: int, diagnosis: GpuDiagnosis, present: set[DiagnosisKey]) -> list[Change]:
    """The health problems of a lost GPU not raised yet: the XID the driver sent while it was lost explains
    it, so it is raised now, not when the GPU answers again. Adds their keys to ``present``."""
    changes = []
    for problem in diagnosis.health:
        key: DiagnosisKey = ("health", gpu_index, None, problem.key)
        if key not in present:
            present.add(key)
            changes.append(_CHANGE(key=key, condition=True, words=_health_words(gpu_index, problem.text)))
    return changes


def diagnosis_changes(snapshot: Snapshot, diagnoses: Diagnoses, active: Collection[DiagnosisKey]) -> list[Change]:
    """What the diagnoses of ``snapshot`` raise and clear, given the alerts ``active`` now. A condition that is
    unknown or as its alert already is gives no change (the monitor's hold ends a run not stepped)."""
    changes: list[Change] = []
    present: set[DiagnosisKey] = set()
    active = set(active)
    gpus_with_idle_alerts = {key[1] for key in active if key[0] == "idle"}
    process_diagnoses = diagnoses.processes
    # Most ticks no process is idle: then only a GPU with idle alerts to clear walks its processes.
    any_idle = any(map(_IDLE, process_diagnoses.values()))
    for gpu in snapshot.gpus:
        diagnosis = diagnoses.gpus.get(gpu.index)
        if diagnosis is None or gpu.lost or not gpu.answering:
            present |= {key for key in active if key[1] == gpu.index and key[0] != "idle"}
            if diagnosis is not None and gpu.lost:
                changes += _raised_while_lost(gpu.index, diagnosis, present)
            continue
        reasons = gpu.clock_event_reasons
        alerting = [name for name in reasons or () if name in ALERTING]
        # A condition unknown, or as the alert already is, changes nothing (the monitor's hold ends a run
        # not stepped): no change is made for it, the case of every GPU on most ticks.
        key: DiagnosisKey = ("throttle", gpu.index, None, None)
        present.add(key)
        condition = None if reasons is None else bool(alerting)
        if condition is not None and condition != (key in active):
            changes.append(_CHANGE(key=key, condition=condition, words=_throttle_words(gpu.index, alerting)))
        key = ("stall", gpu.index, None, None)
        present.add(key)
        if (diagnosis.verdict == "stalled") != (key in active):
            changes.append(_CHANGE(key=key, condition=diagnosis.verdict == "stalled", words=_stall_words(gpu)))
        key = ("busy", gpu.index, None, None)
        present.add(key)
        if diagnosis.busy_few_sms != (key in active):
            changes.append(_CHANGE(key=key, condition=diagnosis.busy_few_sms, words=_busy_words(gpu)))
        for problem in diagnosis.health:
            key = ("health", gpu.index, None, problem.key)
            present.add(key)
            changes.append(
                _CHANGE(
                    key=key,
                    condition=True,
                    words=_health_words(gpu.index, problem.text),
                    update=problem.key == "ecc" and diagnosis.new_ecc_errors,
                )
            )
        alerts_to_clear = gpu.index in gpus_with_idle_alerts
        for process in gpu.all_processes() if any_idle or alerts_to_clear else ():
            process_diagnosis = process_diagnoses.get((process.pid, process.started))
            if process_diagnosis is None or not (process_diagnosis.idle or alerts_to_clear):
                continue  # not idle, and no idle alert on this GPU that it could end: nothing to do
            key = ("idle", gpu.index, process.mig_index, _subject(process))
            if key in present:
                continue
            present.add(key)
            idle = None if process_diagnosis.idle_seconds is None else process_diagnosis.idle
            if idle is None or idle == (key in active):
                continue  # nothing to raise or clear: no message to write (thousands of processes a tick)
            message = f"{_who(process)} idle {fmt_duration(process_diagnosis.idle_seconds)} on GPU {gpu.index},"
            message += f" holding {fmt_bytes(process_diagnosis.memory)}"
            changes.append(_CHANGE(
                key=key, condition=idle, words=_words(message, f"{_who(process)} on GPU {gpu.index} is no longer idle")
            ))
    for key in active:
        if key not in present:
            kind, gpu_index, _mig, subject = key
            gone = {
                "idle": f"PID {(subject or '').split('@')[0]} on GPU {gpu_index} has exited",
                "health": f"GPU {gpu_index} health: {_RESOLVED.get(subject or '', 'resolved')}",
            }.get(kind, f"GPU {gpu_index} {kind} alert ended")
            is_xid = kind == "health" and (subject or "").startswith("xid ")
            changes.append(_CHANGE(key=key, condition=False, words=_words("", gone), silent=is_xid))
    return changes


def _words(message: str, cleared_message: str) -> Words:
    """Messages written already (an alert raised or cleared this tick)."""
    return lambda: (message, cleared_message)


def _health_words(gpu_index: int, text: str) -> Words:
    return lambda: (f"GPU {gpu_index} health: {text}", "")


def _throttle_words(gpu_index: int, alerting: list[str]) -> Words:
    def words() -> tuple[str, str]:
        named = ", ".join(reason_words(name) for name in alerting)
        return f"GPU {gpu_index} throttled: {named}", f"GPU {gpu_index} no longer throttled"

    return words


def _stall_words(gpu: GpuSample) -> Words:
    def words() -> tuple[str, str]:
        power = fmt_percent(percent(gpu.power_draw, gpu.power_limit))
        return (
            f"GPU {gpu.index} may be stalled: {fmt_percent(gpu.utilization_gpu)} busy at {power} of its"
            " power limit with memory flat (a job spinning in a collective?)",
            f"GPU {gpu.index} no longer looks stalled",
        )

    return words


def _busy_words(gpu: GpuSample) -> Words:
    def words() -> tuple[str, str]:
        sm_active = None if gpu.activity is None else gpu.activity.sm_active
        return (
            f"GPU {gpu.index} busy on few SMs: {fmt_percent(gpu.utilization_gpu)} busy but only"
            f" {fmt_percent(sm_active)} of its SMs active (tiny kernels, launch-bound, small batches"
            " or a waiting collective?)",
            f"GPU {gpu.index} no longer busy on few SMs",
        )

    return words
