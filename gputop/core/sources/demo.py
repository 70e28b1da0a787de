"""A deterministic simulated machine, so gputop can be tried (and screenshotted) without a GPU.

Each call to ``sample()`` advances the simulation by one step; the same seed
gives the same sequence. Processes are simulated: signals act on the
simulation only.
"""

from __future__ import annotations

import math
import random
import signal as signal_module
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

from gputop.core.actions import Outcome, SignalResult, signal_name
from gputop.core.model import (
    GpuHealth,
    GpuSample,
    HostSample,
    MigSample,
    ProcessIdentity,
    ProcessSample,
    RemappedRows,
    XidEvent,
)
from gputop.core.procdetail import ProcessDetail
from gputop.core.sources.demo_detail import SimulatedProcess, simulated_detail

GIB = 1024**3
MIB = 1024**2


@dataclass(frozen=True, slots=True)
class _Model:
    name: str
    memory_total: int
    power_limit: float
    slowdown: float
    shutdown: float
    sm_clock_max: int
    memory_clock: int
    has_fan: bool


_MODELS = (
    _Model("NVIDIA H100 80GB HBM3", 80 * GIB, 700.0, 87.0, 92.0, 1980, 2619, False),
    _Model("NVIDIA H100 80GB HBM3", 80 * GIB, 700.0, 87.0, 92.0, 1980, 2619, False),
    _Model("NVIDIA A100-SXM4-40GB", 40 * GIB, 400.0, 88.0, 93.0, 1410, 1215, False),
    _Model("NVIDIA GeForce RTX 4090", 24 * GIB, 450.0, 85.0, 90.0, 2520, 10501, True),
    _Model("NVIDIA L40S", 48 * GIB, 350.0, 89.0, 94.0, 2520, 9001, True),
    _Model("NVIDIA A10", 24 * GIB, 150.0, 88.0, 93.0, 1695, 6251, False),
    _Model("Tesla V100-SXM2-32GB", 32 * GIB, 300.0, 86.0, 90.0, 1530, 877, False),
    _Model("NVIDIA H200", 141 * GIB, 700.0, 87.0, 92.0, 1980, 3201, False),
)

# What the demo shows of each diagnosis: GPU 1's job hangs in a collective (STALLED?), GPU 2
# had an uncorrectable memory error (health), GPU 3 holds memory no listed process accounts
# for (a container without --pid=host) and dave's notebook on it sits idle; GPU 0 hits its
# power cap when busy (THROTTLED · power cap).
_STALLED_GPU = 1
_SICK_GPU = 2
_UNATTRIBUTED = {3: int(4.5 * GIB)}
_HEALTHY = GpuHealth(0, 0, RemappedRows(0, 0, False, False), None, ())
# Power at or above this share of the limit holds the clocks down: the power cap.
_POWER_CAP_SHARE = 0.85


def _reasons(busy: bool, stalled: bool, power: float, limit: float) -> tuple[str, ...]:
    if not busy:
        return ("gpu_idle",)
    if not stalled and power >= _POWER_CAP_SHARE * limit:
        return ("sw_power_cap",)
    return ()


# MIG devices of the A100 (GPU 2): profile name, memory.
_MIG_PROFILES = (("3g.20gb", 20 * GIB), ("2g.10gb", 10 * GIB), ("1g.5gb", 5 * GIB))


class _Workload(NamedTuple):
    user: str
    command: str
    container: str | None
    type: str
    base_gib: float
    growth_mib_per_step: float
    lifetime_steps: int  # 0: runs for ever
    idle_for_s: float = 0.0  # > 0: holds its memory without running, since this long before the start
    workers: int = 0  # a launcher (torchrun) that holds no GPU memory, with this many workers on GPUs


_POD = "k8s:3f2a9c1e-7b4d-4c55-9e1a-0d6b2f8a7c31"
_WORKLOADS = (
    _Workload("alice", "python train.py --model llama-7b --bs 16", _POD, "C", 61.0, 0.0, 0),
    _Workload(
        "bob",
        "python -m vllm.entrypoints.openai.api_server --model mistral-7b",
        "docker:8c1d2e3f4a5b",
        "C",
        70.5,
        0.0,
        0,
    ),
    _Workload("carol", "python finetune.py --lora r=16", None, "C", 9.0, 24.0, 0),
    _Workload("dave", "jupyter-lab --no-browser --port 8888", None, "C", 3.2, 0.0, 0, 25 * 60.0),
    _Workload("root", "/usr/lib/xorg/Xorg vt1 -displayfd 3", None, "G", 0.4, 0.0, 0),
    _Workload("erin", "blender -b scene.blend -a", None, "C+G", 6.5, 0.0, 0),
    _Workload("alice", "torchrun --nproc-per-node 2 pretrain.py", _POD, "C", 1.0, 0.0, 0, workers=2),
    _Workload("bob", "python eval.py --suite mmlu", "docker:8c1d2e3f4a5b", "C", 12.0, 0.0, 40),
    _Workload("frank", "python sweep.py --trial 17", None, "C", 5.0, 4.0, 25),
)


