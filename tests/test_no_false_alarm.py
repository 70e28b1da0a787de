"""No false alarm, by property (issue 28): random but valid driver states, through the real nvidia-ml-py
and the fake libnvidia-ml.so.1, never crash gputop, never make an output invalid, and never raise an
alert whose condition the state does not contain.

Seeded and reproducible: ``GPUTOP_PROPERTY_SEED`` (default 28) picks the run, ``GPUTOP_PROPERTY_STATES``
how many driver states it goes through (default 150, a few seconds; the slow tier in CONTRIBUTING.md
runs 5000). A failure names the seed and the state, so that it can be replayed.

Each state is what the driver answers at one tick: every figure at random, at its limits (0, the
largest the NVML type holds), or not supported; memory used above the total, utilization above 100,
clocks at 0; errors on any call; GPUs lost and back; processes appearing and vanishing, with memory
not available; ECC counts, remaps, XID events; MIG mode with and without instances; a size probe
answered with SUCCESS. The alerts are checked against the state written (the ground truth), not
against what gputop made of it; an alert held by time (memory, heat, throttling) against every state of
the 3 s before it was raised.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import random
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest
from fakenvml import NO_SUCH_PID, NOT_AVAILABLE, FakeNvml, GiB, MiB, Scenario
from fakenvml.calls import TEMPERATURE_CALL
from prometheus_client.exposition import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from gputop.core.analysis.alerts import AlertEvent
from gputop.core.analysis.diagnosis.problems import problems
from gputop.core.analysis.diagnosis.reasons import ALERTING, REASONS
from gputop.core.analysis.foresight import Watcher
from gputop.core.model import Snapshot
from gputop.core.output.exporter import SnapshotCollector, make_registry
from gputop.core.output.once_table import render_text
from gputop.core.output.snapshot_decode import snapshot_from_dict
from gputop.core.output.snapshot_json import dumps, snapshot_to_dict
from gputop.core.sampler import Sampler
from gputop.core.settings import Thresholds
from gputop.core.sources.nvml import NvmlSource

SEED = int(os.environ.get("GPUTOP_PROPERTY_SEED", "28"))
STATES = int(os.environ.get("GPUTOP_PROPERTY_STATES", "150"))
GPUS = 3
U32 = 2**32 - 1
MEMORY_LIMIT = 2**62  # the fake reads numbers as signed 64-bit
# Short enough that stalls, idle processes and forecasts happen within a run, so they are checked too.
THRESHOLDS = Thresholds(idle_after_s=60.0, stall_after_s=30.0)
ALERTING_BITS = sum(bit for bit, name, _words in REASONS if name in ALERTING)
PROCESS_LISTS = ("nvmlDeviceGetComputeRunningProcesses", "nvmlDeviceGetGraphicsRunningProcesses")
# Calls an error may be injected into (besides a whole GPU lost): any NVML answer may be missing.
FAULTY = (
    "nvmlDeviceGetMemoryInfo", "nvmlDeviceGetUtilizationRates", "nvmlDeviceGetPowerUsage",
    TEMPERATURE_CALL, "nvmlDeviceGetClockInfo", "nvmlDeviceGetProcessUtilization",
    "nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetFieldValues", "nvmlDeviceGetTotalEccErrors",
    "nvmlDeviceGetRemappedRows",
    "nvmlDeviceGetMigMode", *PROCESS_LISTS,
)  # fmt: skip
FAULTS = ("NOT_SUPPORTED", "NO_PERMISSION", "TIMEOUT", "INSUFFICIENT_SIZE", "INVALID_ARGUMENT")
# Field ids the field batch may refuse (the classic calls answering instead): none, all, the ECC
# counts, the row remapping, pages pending retirement.
REFUSED: tuple[tuple[int, ...] | str, ...] = ((), (), (), (), "*", (4, 6), (142, 143, 144, 145), (31,))


@dataclass
class Process:
    pid: int
    used: int | str
    kind: str
    sm: int | None
    mig: int | None


@dataclass
class Gpu:
    """One GPU's fixed facts for the run, and its state now."""

    static: dict[str, object]
    mig_mode: bool
    migs: list[int]
    fields: dict[str, object] = field(default_factory=dict)
    lost: bool = False
    spinning: bool = False  # busy at low power for a while: a stall, if a process holds memory
    processes: dict[int, Process] = field(default_factory=dict)
    errors: list[tuple[str, str]] = field(default_factory=list)
    refused: tuple[int, ...] | str = ()  # field ids the batch refuses ("*": all) while the classic calls answer


