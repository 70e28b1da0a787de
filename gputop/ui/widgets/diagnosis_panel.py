"""The detail screen's account of what is wrong with one GPU, and what to do about it.

Hidden while nothing is wrong. Each problem says what gputop saw and its likely causes:
throttle reasons in words with the SM clock against its maximum, the stall verdict, memory
no process accounts for, health problems with their times, idle processes.
"""

from __future__ import annotations

import time

from rich.text import Text
from textual.widgets import Static

from gputop.core.analysis.diagnosis import Diagnoses, GpuDiagnosis
from gputop.core.analysis.diagnosis.problems import problems, throttle_text
from gputop.core.analysis.diagnosis.reasons import reason_words
from gputop.core.format import NA, fmt_percent, safe_text
from gputop.core.host.pidns import in_host_pid_namespace
from gputop.core.host.visibility import PID_NAMESPACE
from gputop.core.model import GpuSample, Snapshot

_ON_THE_HOST = "run it with --pid=host, or `nvidia-smi --query-compute-apps=pid,used_memory --format=csv` on the host"
_OTHER_CAUSES = "a process that exited while its GPU context lingers; memory the driver itself holds"


def unattributed_causes(host_namespace: bool | None) -> str:
    """The likely causes of memory no listed process accounts for, by whether gputop runs in the host's
    PID namespace (None: not known, as in the demo or a replay): a cause ruled out is not offered."""
    if host_namespace is False:
        return (f"Likely: processes in another PID namespace (gputop in a container without --pid=host sees none"
                f" of the host's: {_ON_THE_HOST}); {_OTHER_CAUSES}.")
    if host_namespace:
        return f"Likely: {_OTHER_CAUSES} (gputop runs in the host's PID namespace: no process is hidden by one)."
    return (f"Likely: {_OTHER_CAUSES}; or, if gputop runs in a container without --pid=host, processes of the"
            f" host it cannot see ({_ON_THE_HOST}).")


def _host_namespace(snapshot: Snapshot, hidden_reasons: set[str | None]) -> bool | None:
    """Whether the machine shown was watched from the host's PID namespace, as far as is known."""
    if PID_NAMESPACE in hidden_reasons:
        return False  # the sampler found a listed process hidden by one
    if snapshot.source == "nvml":  # live: this gputop's own namespace, read once and kept
        return in_host_pid_namespace()
    return None  # the demo or a recording: not this machine's
STALL_ADVICE = (
    "busy at low power with memory flat: the signature of a job spinning in a collective (an NCCL hang);"
    " look at its other ranks"
)


BUSY_ADVICE = (
    "the GPU counts as busy, but its kernels keep only {sm} of its SMs working: tiny kernels, a launch-bound"
    " loop, small batches, or a collective waiting on another rank; a larger batch or fused kernels use more of it"
)
MEMORY_BOUND_ADVICE = (
    "DRAM bandwidth at {dram} while the tensor and FP pipes idle: the kernels wait on memory; fewer passes over"
    " the data (fusion, lower precision) help more than a faster GPU"
)


def _clock_line(gpu: GpuSample) -> str:
    sm = NA if gpu.clock_sm is None else f"{gpu.clock_sm}"
    top = NA if gpu.clock_sm_max is None else f"{gpu.clock_sm_max}"
    return f"SM clock {sm} of {top} MHz"


def diagnosis_text(gpu: GpuSample, diagnosis: GpuDiagnosis | None, snapshot: Snapshot, diagnoses: Diagnoses) -> Text:
    """What is wrong with ``gpu``, in words; empty when nothing is."""
    text = Text()
    if diagnosis is None:
        return text
    if diagnosis.verdict == "stalled":
        text.append(" STALLED? ", style="bold red").append(f"{STALL_ADVICE}\n")
    activity = gpu.activity
    if diagnosis.busy_few_sms:
        sm = fmt_percent(None if activity is None else activity.sm_active)
        text.append(" BUSY, FEW SMs ", style="bold yellow").append(f"{BUSY_ADVICE.format(sm=sm)}\n")
    if diagnosis.memory_bound:
        dram = fmt_percent(None if activity is None else activity.dram_active)
        text.append(" MEMORY-BOUND ", style="bold yellow").append(f"{MEMORY_BOUND_ADVICE.format(dram=dram)}\n")
    if diagnosis.limiting:
        reasons = ", ".join(reason_words(name) for name in gpu.clock_event_reasons or ())
        text.append(f" {throttle_text(diagnosis.limiting)} ", style="bold yellow")
        text.append(f"{_clock_line(gpu)}; clock event reasons: {reasons}\n")
    unattributed = False
    hidden_reasons = {process.not_visible_reason for process in gpu.all_processes() if not process.visible}
    for problem in problems(snapshot, diagnoses):
        if problem.gpu_index != gpu.index:
            continue
        if problem.kind == "unattributed":
            text.append(f" {problem.device} ", style="bold yellow").append(f"{safe_text(problem.text)}.\n")
            unattributed = True
        elif problem.kind == "idle":
            text.append(" IDLE ", style="bold yellow").append(f"{safe_text(problem.text)}\n")
    if unattributed:
        text.append(f"   {unattributed_causes(_host_namespace(snapshot, hidden_reasons))}\n", style="dim")
    for health in diagnosis.health:
        since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(health.since))
        text.append(" HEALTH ", style="bold red").append(f"{since}  {health.text}\n")
    text.rstrip()
    return text


class DiagnosisPanel(Static):
    """What is wrong with one GPU; hidden when nothing is."""

    DEFAULT_CSS = """
    DiagnosisPanel { height: auto; max-height: 10; padding: 0 1; border: round $warning; display: none; }
    """

    def show(self, snapshot: Snapshot, diagnoses: Diagnoses | None, index: int) -> None:
        gpu = next((g for g in snapshot.gpus if g.index == index), None)
        text = (
            Text()
            if gpu is None or diagnoses is None
            else diagnosis_text(gpu, diagnoses.gpus.get(index), snapshot, diagnoses)
        )
        self.display = bool(text.plain)
        self.border_title = f"What is wrong with GPU {index}"
        self.update(text)
