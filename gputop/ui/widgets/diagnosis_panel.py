"""The detail screen's account of what is wrong with one GPU, and what to do about it.

Hidden while nothing is wrong. Every problem, worst first as on the card: health problems with their
times, memory full and heat (the alerts raised on it, a MIG device's too), throttle reasons in words with
the SM clock against its maximum, the stall verdict, few SMs busy, memory no process accounts for, idle
processes; each with what gputop saw and its likely causes. Where they do not fit, the box scrolls and says so.
"""

from __future__ import annotations

import time
from collections.abc import Collection

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from gputop.core.analysis.alerts import AlertEvent
from gputop.core.analysis.diagnosis import Diagnoses, GpuDiagnosis
from gputop.core.analysis.diagnosis.problems import problems, throttle_text
from gputop.core.analysis.diagnosis.reasons import reason_words
from gputop.core.format import NA, fmt_bytes, fmt_percent, fmt_temperature, safe_text
from gputop.core.host.pidns import in_host_pid_namespace
from gputop.core.host.visibility import PID_NAMESPACE
from gputop.core.model import GpuSample, Snapshot, percent

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


def _memory_lines(gpu: GpuSample, alerts: Collection[AlertEvent]) -> list[str]:
    """The GPU's or MIG devices' memory alerts raised, each with the device's figures now."""
    lines = []
    migs = {mig.index: mig for mig in gpu.mig_devices}
    for alert in sorted(alerts, key=lambda alert: -1 if alert.mig_index is None else alert.mig_index):
        if alert.kind != "memory":
            continue
        device = gpu if alert.mig_index is None else migs.get(alert.mig_index)
        if device is None:
            continue
        name = "" if alert.mig_index is None else f"MIG {alert.mig_index} "
        used, total = device.memory_used, device.memory_total
        lines.append(f"{name}{fmt_percent(percent(used, total))} in use ({fmt_bytes(used)} of {fmt_bytes(total)})")
    return lines


def _hot_line(gpu: GpuSample) -> str:
    temperature, slowdown = gpu.temperature, gpu.temperature_slowdown
    if temperature is None or slowdown is None:
        return f"{fmt_temperature(temperature)} (slowdown {fmt_temperature(slowdown)})"
    below = slowdown - temperature
    where = f"{below:.0f} °C below" if below >= 0 else f"{-below:.0f} °C above"
    return f"{temperature:.0f} °C, {where} its slowdown temperature ({slowdown:.0f} °C), where it slows itself down"


def _held_verdicts(diagnosis: GpuDiagnosis) -> tuple[frozenset[str], tuple[str, ...]]:
    """The verdicts the card shows (held by time where the Watcher held them) and the throttle reasons."""
    if diagnosis.held is not None:
        return diagnosis.held.verdicts, diagnosis.held.limiting
    verdicts = {diagnosis.verdict} if diagnosis.verdict in ("throttled", "stalled") else set()
    return frozenset(verdicts), diagnosis.limiting


def diagnosis_text(
    gpu: GpuSample,
    diagnosis: GpuDiagnosis | None,
    snapshot: Snapshot,
    diagnoses: Diagnoses,
    *,
    alerts: Collection[AlertEvent] = (),
) -> Text:
    """Every problem of ``gpu`` in words, worst first as on its card (health, memory, heat, throttling, a stall,
    then the lesser ones); ``alerts``: the alerts raised on it. Empty when nothing is wrong."""
    text = Text()
    if diagnosis is not None:
        for health in diagnosis.health:
            since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(health.since))
            text.append(" HEALTH ", style="bold red").append(f"{since}  {health.text}\n")
    for line in _memory_lines(gpu, alerts):
        text.append(" MEMORY ", style="bold red").append(f"{line}\n")
    if any(alert.kind == "thermal" for alert in alerts):
        text.append(" HOT ", style="bold red").append(f"{_hot_line(gpu)}\n")
    if diagnosis is None:
        text.rstrip()
        return text
    verdicts, limiting = _held_verdicts(diagnosis)
    if "throttled" in verdicts or diagnosis.limiting:
        reasons = ", ".join(reason_words(name) for name in gpu.clock_event_reasons or ()) or "none now"
        text.append(f" {throttle_text(diagnosis.limiting or limiting)} ", style="bold yellow")
        text.append(f"{_clock_line(gpu)}; clock event reasons: {reasons}\n")
    if "stalled" in verdicts or diagnosis.verdict == "stalled":
        text.append(" STALLED? ", style="bold red").append(f"{STALL_ADVICE}\n")
    activity = gpu.activity
    if diagnosis.busy_few_sms:
        sm = fmt_percent(None if activity is None else activity.sm_active)
        text.append(" BUSY, FEW SMs ", style="bold yellow").append(f"{BUSY_ADVICE.format(sm=sm)}\n")
    if diagnosis.memory_bound:
        dram = fmt_percent(None if activity is None else activity.dram_active)
        text.append(" MEMORY-BOUND ", style="bold yellow").append(f"{MEMORY_BOUND_ADVICE.format(dram=dram)}\n")
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
    text.rstrip()
    return text


class DiagnosisPanel(VerticalScroll, can_focus=True):
    """What is wrong with one GPU; hidden when nothing is. Taller than its room it scrolls (the wheel, or Tab to
    it and the arrows), and its border says how many lines are out of sight."""

    DEFAULT_CSS = """
    DiagnosisPanel {
        height: auto; max-height: 10; padding: 0 1; border: round $warning; display: none;
        scrollbar-size-vertical: 1;
    }
    DiagnosisPanel:focus { border: round $accent; }
    DiagnosisPanel > Static { height: auto; }
    """

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 - Textual's name
        super().__init__(id=id)
        self.text = Text()  # what it says now

    def compose(self) -> ComposeResult:
        yield Static()

    def show(
        self,
        snapshot: Snapshot,
        diagnoses: Diagnoses | None,
        index: int,
        alerts: Collection[AlertEvent] = (),
    ) -> None:
        gpu = next((g for g in snapshot.gpus if g.index == index), None)
        self.text = (
            Text()
            if gpu is None or diagnoses is None
            else diagnosis_text(gpu, diagnoses.gpus.get(index), snapshot, diagnoses, alerts=alerts)
        )
        self.display = bool(self.text.plain)
        self.border_title = f"What is wrong with GPU {index}"
        self.query_one(Static).update(self.text)
        self.call_after_refresh(self.show_hint)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        self.show_hint()

    def on_resize(self) -> None:
        self.call_after_refresh(self.show_hint)

    def show_hint(self) -> None:
        """``↓ 3 more lines: scroll`` under the lines out of sight, ``↑ 2 above`` once scrolled down."""
        below = max(0, round(self.max_scroll_y - self.scroll_y))
        above = max(0, round(self.scroll_y))
        hints = []
        if above:
            hints.append(f"↑ {above} above")
        if below:
            hints.append(f"↓ {below} more line{'s' if below != 1 else ''}: scroll, or Tab here and ↓")
        self.border_subtitle = " · ".join(hints) or None
