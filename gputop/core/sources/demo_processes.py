"""The demo machine's processes: the workloads it runs (a training job, a vLLM server, a LoRA finetune
whose memory grows, dave's notebook that sits idle on GPU 3, a launcher and its workers, short
sweeps), how their memory moves each step, and signals and /proc facts, simulated.

Their owners, as gputop reads them on a real machine: the training and its launcher's workers in a
Kubernetes pod (``ml/llama-train``), the vLLM server and its evaluation in a Docker container
(``vllm-mistral``), the finetune and the sweeps in Slurm jobs; the rest belong to their users alone.
"""

from __future__ import annotations

import random
import signal as signal_module
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

from gputop.core.host.procdetail import ProcessDetail
from gputop.core.host.signals import Outcome, SignalResult, signal_name
from gputop.core.model import Job, ProcessIdentity, ProcessSample
from gputop.core.sources.demo_detail import SimulatedProcess, simulated_detail
from gputop.core.sources.demo_machine import GIB, MIB, MIG_PROFILES, STALLED_GPU, capacity, is_mig, mig_uuid, model_of


class Workload(NamedTuple):
    user: str
    command: str
    container: str | None
    type: str
    base_gib: float
    growth_mib_per_step: float
    lifetime_steps: int  # 0: runs for ever
    idle_for_s: float = 0.0  # > 0: holds its memory without running, since this long before the start
    workers: int = 0  # a launcher (torchrun) that holds no GPU memory, with this many workers on GPUs
    job: Job | None = None  # the Slurm job it runs in


class ContainerFacts(NamedTuple):
    """What the cgroup (and Docker's socket, the kubelet's logs) say of a container."""

    name: str
    runtime: str
    id: str  # the whole id, as the runtime names it
    pod_uid: str | None = None


POD_UID = "3f2a9c1e-7b4d-4c55-9e1a-0d6b2f8a7c31"
POD_NAME = "ml/llama-train"
_POD = f"k8s:{POD_UID}"
_DOCKER = "docker:8c1d2e3f4a5b"
CONTAINERS = {
    _POD: ContainerFacts(name=POD_NAME, runtime="containerd", id="a41f7c02e9d3" + "5b" * 26, pod_uid=POD_UID),
    _DOCKER: ContainerFacts(name="vllm-mistral", runtime="docker", id="8c1d2e3f4a5b" + "9e" * 26),
}
FINETUNE_JOB = Job(scheduler="slurm", id="4242", step="0", name="lora-ft", user="carol", partition="gpu",
                   account="nlp")


def sweep_job(trial: int) -> Job:
    """frank's sweeps, one batch job a trial (an array's tasks too have a job id each: the cgroup's)."""
    return Job(scheduler="slurm", id=str(4300 + trial), step="batch", name="sweep", user="frank", partition="gpu",
               account="nlp")


WORKLOADS = (
    Workload(
        user="alice",
        command="python train.py --model llama-7b --bs 16",
        container=_POD,
        type="C",
        base_gib=61.0,
        growth_mib_per_step=0.0,
        lifetime_steps=0,
    ),
    Workload(
        user="bob",
        command="python -m vllm.entrypoints.openai.api_server --model mistral-7b",
        container=_DOCKER,
        type="C",
        base_gib=70.5,
        growth_mib_per_step=0.0,
        lifetime_steps=0,
    ),
    Workload(
        user="carol",
        command="python finetune.py --lora r=16",
        container=None,
        type="C",
        base_gib=9.0,
        growth_mib_per_step=24.0,
        lifetime_steps=0,
        job=FINETUNE_JOB,
    ),
    Workload(
        user="dave",
        command="jupyter-lab --no-browser --port 8888",
        container=None,
        type="C",
        base_gib=3.2,
        growth_mib_per_step=0.0,
        lifetime_steps=0,
        idle_for_s=25 * 60.0,
    ),
    Workload(
        user="root",
        command="/usr/lib/xorg/Xorg vt1 -displayfd 3",
        container=None,
        type="G",
        base_gib=0.4,
        growth_mib_per_step=0.0,
        lifetime_steps=0,
    ),
    Workload(
        user="erin",
        command="blender -b scene.blend -a",
        container=None,
        type="C+G",
        base_gib=6.5,
        growth_mib_per_step=0.0,
        lifetime_steps=0,
    ),
    Workload(
        user="alice",
        command="torchrun --nproc-per-node 2 pretrain.py",
        container=_POD,
        type="C",
        base_gib=1.0,
        growth_mib_per_step=0.0,
        lifetime_steps=0,
        workers=2,
    ),
    Workload(
        user="bob",
        command="python eval.py --suite mmlu",
        container=_DOCKER,
        type="C",
        base_gib=12.0,
        growth_mib_per_step=0.0,
        lifetime_steps=40,
    ),
    Workload(
        user="frank",
        command="python sweep.py --trial 17",
        container=None,
        type="C",
        base_gib=5.0,
        growth_mib_per_step=4.0,
        lifetime_steps=25,
        job=sweep_job(17),
    ),
)