@dataclass
class State:
    """What the driver answers at one tick, and when."""

    time: float
    gpus: list[Gpu]
    xids: list[tuple[int, int]]
    size_probe: str | None

    def scenario(self) -> Scenario:
        scenario = Scenario(size_probe=self.size_probe)
        for index, gpu in enumerate(self.gpus):
            scenario.gpu(**gpu.static, **gpu.fields, mig_mode=int(gpu.mig_mode))
            for slot in gpu.migs:
                scenario.mig(index, slot, memory_total=10 * GiB, memory_used=GiB)
            for process in gpu.processes.values():
                scenario.process(index, process.pid, process.used, process.kind, mig=process.mig, sm=process.sm)
            for fn, code in gpu.errors:
                scenario.error(fn, code, gpu=index)
            if gpu.refused:
                scenario.refuse_fields(gpu.refused, gpu=index)
            if gpu.lost:
                scenario.lost(index)
        for index, code in self.xids:
            scenario.xid(index, code)
        return scenario


def _pick(rng: random.Random, normal: int, limits: tuple[int, ...], none_ok: bool = True) -> int | None:
    """A figure: usually ``normal``, sometimes one of its limits, sometimes not supported (None)."""
    roll = rng.random()
    if none_ok and roll < 0.08:
        return None
    if roll < 0.2:
        return rng.choice(limits)
    return normal


