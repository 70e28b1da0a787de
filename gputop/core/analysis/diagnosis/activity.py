"""Judgements on what the GPU's performance counters, PCIe link and NVLink say, tick after tick.

- **busy, few SMs**: GPU-Util at or above ``BUSY_UTILIZATION_PERCENT`` while SM
  active (GPM) stays at or below ``FEW_SMS_PERCENT`` for ``busy_idle_after_s``,
  with a process holding memory on the GPU: kernels keep the GPU "busy" but use
  few of its SMs. Unknown SM activity (no GPM, a gap) starts the count over.
- **memory-bound**: DRAM bandwidth at or above ``MEMORY_BOUND_DRAM_PERCENT``
  while tensor and the FP pipes are each at or below ``MEMORY_BOUND_PIPE_PERCENT``
  (all four known); a verdict for the detail screen and ``--json``, no alert.
- **stall evidence**: where SM activity is known the stall verdict asks it
  (SM and tensor near idle under full utilization) rather than power.
- **health**: a PCIe link below its maximum generation or width while the GPU has
  been under load (``PCIE_LOAD_PERCENT`` for ``PCIE_LOAD_S``), until the link is
  seen at its maximum: an idle GPU down-trains to save power and is not a
  problem by itself; an NVLink link that is down;
  NVLink error counters that climbed within ``NVLINK_ERRORS_OUTSTANDING_S``,
  named by link where the source knows which.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gputop.core.analysis.diagnosis.health import HealthProblem
from gputop.core.model import GpuSample, NvLink

BUSY_UTILIZATION_PERCENT = 90.0
FEW_SMS_PERCENT = 25.0
MEMORY_BOUND_DRAM_PERCENT = 80.0
MEMORY_BOUND_PIPE_PERCENT = 10.0
# A hang in a collective spins a few SMs at most: below this SM and tensor activity, "stalled".
STALL_SM_ACTIVE_PERCENT = 10.0
PCIE_LOAD_PERCENT = 50.0
PCIE_LOAD_S = 10.0
NVLINK_ERRORS_OUTSTANDING_S = 300.0


def memory_bound(gpu: GpuSample) -> bool:
    """DRAM busy while the math pipes idle: the kernels wait on memory."""
    activity = gpu.activity
    if activity is None or activity.dram_active is None:
        return False
    pipes = (activity.tensor_active, activity.fp64_active, activity.fp32_active, activity.fp16_active)
    if any(pipe is None for pipe in pipes):
        return False
    return activity.dram_active >= MEMORY_BOUND_DRAM_PERCENT and all(
        pipe is not None and pipe <= MEMORY_BOUND_PIPE_PERCENT for pipe in pipes
    )


def stall_activity(gpu: GpuSample) -> bool | None:
    """Whether SM (and tensor, where known) activity look like a hang; None where SM activity is unknown."""
    activity = gpu.activity
    if activity is None or activity.sm_active is None:
        return None
    tensor = activity.tensor_active
    return activity.sm_active <= STALL_SM_ACTIVE_PERCENT and (tensor is None or tensor <= STALL_SM_ACTIVE_PERCENT)


def _link_text(gen: int | None, width: int | None) -> str:
    return f"Gen{'?' if gen is None else gen} x{'?' if width is None else width}"


def pcie_link_text(gpu: GpuSample) -> str | None:
    """``PCIe Gen4 x8 (max Gen5 x16)``, or ``PCIe Gen5 x16`` at its maximum; None when unknown."""
    if gpu.pcie_link_gen is None and gpu.pcie_link_width is None:
        return None
    now = _link_text(gpu.pcie_link_gen, gpu.pcie_link_width)
    if below_max(gpu):
        return f"PCIe {now} (max {_link_text(gpu.pcie_link_gen_max, gpu.pcie_link_width_max)})"
    return f"PCIe {now}"


def below_max(gpu: GpuSample) -> bool:
    """The link runs below the generation or width it can (both known)."""
    gen, gen_max = gpu.pcie_link_gen, gpu.pcie_link_gen_max
    width, width_max = gpu.pcie_link_width, gpu.pcie_link_width_max
    return (gen is not None and gen_max is not None and gen < gen_max) or (
        width is not None and width_max is not None and width < width_max
    )


@dataclass(slots=True)
class _GpuState:
    busy_since: float | None = None  # busy with few SMs since
    loaded_since: float | None = None  # under load since (for the PCIe link)
    link_degraded: bool = False  # the PCIe link was seen below its maximum under load
    errors: dict[str, int] | None = None  # last tick's error counts by link ("": all links); None: no tick yet
    errors_rose: dict[str, tuple[float, int]] = field(default_factory=dict)  # link -> (when, count)
    since: dict[str, float] = field(default_factory=dict)  # health problem key -> first seen


@dataclass(frozen=True, slots=True)
class ActivityJudgement:
    """What the activity says about one GPU this tick."""

    busy_few_sms: bool
    memory_bound: bool
    health: tuple[HealthProblem, ...]


_NO_PROBLEMS = {
    (busy_few_sms, bound): ActivityJudgement(busy_few_sms=busy_few_sms, memory_bound=bound, health=())
    for busy_few_sms in (False, True)
    for bound in (False, True)
}


class ActivityJudge:
    """The judgements above for every GPU, remembering what needs time between ticks."""

    def __init__(self, busy_idle_after_s: float) -> None:
        self.busy_idle_after_s = busy_idle_after_s
        self._gpus: dict[int, _GpuState] = {}

    def update(self, gpu: GpuSample, now: float) -> ActivityJudgement:
        state = self._gpus.get(gpu.index)
        if state is None:  # not setdefault: a state made for nothing each GPU each tick
            state = self._gpus[gpu.index] = _GpuState()
        found = self._pcie(gpu, state, now) + self._nvlink(gpu.nvlink, state, now)
        busy_few_sms, bound = self._busy_few_sms(gpu, state, now), memory_bound(gpu)
        if not found:  # most GPUs, most ticks: one of four judgements made once
            state.since = {}
            return _NO_PROBLEMS[busy_few_sms, bound]
        state.since = {key: state.since.get(key, now) for key, _ in found}
        return ActivityJudgement(
            busy_few_sms=busy_few_sms,
            memory_bound=bound,
            health=tuple(HealthProblem(key, state.since[key], text) for key, text in found),
        )

    def forget(self, indices: set[int]) -> None:
        """Drop the GPUs not in ``indices``."""
        self._gpus = {index: state for index, state in self._gpus.items() if index in indices}

    def _busy_few_sms(self, gpu: GpuSample, state: _GpuState, now: float) -> bool:
        activity = gpu.activity
        sm = None if activity is None else activity.sm_active
        util = gpu.utilization_gpu
        # Whether a process holds memory asked last: a walk over every process, where the figures may say no first.
        if (
            sm is None
            or util is None
            or util < BUSY_UTILIZATION_PERCENT
            or sm > FEW_SMS_PERCENT
            or not any((process.gpu_memory or 0) > 0 for process in gpu.all_processes())
        ):
            state.busy_since = None
            return False
        if state.busy_since is None:
            state.busy_since = now
        return now - state.busy_since >= self.busy_idle_after_s

    def _pcie(self, gpu: GpuSample, state: _GpuState, now: float) -> tuple[tuple[str, str], ...]:
        util = gpu.utilization_gpu
        if not below_max(gpu):
            state.link_degraded = False
        elif state.loaded_since is not None and now - state.loaded_since >= PCIE_LOAD_S:
            # Seen below its maximum under load: a problem until the link is seen at its maximum again
            # (an idle spell, when it down-trains anyway, does not end it).
            state.link_degraded = True
        if util is not None and util >= PCIE_LOAD_PERCENT:
            if state.loaded_since is None:
                state.loaded_since = now
        else:
            state.loaded_since = None
        if not state.link_degraded:
            return ()
        return (("pcie_link", f"{pcie_link_text(gpu)} under load: the link trained below its maximum"),)

    def _nvlink(self, nvlink: NvLink | None, state: _GpuState, now: float) -> tuple[tuple[str, str], ...]:
        if nvlink is None:
            return ()
        problems = [
            (f"nvlink_down {link}", f"NVLink link {link} is down ({nvlink.links_active} of {nvlink.links_total} up)")
            for link in nvlink.links_down
        ]
        counts = {str(link): count for link, count in nvlink.errors_by_link}
        totals = (nvlink.errors_crc, nvlink.errors_replay, nvlink.errors_recovery)
        if not counts and any(total is not None for total in totals):
            counts[""] = sum(total or 0 for total in totals)
        for link, count in counts.items():
            # A link first listed now had none before (links are listed once they have errors).
            before = None if state.errors is None else state.errors.get(link, 0)
            if before is not None and count > before:
                state.errors_rose[link] = (now, count)
        state.errors = counts
        for link, (when, count) in sorted(state.errors_rose.items()):
            if now - when >= NVLINK_ERRORS_OUTSTANDING_S:
                continue
            where = f"NVLink link {link}" if link else "NVLink"
            problems.append(
                (f"nvlink_errors {link}".rstrip(), f"{where} errors climbing ({count} CRC, replay and recovery)")
            )
        state.errors_rose = {
            link: rose for link, rose in state.errors_rose.items() if now - rose[0] < NVLINK_ERRORS_OUTSTANDING_S
        }
        return tuple(problems)