@dataclass(slots=True)
class SimProcess:
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
    job: Job | None = None

    @property
    def shown_memory(self) -> int:
        return int(max(64 * MIB, self.memory + self.jitter))


class DemoProcesses:
    """The processes on the demo's GPUs, moved one step at a time by the machine's random numbers."""

    def __init__(self, gpu_count: int, rng: random.Random, clock: Callable[[], float]) -> None:
        self._gpu_count = gpu_count
        self._random = rng
        self._clock = clock
        self._next_pid = 41200
        self.running: dict[int, SimProcess] = {}

    def start(self, now: float) -> None:
        """Start every workload, an hour or more before ``now``, spread over the GPUs."""
        for slot, workload in enumerate(WORKLOADS):
            gpu = slot % self._gpu_count
            self.spawn(workload, gpu, now - 3600 * (slot + 1) * 0.7, step=0)

    def clear(self) -> None:
        self.running.clear()

    def on_gpu(self, index: int) -> list[SimProcess]:
        return [p for p in self.running.values() if p.gpu == index]

    def spawn(self, workload: Workload, gpu: int, started: float, step: int) -> None:
        """Start ``workload`` on ``gpu`` (a launcher: its workers on the GPUs from ``gpu`` on)."""
        if not workload.workers:
            self._spawn_process(workload, gpu, started, step)
            return
        launcher = self._next_pid
        self._next_pid += 1
        user, command, container, kind, base_gib, growth_mib, lifetime, idle_for_s, _workers, job = workload
        for rank in range(workload.workers):
            script = f"python -u {command.split()[-1]} --local-rank {rank}"
            worker = Workload(
                user=user,
                command=script,
                container=container,
                type=kind,
                base_gib=base_gib,
                growth_mib_per_step=growth_mib,
                lifetime_steps=lifetime,
                idle_for_s=idle_for_s,
                job=job,
            )
            self._spawn_process(
                worker, (gpu + rank) % self._gpu_count, started + 2.0, step, (launcher, workload.command, rank)
            )

    def _spawn_process(
        self, workload: Workload, gpu: int, started: float, step: int, parent: tuple[int, str, int] | None = None
    ) -> None:
        user, command, container, kind, base_gib, growth_mib, lifetime, idle_for_s, _workers, job = workload
        mig = None
        if is_mig(gpu):
            mig = sum(1 for p in self.running.values() if p.gpu == gpu) % len(MIG_PROFILES)
            base_gib = min(base_gib, MIG_PROFILES[mig][1] / GIB * 0.6)
        memory = min(base_gib * GIB, model_of(gpu).memory_total * 0.85)
        self.running[self._next_pid] = SimProcess(
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
            ends_at=step + lifetime if lifetime else None,
            cpu=self._random.uniform(20, 180) if kind != "G" else 2.0,
            rss=int(self._random.uniform(1.5, 24) * GIB),
            last_active=self._clock() - idle_for_s if idle_for_s else None,
            job=job,
        )
        if parent is not None:
            simulated = self.running[self._next_pid]
            simulated.parent_pid, simulated.parent_command, simulated.rank = parent
        self._next_pid += self._random.randint(3, 97)

    def advance(self, step: int) -> None:
        """Step ``step``: jobs end, memory grows or jitters, CPU drifts, and now and then a short job starts."""
        now = self._clock()
        for pid, process in list(self.running.items()):
            if process.exiting or (process.ends_at is not None and step >= process.ends_at):
                del self.running[pid]
                continue
            process.memory = min(capacity(process.gpu, process.mig) * 0.97, process.memory + process.growth)
            # Allocator noise around the working set, not a random walk: a flat job stays flat,
            # and a hung one (on the stalled GPU) does not move at all.
            jitter = self._random.uniform(-32, 32) * MIB
            process.jitter = 0.0 if process.gpu == STALLED_GPU else jitter
            process.cpu = max(0.0, min(400.0, process.cpu + self._random.uniform(-8, 8)))
        # Every so often a short job starts somewhere.
        if step % 15 == 0:
            gpu = self._random.randrange(self._gpu_count)
            if gpu == STALLED_GPU:
                gpu = (gpu + 1) % self._gpu_count
            trial = 17 + step // 15
            self.spawn(
                Workload(
                    user="frank",
                    command=f"python sweep.py --trial {trial}",
                    container=None,
                    type="C",
                    base_gib=4.0,
                    growth_mib_per_step=6.0,
                    lifetime_steps=30,
                    job=sweep_job(trial),
                ),
                gpu,
                now,
                step,
            )

    @staticmethod
    def sample(process: SimProcess, utilization: float) -> ProcessSample:
        """What the driver and /proc say of ``process`` on a GPU this busy."""
        idle = process.last_active is not None
        facts = CONTAINERS.get(process.container or "")
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
            container_name=None if facts is None else facts.name,
            container_runtime=None if facts is None else facts.runtime,
            container_id=None if facts is None else facts.id,
            pod_uid=None if facts is None else facts.pod_uid,
            job=process.job,
            visible=True,
            parent_pid=process.parent_pid,
            parent_command=process.parent_command,
        )

    def signal(self, identity: ProcessIdentity, signal_number: int) -> SignalResult:
        """Signal a simulated process: SIGTERM, SIGINT and SIGKILL end it at the next step."""
        pid, started = identity
        name = signal_name(signal_number)
        process = self.running.get(pid)
        if process is None or process.exiting:
            return SignalResult(identity, name, Outcome.GONE, f"PID {pid} is already gone")
        if started is not None and abs(process.started - started) > 0.05:
            return SignalResult(
                identity, name, Outcome.REUSED, f"PID {pid} now belongs to another process: not signalled"
            )
        if signal_number in (signal_module.SIGTERM, signal_module.SIGINT, signal_module.SIGKILL):
            process.exiting = True
        return SignalResult(identity, name, Outcome.SENT, f"{name} sent to PID {pid} (simulated)")

    def detail(self, identity: ProcessIdentity) -> ProcessDetail:
        """What /proc would say about a simulated process."""
        pid, started = identity
        process = self.running.get(pid)
        if process is None or process.exiting:
            return ProcessDetail(pid, gone=f"PID {pid} has exited")
        if started is not None and abs(process.started - started) > 0.05:
            return ProcessDetail(pid, gone=f"PID {pid} now belongs to another process: the one shown has exited")
        device = str(process.gpu) if process.mig is None else mig_uuid(process.gpu, process.mig)
        return simulated_detail(
            SimulatedProcess(
                pid=pid,
                user=process.user,
                command=process.command,
                container=process.container,
                gpu=process.gpu,
                device=device,
                type=process.type,
                parent_pid=process.parent_pid,
                parent_command=process.parent_command,
                rank=process.rank,
            )
        )