class Machine:
    """A random walk through driver states, seeded."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.time = 1_700_000_000.0
        self.next_pid = NO_SUCH_PID
        self.xids: list[tuple[int, int]] = []
        self.gpus = [self._new_gpu(index) for index in range(GPUS)]

    def _new_gpu(self, index: int) -> Gpu:
        rng = self.rng
        static = {
            "temperature_slowdown": _pick(rng, rng.randint(80, 95), (0, U32)),
            "temperature_shutdown": _pick(rng, rng.randint(90, 100), (0,)),
            "power_limit_mw": _pick(rng, rng.choice((300_000, 700_000)), (0, 1, U32)),
            "clock_sm_max": _pick(rng, 1980, (0,)),
            "clock_mem_max": _pick(rng, 2619, (0,)),
            # The driver gives its memory figures all together or not at all (an error on the call).
            "memory_total": _pick(rng, 80 * GiB, (0, 1, MEMORY_LIMIT), none_ok=False),
        }
        mig_mode = index == GPUS - 1 and rng.random() < 0.7
        migs = sorted(rng.sample(range(7), rng.randint(0, 2))) if mig_mode else []
        return Gpu(static=static, mig_mode=mig_mode, migs=migs)

    def step(self) -> State:
        rng = self.rng
        self.time += rng.choice((0.5, 1.0, 5.0, 15.0, 30.0))
        for index, gpu in enumerate(self.gpus):
            gpu.lost = rng.random() < 0.6 if gpu.lost else rng.random() < 0.05
            total = gpu.static["memory_total"]
            base = total if isinstance(total, int) and total > 1 else 80 * GiB
            used_normal = rng.choice((0, base // 3, base * 9 // 10, base, base + GiB))
            previous = gpu.fields.get("memory_used")
            if isinstance(previous, int) and rng.random() < 0.3:  # memory climbing, for the forecast
                used_normal = min(MEMORY_LIMIT, previous + rng.choice((1, 256)) * MiB)
            gpu.fields = {
                "memory_used": _pick(rng, used_normal, (0, MEMORY_LIMIT), none_ok=False),
                "memory_reserved": _pick(rng, 512 * MiB, (0,), none_ok=False),
                "util_gpu": _pick(rng, rng.choice((0, 50, 97, 100)), (0, 101, U32)),
                "util_memory": _pick(rng, rng.randint(0, 100), (0, U32)),
                "temperature": _pick(rng, rng.choice((35, 70, 83, 90)), (0, U32)),
                "fan": _pick(rng, rng.randint(0, 100), (0, 255, U32)),
                "power_mw": _pick(rng, rng.choice((20_000, 100_000, 400_000)), (0, U32)),
                "clock_sm": _pick(rng, 1410, (0,)),
                "clock_mem": _pick(rng, 2619, (0,)),
                "pstate": _pick(rng, rng.randint(0, 12), (0, 15, 32)),
                "pcie_rx_kbs": _pick(rng, 1000, (0, U32)),
                "clocks_event_reasons": _pick(rng, rng.choice((0x1, 0x4, 0x8, 0x40, 0x4 | 0x20)), (0, 0x1FF)),
                "ecc_volatile": _pick(rng, rng.choice((0, 0, 0, 1, 5)), (0, U32)),
                "ecc_aggregate": _pick(rng, rng.choice((0, 3)), (0,)),
                "remap_pending": _pick(rng, int(rng.random() < 0.05), (0,)),
                "remap_failure": _pick(rng, int(rng.random() < 0.02), (0,)),
                "retired_pending": None if rng.random() < 0.7 else int(rng.random() < 0.1),
            }
            gpu.spinning = rng.random() < 0.85 if gpu.spinning else rng.random() < 0.08
            if gpu.spinning:
                gpu.fields.update(util_gpu=100, power_mw=20_000)
            self._churn(index, gpu)
            gpu.errors = [
                (rng.choice(FAULTY), rng.choice(FAULTS)) for _ in range(rng.choice((0, 0, 0, 1, 2)))
            ]
            gpu.refused = rng.choice(REFUSED)
            if rng.random() < 0.03:
                self.xids.append((index, rng.choice((13, 31, 48, 79, 94, 7))))
        size_probe = "success" if rng.random() < 0.3 else None
        return State(self.time, self.gpus, list(self.xids), size_probe)

    def _churn(self, index: int, gpu: Gpu) -> None:
        """Processes vanish and appear; memory and SM use change."""
        rng = self.rng
        for pid in [pid for pid in gpu.processes if rng.random() < 0.12]:
            del gpu.processes[pid]
        for process in gpu.processes.values():
            if rng.random() < 0.3:
                process.sm = rng.choice((None, 0, 0, 40, 100, 101))
        while rng.random() < 0.3 and len(gpu.processes) < 6:
            self.next_pid += 1
            used = rng.choice((0, 256 * MiB, 2 * GiB, 20 * GiB, NOT_AVAILABLE, MEMORY_LIMIT))
            mig = rng.choice(gpu.migs) if gpu.migs and rng.random() < 0.7 else None
            gpu.processes[self.next_pid] = Process(
                self.next_pid, used, rng.choice(("C", "G", "CG", "M")), rng.choice((None, 0, 30, 100)), mig
            )


@dataclass
class Truth:
    """What the states written so far contain, per GPU, to judge each alert raised."""

    states: list[State] = field(default_factory=list)

    def add(self, state: State) -> None:
        self.states.append(_frozen(state))

    def now(self) -> State:
        return self.states[-1]


def _frozen(state: State) -> State:
    """A deep copy: the machine goes on mutating its GPUs."""
    gpus = [
        dataclasses.replace(
            gpu,
            static=dict(gpu.static),
            migs=list(gpu.migs),
            fields=dict(gpu.fields),
            processes={pid: dataclasses.replace(p) for pid, p in gpu.processes.items()},
            errors=list(gpu.errors),
        )
        for gpu in state.gpus
    ]
    return State(state.time, gpus, list(state.xids), state.size_probe)


def _number(value: object) -> int | None:
    return value if isinstance(value, int) else None


def _lists_read(gpu: Gpu) -> bool:
    """Whether every process list of the GPU answered (no error on it, not lost)."""
    return not gpu.lost and not any(
        fn in ("*", *PROCESS_LISTS) or fn.startswith("nvmlDeviceGetMPSCompute") for fn, _code in gpu.errors
    )


def _failing(gpu: Gpu, fn: str) -> bool:
    return gpu.lost or any(rule == fn for rule, _code in gpu.errors)


def _holds_memory(gpu: Gpu) -> bool:
    return any(isinstance(p.used, int) and p.used > 0 for p in gpu.processes.values())


def why_not(event: AlertEvent, truth: Truth) -> str | None:
    """None when the state contains the condition of the alert ``event`` raised; else what is missing."""
    now = truth.now()
    gpu = now.gpus[event.gpu_index]
    fields = gpu.fields
    kind = event.kind
    if kind == "lost":
        return None if gpu.lost else "the GPU answers"
    if kind == "health" and (event.subject or "").startswith("xid "):  # raised while lost too
        code = int((event.subject or "").split()[1])
        return None if (event.gpu_index, code) in now.xids else f"no XID {code} sent"
    if gpu.lost:
        return "raised from a lost GPU's figures"
    if kind == "memory":
        if event.mig_index is not None:
            return None if gpu.mig_mode else "no MIG device"
        used, total = _number(fields["memory_used"]), _number(gpu.static["memory_total"])
        if _failing(gpu, "nvmlDeviceGetMemoryInfo") or used is None or not total:
            return "memory not known"
        return None if 100.0 * used / total >= THRESHOLDS.memory_percent else f"memory at {used}/{total}"
    if kind == "thermal":
        temperature, slowdown = _number(fields["temperature"]), _number(gpu.static["temperature_slowdown"])
        if temperature is None or slowdown is None or _failing(gpu, TEMPERATURE_CALL):
            return "temperature not known"
        return None if temperature >= slowdown - THRESHOLDS.thermal_margin_c else f"{temperature} °C"
    if kind == "throttle":
        reasons = _number(fields["clocks_event_reasons"])
        if _failing(gpu, "nvmlDeviceGetCurrentClocksEventReasons"):
            return "reasons not known"
        return None if reasons is not None and reasons & ALERTING_BITS else f"reasons {reasons}"
    if kind == "stall":
        return _why_not_stalled(event.gpu_index, truth)
    if kind == "idle":
        return _why_not_idle(event, truth)
    if kind == "forecast":
        return _why_not_growing(event.gpu_index, truth)
    if kind == "health":
        return _why_not_unhealthy(event, gpu)
    return f"an alert of an unknown kind {kind}"


# Alerts on a level that wobbles are raised only once their condition has held this long (core.analysis.hold).
HELD_KINDS = ("memory", "thermal", "throttle")
HOLD_S = 3.0


def why_not_held(event: AlertEvent, truth: Truth) -> str | None:
    """None when the condition of ``event`` (of a kind held by time) was in every state of the last 3 s, from a
    state at least 3 s old; else the state that breaks the run."""
    if event.kind not in HELD_KINDS:
        return None
    now = truth.now().time
    for n in range(len(truth.states) - 1, -1, -1):
        state = truth.states[n]
        reason = why_not(event, Truth(truth.states[: n + 1]))
        if reason is not None:
            return f"not held {HOLD_S:.0f} s: at {state.time} {reason}"
        if now - state.time >= HOLD_S:
            return None
    return f"not held {HOLD_S:.0f} s: the run is younger"


def _why_not_stalled(index: int, truth: Truth) -> str | None:
    since = truth.now().time - THRESHOLDS.stall_after_s
    for state in reversed(truth.states):
        gpu = state.gpus[index]
        util, power = _number(gpu.fields["util_gpu"]), _number(gpu.fields["power_mw"])
        limit = _number(gpu.static["power_limit_mw"])
        if util is None or power is None or not limit or gpu.lost:
            return f"at {state.time} utilization or power not known"
        if util < THRESHOLDS.stall_utilization_percent or 100.0 * power / limit > THRESHOLDS.stall_power_percent:
            return f"at {state.time} {util}% busy at {power}/{limit} mW"
        if state.time <= since:
            break
    return None if _holds_memory(truth.now().gpus[index]) else "no process holds memory"


def _why_not_idle(event: AlertEvent, truth: Truth) -> str | None:
    pid = int((event.subject or "0@").split("@")[0])
    now = truth.now().gpus[event.gpu_index]
    process = now.processes.get(pid)
    if process is None or not isinstance(process.used, int) or process.used < THRESHOLDS.idle_min_memory_gib * GiB:
        return f"PID {pid} holds no memory"
    since = truth.now().time - THRESHOLDS.idle_after_s
    for state in reversed(truth.states):
        if state.time <= since:  # it may have run then: idle since, for idle_after_s
            break
        seen = state.gpus[event.gpu_index].processes.get(pid)
        if seen is not None and seen.sm and not state.gpus[event.gpu_index].lost:
            return f"PID {pid} ran at {state.time}"
    return None


def _why_not_growing(index: int, truth: Truth) -> str | None:
    used = [_number(state.gpus[index].fields["memory_used"]) for state in truth.states[-200:]]
    known = [value for value in used if value is not None]
    return None if len(known) >= 2 and known[-1] > min(known) else "memory never grew"


def _why_not_unhealthy(event: AlertEvent, gpu: Gpu) -> str | None:
    subject = event.subject or ""
    fields = gpu.fields
    # The uncorrected ECC counts and row remapping come in the tick's field-value batch (with energy and
    # NVLink), and from their own calls where that batch fails: unknown only when both fail.
    batch_failed = _failing(gpu, "nvmlDeviceGetFieldValues")
    if batch_failed and _failing(gpu, "nvmlDeviceGetTotalEccErrors") and subject == "ecc":
        return "ECC not known"
    remap_known = not (batch_failed and _failing(gpu, "nvmlDeviceGetRemappedRows"))
    checks = {
        "ecc": bool(_number(fields["ecc_volatile"])),
        "remap_pending": bool(fields["remap_pending"]) and remap_known,
        "remap_failure": bool(fields["remap_failure"]) and remap_known,
        "retired_pending": bool(fields["retired_pending"]),
    }
    return None if checks.get(subject, False) else f"{subject} not in the state"


def unattributed_wrongly(snapshot: Snapshot, truth: Truth, diagnoses: object) -> list[str]:
    """GPUs whose "(no process)" problem the state does not contain: a list unread, or the memory accounted."""
    wrong = []
    for problem in problems(snapshot, diagnoses):  # type: ignore[arg-type]
        if problem.kind != "unattributed" or problem.mig_index is not None:
            continue
        gpu = truth.now().gpus[problem.gpu_index]
        if not _lists_read(gpu):
            wrong.append(f"GPU {problem.gpu_index}: a process list was not read")
            continue
        if gpu.mig_mode:
            continue  # MIG devices' memory counts too: judged by the MIG device's own problem
        used = _number(gpu.fields["memory_used"])
        held = [p.used for p in gpu.processes.values()]
        if used is None or any(not isinstance(h, int) for h in held):
            wrong.append(f"GPU {problem.gpu_index}: a figure it needs is unknown")
        elif used - sum(h for h in held if isinstance(h, int)) <= THRESHOLDS.unattributed_min_gib * GiB:
            wrong.append(f"GPU {problem.gpu_index}: the processes hold the memory used")
    return wrong


def _strict_json(text: str) -> object:
    def refuse(constant: str) -> object:
        raise ValueError(f"{constant} is not JSON")

    return json.loads(text, parse_constant=refuse)


CAMEL_CASE_LINT = "label names should be written in 'snake_case' not 'camelCase'"


def _promtool(text: str) -> str | None:
    """promtool's complaint about the exposition ``text``; None when it passes."""
    result = subprocess.run(
        ["promtool", "check", "metrics"], input=text, capture_output=True, text=True, timeout=30, check=False
    )
    if result.returncode == 0:
        return None
    # DCGM's own label names (modelName, UUID, Hostname) are its contract, which dashboards read: promtool's
    # lint about them (exit 3, lint only) is no fault of the text (see test_cluster_dcgm).
    complaints = [
        line for line in (result.stdout + result.stderr).splitlines()
        if not (line.startswith("DCGM_FI_") and line.endswith(CAMEL_CASE_LINT))
    ]
    return None if result.returncode == 3 and not complaints else result.stdout + result.stderr


