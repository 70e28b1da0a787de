"""Every diagnosis of one tick as a line of text: the ``--once`` problems section and the detail screen."""

from __future__ import annotations

import time
from dataclasses import dataclass

from gputop.core.analysis.diagnosis.diagnoser import Diagnoses
from gputop.core.analysis.diagnosis.memory import Hidden, Unattributed
from gputop.core.analysis.diagnosis.reasons import reason_words
from gputop.core.format import fmt_bytes, fmt_duration, fmt_percent, safe_text
from gputop.core.host.visibility import reason_words as visibility_reason
from gputop.core.model import GpuSample, Snapshot, percent


@dataclass(frozen=True, slots=True)
class Problem:
    gpu_index: int
    mig_index: int | None
    kind: str  # "idle", "unattributed", "throttled", "stalled", "busy_few_sms" or "health"
    text: str

    @property
    def device(self) -> str:
        return f"GPU {self.gpu_index}" if self.mig_index is None else f"GPU {self.gpu_index} MIG {self.mig_index}"


def throttle_text(limiting: tuple[str, ...]) -> str:
    """``THROTTLED · power cap``: the most severe reason first."""
    return "THROTTLED · " + ", ".join(reason_words(name) for name in limiting)


def _stall_text(gpu: GpuSample) -> str:
    power = fmt_percent(percent(gpu.power_draw, gpu.power_limit))
    return f"STALLED? {fmt_percent(gpu.utilization_gpu)} busy at {power} of its power limit, memory flat"


def _hidden_text(hidden: tuple[Hidden, ...]) -> str:
    """``2 listed but not visible here: 1 exited (2.0GiB), 1 other PID namespace (4.0GiB)``."""
    count = sum(group.processes for group in hidden)
    groups = ", ".join(f"{g.processes} {visibility_reason(g.reason)} ({fmt_bytes(g.memory)})" for g in hidden)
    return f"{count} listed but not visible here: {groups}"


def _unattributed_text(unattributed: Unattributed) -> str:
    text = f"(no process) {fmt_bytes(unattributed.memory)} of memory no listed process accounts for"
    if unattributed.hidden:
        text += f"; {_hidden_text(unattributed.hidden)}"
    return text


def problem_counts(snapshot: Snapshot, diagnoses: Diagnoses) -> dict[int, dict[str, int]]:
    """GPU index -> problem kind -> how many (idle processes, unattributed devices, verdict, health problems)."""
    counts: dict[int, dict[str, int]] = {gpu.index: {} for gpu in snapshot.gpus}
    for problem in problems(snapshot, diagnoses):
        kinds = counts[problem.gpu_index]
        kinds[problem.kind] = kinds.get(problem.kind, 0) + 1
    return counts


def problems(snapshot: Snapshot, diagnoses: Diagnoses) -> list[Problem]:
    """Every problem the diagnoses found, GPU by GPU."""
    found: list[Problem] = []
    for gpu in snapshot.gpus:
        diagnosis = diagnoses.gpus.get(gpu.index)
        if diagnosis is None:
            continue
        if diagnosis.verdict == "stalled":
            found.append(Problem(gpu.index, None, "stalled", _stall_text(gpu)))
        elif diagnosis.verdict == "throttled":
            found.append(Problem(gpu.index, None, "throttled", throttle_text(diagnosis.limiting)))
        if diagnosis.busy_few_sms:
            sm = None if gpu.activity is None else gpu.activity.sm_active
            text = f"BUSY, FEW SMs {fmt_percent(gpu.utilization_gpu)} busy with {fmt_percent(sm)} of its SMs active"
            found.append(Problem(gpu.index, None, "busy_few_sms", text))
        unattributed = diagnosis.unattributed
        if unattributed.shown:
            text = _unattributed_text(unattributed)
            found.append(Problem(gpu.index, None, "unattributed", text))
        for mig in gpu.mig_devices:
            mig_unattributed = diagnoses.migs.get((gpu.index, mig.index))
            if mig_unattributed is not None and mig_unattributed.shown:
                text = _unattributed_text(mig_unattributed)
                found.append(Problem(gpu.index, mig.index, "unattributed", text))
        for process in gpu.all_processes():
            process_diagnosis = diagnoses.processes.get(process.identity)
            if process_diagnosis is not None and process_diagnosis.idle:
                who = (
                    f"PID {process.pid} ({safe_text(process.name or '?')}, {safe_text(process.user or 'unknown user')})"
                )
                text = (
                    f"{who} idle {fmt_duration(process_diagnosis.idle_seconds)},"
                    f" holding {fmt_bytes(process.gpu_memory)}"
                )
                found.append(Problem(gpu.index, process.mig_index, "idle", text))
        for problem in diagnosis.health:
            since = time.strftime("%H:%M:%S", time.localtime(problem.since))
            found.append(Problem(gpu.index, None, "health", f"{problem.text} ({since})"))
    return found