@dataclass(slots=True)
class _SimProcess:
    pid: int
    gpu: int
    mig: int | None
    user: str
    command: str
    container: str | None
    type: str
    memory: float
    growth: float
    started: float
    ends_at: int | None
    cpu: float
    rss: int
    exiting: bool = False
    jitter: float = 0.0
    last_active: float | None = None  # set for a process that sits idle: when it last ran
    parent_pid: int | None = None
    parent_command: str | None = None
    rank: int | None = None  # a launcher's worker: its rank

    @property
    def shown_memory(self) -> int:
        return int(max(64 * MIB, self.memory + self.jitter))


class DemoSource:
    """The simulated machine behind ``gputop --demo``."""

    name = "demo"
    simulated = True

    def __init__(
        self,
        gpu_count: int = 4,
        seed: int = 7,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if not 1 <= gpu_count <= 16:
            raise ValueError("the demo simulates 1 to 16 GPUs")
        self._gpu_count = gpu_count
        self._random = random.Random(seed)
        self._clock = clock
        self._step = 0
        self._next_pid = 41200
        self._processes: dict[int, _SimProcess] = {}
        self._lost: set[int] = set()
        self._phase = [self._random.uniform(0, math.tau) for _ in range(gpu_count)]
        self._temperature: dict[int, float] = {}
        self._opened = 0.0

    @property
    def driver_version(self) -> str | None:
        return "560.35.03"

    @property
    def cuda_driver_version(self) -> str | None:
        return "12.6"

    def open(self) -> None:
        now = self._opened = self._clock()
        for slot, workload in enumerate(_WORKLOADS):
            gpu = slot % self._gpu_count
            self._spawn(workload, gpu, now - 3600 * (slot + 1) * 0.7)

    def close(self) -> None:
        self._processes.clear()

    def _model(self, index: int) -> _Model:
        return _MODELS[index % len(_MODELS)]

    def _is_mig(self, index: int) -> bool:
        return index == 2

    def _spawn(self, workload: _Workload, gpu: int, started: float) -> None:
        if not workload.workers:
            self._spawn_process(workload, gpu, started)
            return
        launcher = self._next_pid
        self._next_pid += 1
        for rank in range(workload.workers):
            worker = workload._replace(command=f"python -u {workload.command.split()[-1]} --local-rank {rank}")
            self._spawn_process(
                worker, (gpu + rank) % self._gpu_count, started + 2.0, (launcher, workload.command, rank)
            )

    def _spawn_process(
        self, workload: _Workload, gpu: int, started: float, parent: tuple[int, str, int] | None = None
    ) -> None:
        user, command, container, kind, base_gib, growth_mib, lifetime, idle_for_s, _workers = workload
        mig = None
        if self._is_mig(gpu):
            mig = sum(1 for p in self._processes.values() if p.gpu == gpu) % len(_MIG_PROFILES)
            base_gib = min(base_gib, _MIG_PROFILES[mig][1] / GIB * 0.6)
        memory = min(base_gib * GIB, self._model(gpu).memory_total * 0.85)
        self._processes[self._next_pid] = _SimProcess(
            pid=self._next_pid,
            gpu=gpu,
            mig=mig,
            user=user,
            command=command,
            container=container,
            type=kind,
            memory=memory,
            growth=growth_mib * MIB,
            started=started,
            ends_at=self._step + lifetime if lifetime else None,
            cpu=self._random.uniform(20, 180) if kind != "G" else 2.0,
            rss=int(self._random.uniform(1.5, 24) * GIB),
            last_active=self._clock() - idle_for_s if idle_for_s else None,
        )
        if parent is not None:
            simulated = self._processes[self._next_pid]
            simulated.parent_pid, simulated.parent_command, simulated.rank = parent
        self._next_pid += self._random.randint(3, 97)

    def _advance(self) -> None:
        self._step += 1
        now = self._clock()
        for pid, process in list(self._processes.items()):
            if process.exiting or (process.ends_at is not None and self._step >= process.ends_at):
                del self._processes[pid]
                continue
            capacity = self._capacity(process)
            process.memory = min(capacity * 0.97, process.memory + process.growth)
            # Allocator noise around the working set, not a random walk: a flat job stays flat,
            # and a hung one (on the stalled GPU) does not move at all.
            jitter = self._random.uniform(-32, 32) * MIB
            process.jitter = 0.0 if process.gpu == _STALLED_GPU else jitter
            process.cpu = max(0.0, min(400.0, process.cpu + self._random.uniform(-8, 8)))
        # Every so often a short job starts somewhere.
        if self._step % 15 == 0:
            gpu = self._random.randrange(self._gpu_count)
            if gpu == _STALLED_GPU:
                gpu = (gpu + 1) % self._gpu_count
            self._spawn(
                _Workload("frank", f"python sweep.py --trial {17 + self._step // 15}", None, "C", 4.0, 6.0, 30),
                gpu,
                now,
            )

    def _capacity(self, process: _SimProcess) -> float:
        if process.mig is not None:
            return float(_MIG_PROFILES[process.mig][1])
        return float(self._model(process.gpu).memory_total)

    def _process_sample(self, process: _SimProcess, utilization: float) -> ProcessSample:
        idle = process.last_active is not None
        return ProcessSample(
            pid=process.pid,
            gpu_index=process.gpu,
            type=process.type,
            gpu_memory=process.shown_memory,
            sm_utilization=None if process.type == "G" else 0.0 if idle else round(utilization * 0.8, 0),
            mig_index=process.mig,
            sm_last_active=process.last_active,
            started=process.started,
            user=process.user,
            name=process.command.split()[0].rsplit("/", 1)[-1],
            command=process.command,
            cpu_percent=round(process.cpu, 1),
            host_memory=process.rss,
            container=process.container,
            visible=True,
            parent_pid=process.parent_pid,
            parent_command=process.parent_command,
        )

    def sample(self) -> tuple[GpuSample, ...]:
        self._advance()
        return tuple(self._gpu(index) for index in range(self._gpu_count))

    def _gpu(self, index: int) -> GpuSample:
        model = self._model(index)
        uuid = f"GPU-{index:08x}-d3m0-4{index:03x}-8000-{0xC0FFEE + index:012x}"
        if index in self._lost:
            return GpuSample(index=index, name=model.name, uuid=uuid, lost=True)
        processes = [p for p in self._processes.values() if p.gpu == index]
        wave = math.sin(self._step / 9 + self._phase[index])
        busy = bool(processes)
        utilization = max(0.0, min(100.0, (72 + 25 * wave) if busy else 0.0))
        utilization = round(utilization + (self._random.uniform(-3, 3) if busy else 0), 0)
        utilization = max(0.0, min(100.0, utilization))
        power = round(60 + (model.power_limit - 90) * utilization / 100 + self._random.uniform(-5, 5), 1)
        stalled = index == _STALLED_GPU and busy
        if stalled:
            # A job spinning in a collective: the GPU is "busy" but draws next to nothing.
            utilization, power = 100.0, round(model.power_limit * 0.2 + power / 100, 1)
        # A card's temperature follows its load slowly, as its heat sink does.
        heat = 20.0 if stalled else utilization
        settled = 34 + (model.slowdown - 38) * heat / 100
        previous = self._temperature.get(index, settled)
        self._temperature[index] = previous + 0.08 * (settled - previous)
        temperature = round(self._temperature[index], 0)
        used_by_processes = sum(p.shown_memory for p in processes)
        reserved = 512 * MIB
        ghost = _UNATTRIBUTED.get(index, 0)
        used = min(model.memory_total - reserved, used_by_processes + 600 * MIB + ghost)
        mig_devices: tuple[MigSample, ...] = ()
        plain = processes
        if self._is_mig(index):
            mig_devices = tuple(
                self._mig(index, slot, [p for p in processes if p.mig == slot], utilization)
                for slot in range(len(_MIG_PROFILES))
            )
            plain = [p for p in processes if p.mig is None]
        return GpuSample(
            index=index,
            name=model.name,
            uuid=uuid,
            pci_bus_id=f"00000000:{0x18 + index * 0x10:02X}:00.0",
            memory_total=model.memory_total,
            memory_used=used,
            memory_free=model.memory_total - used - reserved,
            memory_reserved=reserved,
            utilization_gpu=utilization,
            utilization_memory=round(utilization * 0.6, 0),
            utilization_encoder=0.0,
            utilization_decoder=0.0,
            temperature=temperature,
            temperature_slowdown=model.slowdown,
            temperature_shutdown=model.shutdown,
            fan_speed=round(30 + utilization * 0.5, 0) if model.has_fan else None,
            power_draw=power,
            power_limit=model.power_limit,
            clock_sm=int(model.sm_clock_max * (0.5 + utilization / 200)) if busy else 210,
            clock_memory=model.memory_clock,
            clock_sm_max=model.sm_clock_max,
            clock_memory_max=model.memory_clock,
            clock_event_reasons=_reasons(busy, stalled, power, model.power_limit),
            pstate=0 if busy else 8,
            pcie_rx=round(utilization * 1.3e8, 0),
            pcie_tx=round(utilization * 4.1e7, 0),
            mig_mode=self._is_mig(index),
            health=self._health(index),
            mig_devices=mig_devices,
            processes=tuple(self._process_sample(p, utilization) for p in plain),
        )

    def _health(self, index: int) -> GpuHealth:
        if index != _SICK_GPU:
            return _HEALTHY
        # An uncorrectable error an hour ago: a row remap waits for a reset, XID 94 stopped a job.
        return GpuHealth(1, 1, RemappedRows(0, 1, True, False), None, (XidEvent(94, self._opened - 600.0),))

    def _mig(self, gpu: int, slot: int, processes: list[_SimProcess], utilization: float) -> MigSample:
        profile, total = _MIG_PROFILES[slot]
        used = min(total, sum(p.shown_memory for p in processes) + 40 * MIB)
        return MigSample(
            index=slot,
            uuid=f"MIG-{gpu:04x}{slot:04x}-d3m0-5000-8000-{0xBEEF00 + slot:012x}",
            name=f"{self._model(gpu).name} MIG {profile}",
            gpu_instance_id=slot + 1,
            compute_instance_id=0,
            memory_total=total,
            memory_used=used,
            memory_free=total - used,
            processes=tuple(self._process_sample(p, utilization) for p in processes),
        )

    def sample_host(self) -> HostSample | None:
        wave = math.sin(self._step / 7)
        return HostSample(
            cpu_percent=round(38 + 12 * wave + self._random.uniform(-2, 2), 1),
            memory_total=1024 * GIB,
            memory_used=int((412 + 20 * wave) * GIB),
            swap_total=64 * GIB,
            swap_used=int(1.5 * GIB),
            load_average=(round(24 + 4 * wave, 2), 22.5, 20.1),
            net_rx_rate=round(1.2e8 + 3e7 * wave, 0),
            net_tx_rate=round(4.5e7 - 1e7 * wave, 0),
        )

    def signal(self, identity: ProcessIdentity, signal_number: int) -> SignalResult | None:
        pid, started = identity
        name = signal_name(signal_number)
        process = self._processes.get(pid)
        if process is None or process.exiting:
            return SignalResult(identity, name, Outcome.GONE, f"PID {pid} is already gone")
        if started is not None and abs(process.started - started) > 0.05:
            return SignalResult(
                identity, name, Outcome.REUSED, f"PID {pid} now belongs to another process: not signalled"
            )
        if signal_number in (signal_module.SIGTERM, signal_module.SIGINT, signal_module.SIGKILL):
            process.exiting = True
        return SignalResult(identity, name, Outcome.SENT, f"{name} sent to PID {pid} (simulated)")

    def process_detail(self, identity: ProcessIdentity) -> ProcessDetail | None:
        """What /proc would say about a simulated process."""
        pid, started = identity
        process = self._processes.get(pid)
        if process is None or process.exiting:
            return ProcessDetail(pid, gone=f"PID {pid} has exited")
        if started is not None and abs(process.started - started) > 0.05:
            return ProcessDetail(pid, gone=f"PID {pid} now belongs to another process: the one shown has exited")
        device = str(process.gpu)
        if process.mig is not None:
            device = f"MIG-{process.gpu:04x}{process.mig:04x}-d3m0-5000-8000-{0xBEEF00 + process.mig:012x}"
        return simulated_detail(
            SimulatedProcess(
                pid,
                process.user,
                process.command,
                process.container,
                process.gpu,
                device,
                process.type,
                process.parent_pid,
                process.parent_command,
                process.rank,
            )
        )