@dataclass
class Where:
    """The seed and state a failure happened at, written out only when one does."""

    number: int
    state: State

    def __repr__(self) -> str:
        return f"seed {SEED}, state {self.number}:\n{self.state.scenario().render()}"


@pytest.fixture
def sampler(fake_nvml: FakeNvml) -> Iterator[tuple[Sampler, list[float]]]:
    fake_nvml.write(Scenario().gpu())
    fake_nvml.load()
    clock = [0.0]
    sampler = Sampler(NvmlSource(deadline_s=5.0), clock=lambda: clock[0])
    sampler.open()
    yield sampler, clock
    sampler.close()


def test_no_driver_state_crashes_gputop_breaks_an_output_or_raises_a_false_alarm(
    fake_nvml: FakeNvml, sampler: tuple[Sampler, list[float]]
) -> None:
    reader, clock = sampler
    machine, truth = Machine(SEED), Truth()
    watcher, collector = Watcher(THRESHOLDS), SnapshotCollector(hostname="node")
    raised: dict[str, int] = {}
    promtool = shutil.which("promtool")
    for number in range(STATES):
        state = machine.step()
        truth.add(state)
        fake_nvml.write(state.scenario())
        clock[0] = state.time
        where = Where(number, state)
        snapshot = reader.sample()
        foresight = watcher.update(snapshot)
        for event in foresight.events:
            if event.cleared or event.updated:
                continue
            raised[event.kind] = raised.get(event.kind, 0) + 1
            reason = why_not(event, truth) or why_not_held(event, truth)
            assert reason is None, f"false alarm {event.message!r}: {reason}; {where!r}"
        assert unattributed_wrongly(snapshot, truth, foresight.diagnoses) == [], where

        document = snapshot_to_dict(snapshot, foresight.forecasts, foresight.events, foresight.diagnoses)
        parsed = _strict_json(dumps(document))
        assert isinstance(parsed, dict) and len(parsed["gpus"]) == GPUS, where
        assert snapshot_from_dict(parsed).gpus == snapshot.gpus, where  # a recording replays what was seen
        render_text(snapshot, colour=True, width=80, alerts=tuple(watcher.monitor.active.values()),
                    diagnoses=foresight.diagnoses)  # fmt: skip
        collector.update(
            snapshot, {i: f.seconds_to_full for i, f in foresight.forecasts.gpus.items()}, foresight.diagnoses
        )
        exposition = generate_latest(make_registry(collector)).decode()
        # A figure gputop does not have is left out, never written as NaN.
        assert [line for line in exposition.splitlines() if line.endswith(" NaN")] == [], where
        if number % 50 == 0 or number == STATES - 1:  # the slower checks, on some states
            families = list(text_string_to_metric_families(exposition))
            assert all(not math.isnan(sample.value) for family in families for sample in family.samples), where
            if promtool is not None:
                assert _promtool(exposition) is None, where
    # The property is not empty: the run raised alerts of these kinds, each checked against the state.
    assert {"lost", "memory", "health", "throttle"} <= set(raised), raised
